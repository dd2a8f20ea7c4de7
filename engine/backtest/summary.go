package backtest

import (
	"cmp"
	"slices"
	"sort"
	"time"

	"github.com/prometheus/prometheus/model/labels"
)

func sortIntervals(ivs []Interval) {
	slices.SortStableFunc(ivs, func(a, b Interval) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return cmp.Compare(labels.FromMap(a.Labels).String(), labels.FromMap(b.Labels).String())
	})
}

// summarise fills the counts of a rule report from its intervals.
func summarise(rr *RuleReport, o *Options) {
	lastEnd := map[string]time.Time{}
	for _, iv := range rr.Firing {
		rr.Fired++
		if !iv.Open {
			rr.Resolved++
		}
		rr.TimeFiring += iv.Duration
		rr.Longest = max(rr.Longest, iv.Duration)
		key := labels.FromMap(iv.Labels).String()
		if end, ok := lastEnd[key]; ok && iv.Start.Sub(end) < o.FlapWindow {
			rr.Flaps++
		}
		lastEnd[key] = iv.End
	}
	rr.LabelSets = len(lastEnd)
	rr.Notifications = countNotifications(rr.Firing, o.Grouping, o.To)
}

// countNotifications replays Alertmanager's aggregation group for the
// rule's alerts (one group: group_by [alertname]) and counts the
// notifications it would flush:
//
//   - the first firing alert opens the group; it flushes group_wait later;
//   - after that the group flushes every group_interval; a flush notifies
//     when the set of firing alerts changed since the last notification,
//     or when alerts resolved since then (with send_resolved), or when
//     repeat_interval passed since the last notification while alerts fire;
//   - when nothing fires and every resolution was notified, the group ends.
//
// Flushes after to are not counted; alerts still firing at to are not
// resolved.
func countNotifications(firing []Interval, g Grouping, to time.Time) int {
	type event struct {
		t     time.Time
		key   string
		start bool
	}
	var evs []event
	for _, iv := range firing {
		k := labels.FromMap(iv.Labels).String()
		evs = append(evs, event{t: iv.Start, key: k, start: true})
		if !iv.Open {
			evs = append(evs, event{t: iv.End, key: k})
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].t.Before(evs[j].t) })

	var (
		n          int
		active     = map[string]int{} // firing alerts (a key can overlap itself only through duplicates)
		resolved   bool               // resolutions since the last notification
		notified   string             // firing set at the last notification
		lastNotify time.Time
		groupOpen  bool
		next       time.Time
		i          int
	)
	firingSet := func() string {
		keys := make([]string, 0, len(active))
		for k, c := range active {
			if c > 0 {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		out := ""
		for _, k := range keys {
			out += k + "\n"
		}
		return out
	}
	for i < len(evs) || groupOpen {
		// Apply every event up to the next flush (or the next event when
		// no group is open).
		if !groupOpen {
			e := evs[i]
			if !e.start {
				i++
				continue
			}
			groupOpen, next = true, e.t.Add(g.GroupWait)
		}
		if next.After(to) {
			break
		}
		for i < len(evs) && !evs[i].t.After(next) {
			e := evs[i]
			if e.start {
				active[e.key]++
			} else {
				active[e.key]--
				resolved = true
			}
			i++
		}
		set := firingSet()
		switch {
		case set != notified && set != "":
			n++
			notified, lastNotify, resolved = set, next, false
		case resolved && !g.NoResolved:
			n++
			notified, lastNotify, resolved = set, next, false
		case set != "" && next.Sub(lastNotify) >= g.RepeatInterval:
			n++
			lastNotify = next
		}
		if set == "" {
			// Everything resolved (and notified, if asked): the group ends.
			groupOpen, notified, resolved = false, "", false
			continue
		}
		next = next.Add(g.GroupInterval)
	}
	return n
}
