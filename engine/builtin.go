package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/rules"
)

// Names of the built-in alerts about paged's own state files. They are
// routed like any alert (and like PagedDatasourceDown).
const (
	// StateCorruptedAlert fires for each state file that could not be
	// read and was moved aside, until the moved file is removed (or for
	// a day).
	StateCorruptedAlert = "PagedStateCorrupted"
	// StateWriteFailingAlert fires while a state file cannot be written
	// (a full or read-only disk): paging goes on from memory.
	StateWriteFailingAlert = "PagedStateWriteFailing"
	// ReloadFailedAlert fires from a configuration reload that failed
	// (the previous configuration keeps running) until one succeeds
	// (Options.ReloadFailed).
	ReloadFailedAlert = "PagedReloadFailed"
)

// BuiltinAlertNames lists every alert paged raises about itself. Each has
// a runbook, examples/runbooks/paged/<name>.md.
func BuiltinAlertNames() []string {
	return []string{DatasourceDownAlert, RuleNoSeriesAlert, StateCorruptedAlert, StateWriteFailingAlert, ReloadFailedAlert}
}

// ReloadFailure is a configuration reload that failed, with none
// succeeding since.
type ReloadFailure struct {
	File  string    // the configuration file
	Since time.Time // the first failed reload since the last good one
	Err   string    // the error of the last failed reload
}

// maxReloadErr bounds the reload error quoted in PagedReloadFailed: a file
// with hundreds of problems would make a message no receiver takes.
const (
	maxReloadErrLines = 10
	maxReloadErrBytes = 2000
)

// corruptedFor is how long PagedStateCorrupted fires for a file moved
// aside that nobody removes.
const corruptedFor = 24 * time.Hour

// builtinAlerts raises the state alerts from the engine's Reporter and
// PagedRuleNoSeries from the no-series clocks (noseries.go): it checks at
// every evaluation interval, sends what fires once per resend delay, and
// sends the resolution when the condition is gone.
type builtinAlerts struct {
	e *Engine

	mu     sync.Mutex
	active map[uint64]*sentBuiltin // by label hash
}

type sentBuiltin struct {
	alert    *rules.Alert
	lastSent time.Time
}

func newBuiltinAlerts(e *Engine) *builtinAlerts {
	return &builtinAlerts{e: e, active: map[uint64]*sentBuiltin{}}
}

func (b *builtinAlerts) run(ctx context.Context) {
	t := time.NewTicker(b.e.opts.EvaluationInterval)
	defer t.Stop()
	for {
		b.check(ctx, time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// check compares what fires now with what was sent, and notifies.
func (b *builtinAlerts) check(ctx context.Context, now time.Time) {
	want := b.current(now)
	delta := max(b.e.opts.EvaluationInterval, b.e.opts.ResendDelay)
	var out []*rules.Alert
	b.mu.Lock()
	for h, a := range want {
		cur := b.active[h]
		if cur != nil && now.Sub(cur.lastSent) < b.e.opts.ResendDelay && labels.Equal(cur.alert.Annotations, a.Annotations) {
			continue
		}
		a.EndsAt = now.Add(4 * delta)
		b.active[h] = &sentBuiltin{alert: a, lastSent: now}
		out = append(out, a)
	}
	for h, cur := range b.active {
		if _, ok := want[h]; ok {
			continue
		}
		r := *cur.alert
		r.EndsAt = now
		out = append(out, &r)
		delete(b.active, h)
	}
	b.mu.Unlock()
	if len(out) > 0 {
		b.e.opts.Notify(ctx, out)
	}
}

// list returns the state alerts that fire, for the API.
func (b *builtinAlerts) list() []*rules.Alert {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*rules.Alert, 0, len(b.active))
	for _, s := range b.active {
		c := *s.alert
		c.EndsAt = time.Time{}
		out = append(out, &c)
	}
	sort.Slice(out, func(i, j int) bool { return labels.Compare(out[i].Labels, out[j].Labels) < 0 })
	return out
}

// current builds the state alerts and PagedRuleNoSeries alerts that
// should fire at now.
func (b *builtinAlerts) current(now time.Time) map[uint64]*rules.Alert {
	e := b.e
	e.mu.Lock()
	ext := e.extLabels
	e.mu.Unlock()
	rep := e.opts.Reporter
	out := map[uint64]*rules.Alert{}
	add := func(name, file string, startsAt time.Time, summary, description string) {
		lb := labels.NewBuilder(ext)
		lb.Set(labels.AlertName, name)
		lb.Set("severity", "critical")
		if file != "" {
			lb.Set("file", file)
		}
		ls := lb.Labels()
		out[ls.Hash()] = &rules.Alert{
			Labels: ls,
			Annotations: labels.FromStrings(
				"description", description,
				"runbook_url", "paged/"+name,
				"summary", summary,
			),
			StartsAt:     startsAt,
			GeneratorURL: e.opts.ExternalURL,
		}
	}
	root := e.opts.StoragePath
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	for _, m := range rep.MovedAside(now.Add(-corruptedFor)) {
		add(StateCorruptedAlert, m.File, m.At,
			fmt.Sprintf("paged state file %s was unreadable and was moved aside", m.File),
			fmt.Sprintf("paged could not read %s and moved it to %s; it went on with what it could read "+
				"(the log says why, with the full path). What the file held after its last good write may be lost: "+
				"silences, Slack message threads, notification records or alert state, depending on the file. "+
				"Inspect the moved file, then delete it to resolve this alert.",
				filepath.Join(root, m.File), filepath.Join(root, m.MovedTo)))
	}
	for _, f := range rep.Failing() {
		add(StateWriteFailingAlert, f.File, f.Since,
			fmt.Sprintf("paged cannot write its state file %s", f.File),
			fmt.Sprintf("Writing %s has failed since %s: %s. paged keeps paging from memory and retries the write; "+
				"until it succeeds, a crash or restart loses what changed since (duplicate or missing notifications, "+
				"silences, alert timers). Free disk space or fix the permissions of the storage path.",
				filepath.Join(root, f.File), f.Since.UTC().Format(time.RFC3339), f.Err))
	}
	if e.opts.ReloadFailed != nil {
		if f, ok := e.opts.ReloadFailed(); ok {
			add(ReloadFailedAlert, "", f.Since,
				fmt.Sprintf("paged could not reload %s; the previous configuration keeps running", f.File),
				fmt.Sprintf("Reloading %s has failed since %s. paged runs the configuration and rules it ran before, "+
					"so changes made since are not in effect, and a restart with this file would not start. "+
					"Fix the file (paged check-config %s), then reload again. The last reload said:\n%s",
					f.File, f.Since.UTC().Format(time.RFC3339), f.File, clipLines(f.Err, maxReloadErrLines, maxReloadErrBytes)))
		}
	}
	e.noSeries.alerts(ext, func(a *rules.Alert) { out[a.Labels.Hash()] = a })
	return out
}

// clipLines keeps the first lines of s, at most maxBytes of them (cut at a
// character), and says how many lines it left out.
func clipLines(s string, maxLines, maxBytes int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var b strings.Builder
	kept := 0
	for _, l := range lines {
		if kept == maxLines || b.Len()+len(l)+1 > maxBytes {
			break
		}
		if kept > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
		kept++
	}
	if kept == 0 {
		// One line longer than the whole budget: its start, cut where a
		// character ends.
		b.WriteString(strings.ToValidUTF8(lines[0][:maxBytes], ""))
		b.WriteString("…")
		kept = 1
	}
	if n := len(lines) - kept; n > 0 {
		fmt.Fprintf(&b, "\n… and %d more line(s)", n)
	}
	return b.String()
}
