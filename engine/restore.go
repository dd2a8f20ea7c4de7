package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	promrules "github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

// openState opens the TSDB that holds ALERTS and ALERTS_FOR_STATE. It keeps
// a little more than the outage tolerance: older state is never restored.
func openState(dir string, logger *slog.Logger, tolerance time.Duration) (*tsdb.DB, error) {
	opts := tsdb.DefaultOptions()
	retention := max(2*tolerance, 24*time.Hour)
	opts.RetentionDuration = retention.Milliseconds()
	db, err := tsdb.Open(dir, logger.With("component", "state"), nil, opts, nil)
	if err != nil {
		return nil, fmt.Errorf("engine: open state storage %s: %w", dir, err)
	}
	return db, nil
}

// realign gives restored alerts back their original activeAt.
//
// Prometheus restores the 'for' state of a group after its second
// evaluation, and shifts each pending alert's activeAt forward by the time
// it was down ("for" counts only time Prometheus watched), or restarts
// it when 'for' is shorter than the grace period. paged's datasource keeps
// collecting while paged restarts, so the condition's history is known:
// after the first evaluation that follows Prometheus's restore and in
// which the group's queries got answers (the datasource may be down at
// start), paged sets each active alert's activeAt back to the last value
// ALERTS_FOR_STATE held before this evaluation, if that is earlier and
// the alert had not resolved (no stale marker). State older than
// OutageTolerance is not considered. It runs once per group.
func (e *Engine) realign(ctx context.Context, g *promrules.Group, ts time.Time) {
	e.mu.Lock()
	gs := e.groups[g]
	if gs == nil {
		gs = &groupState{}
		e.groups[g] = gs
	}
	done := gs.aligned
	e.mu.Unlock()
	if done {
		return
	}
	ars := g.AlertingRules()
	for _, ar := range ars {
		if !ar.Restored() {
			return // Prometheus has not restored this group yet
		}
		if _, failed := errorKindOf(ar.LastError()); failed {
			return // no answer yet: the alerts are not in memory
		}
	}
	e.mu.Lock()
	gs.aligned = true
	e.mu.Unlock()

	// This evaluation wrote its own samples at ts - query offset: read
	// what was there before it.
	maxt := ts.Add(-g.QueryOffset()).UnixMilli() - 1
	q, err := e.db.Querier(ts.Add(-e.opts.OutageTolerance).UnixMilli(), maxt)
	if err != nil {
		e.logger.Warn("reading alert state failed", "group", g.Name(), "err", err)
		return
	}
	defer q.Close()
	for _, ar := range ars {
		if ar.ActiveAlertsCount() == 0 {
			continue
		}
		sset, err := ar.QueryForStateSeries(ctx, q)
		if err != nil {
			e.logger.Warn("reading alert state failed", "alert", ar.Name(), "err", err)
			continue
		}
		stored := map[string]time.Time{}
		for sset.Next() {
			s := sset.At()
			var last float64
			found := false
			it := s.Iterator(nil)
			for it.Next() == chunkenc.ValFloat {
				_, last = it.At()
				found = true
			}
			if !found || value.IsStaleNaN(last) || it.Err() != nil {
				continue
			}
			key := s.Labels().DropReserved(func(n string) bool { return n == labels.MetricName }).String()
			stored[key] = time.Unix(int64(last), 0).UTC()
		}
		ar.ForEachActiveAlert(func(a *promrules.Alert) {
			at, ok := stored[a.Labels.String()]
			if ok && a.ResolvedAt.IsZero() && at.Before(a.ActiveAt) {
				e.logger.Debug("activeAt restored", "alert", ar.Name(), "labels", a.Labels.String(), "active_at", at)
				a.ActiveAt = at
			}
		})
	}
}

// stateAppendable is the rules manager's storage: the state TSDB, minus
// the ALERTS series. Only ALERTS_FOR_STATE is read back (restore); rule
// queries go to the datasource, so nothing would ever read ALERTS here,
// and skipping it halves the state's series and writes.
type stateAppendable struct{ db *tsdb.DB }

func (s stateAppendable) AppenderV2(ctx context.Context) storage.AppenderV2 {
	return alertsFilter{s.db.AppenderV2(ctx)}
}

type alertsFilter struct{ storage.AppenderV2 }

func (a alertsFilter) Append(ref storage.SeriesRef, ls labels.Labels, st, t int64, v float64, h *histogram.Histogram, fh *histogram.FloatHistogram, opts storage.AOptions) (storage.SeriesRef, error) {
	if ls.Get(labels.MetricName) == "ALERTS" {
		return ref, nil
	}
	return a.AppenderV2.Append(ref, ls, st, t, v, h, fh, opts)
}
