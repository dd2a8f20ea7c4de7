package engine

import (
	"fmt"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/rules"
)

// DatasourceDownAlert is the name of the built-in alert that fires when
// the datasource stops answering.
const DatasourceDownAlert = "PagedDatasourceDown"

// dsHealth tracks whether the datasource answers evaluations.
type dsHealth struct {
	// failures counts, per group, the consecutive evaluations in which no
	// query got an answer.
	failures    map[string]int
	down        bool
	downSince   time.Time
	lastSent    time.Time
	lastSuccess time.Time
}

// DatasourceStatus is the engine's view of its datasource.
type DatasourceStatus struct {
	Name string
	// Answered is set once the datasource has answered a query.
	Answered bool
	// Down is set while PagedDatasourceDown fires.
	Down      bool
	DownSince time.Time
	// ConsecutiveFailures is the largest number of consecutive
	// evaluations of one group without an answer.
	ConsecutiveFailures int
	// LastError of a query that got no answer, without credentials.
	LastError string
	// LastSuccess is the evaluation time of the last answered query.
	LastSuccess time.Time
}

// DatasourceStatus returns the datasource's health.
func (e *Engine) DatasourceStatus() DatasourceStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	return DatasourceStatus{
		Name:                e.opts.DatasourceName,
		Answered:            e.answered.Load(),
		Down:                e.health.down,
		DownSince:           e.health.downSince,
		ConsecutiveFailures: e.health.maxFailures(),
		LastError:           e.lastDSErr,
		LastSuccess:         e.health.lastSuccess,
	}
}

// BuiltinAlerts returns the built-in alerts that are firing
// (PagedDatasourceDown, PagedStateCorrupted, PagedStateWriteFailing,
// PagedRuleNoSeries), for the alerts API.
func (e *Engine) BuiltinAlerts() []*rules.Alert {
	out := e.builtin.list()
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.health.down {
		return out
	}
	a := e.downAlertLocked(e.health.lastSent, e.extLabels)
	a.EndsAt = time.Time{}
	return append([]*rules.Alert{a}, out...)
}

func (h *dsHealth) maxFailures() int {
	n := 0
	for _, f := range h.failures {
		n = max(n, f)
	}
	return n
}

// updateHealthLocked records one group evaluation: answered queries that
// got an answer (including ones the datasource rejected), unanswered ones
// that did not. It returns the PagedDatasourceDown notifications due.
func (e *Engine) updateHealthLocked(group string, answered, unanswered int, ts time.Time, interval time.Duration, ext labels.Labels) []*rules.Alert {
	h := &e.health
	delta := max(interval, e.opts.ResendDelay)
	switch {
	case answered > 0:
		clear(h.failures)
		h.lastSuccess = ts
		e.metrics.datasourceUp.Set(1)
		if !h.down {
			return nil
		}
		h.down = false
		a := e.downAlertLocked(ts, ext)
		a.EndsAt = ts
		e.logger.Info("datasource answers again", "datasource", e.opts.DatasourceName, "down_since", h.downSince)
		return []*rules.Alert{a}
	case unanswered > 0:
		h.failures[group]++
		if !h.down && h.failures[group] >= e.opts.DatasourceDownAfter {
			h.down, h.downSince, h.lastSent = true, ts, ts
			e.metrics.datasourceUp.Set(0)
			e.logger.Error("datasource down", "datasource", e.opts.DatasourceName, "failed_evaluations", h.failures[group], "err", e.lastDSErr)
			a := e.downAlertLocked(ts, ext)
			a.EndsAt = ts.Add(4 * delta)
			return []*rules.Alert{a}
		}
		if h.down && h.lastSent.Add(e.opts.ResendDelay).Before(ts) {
			h.lastSent = ts
			a := e.downAlertLocked(ts, ext)
			a.EndsAt = ts.Add(4 * delta)
			return []*rules.Alert{a}
		}
	}
	return nil
}

func (e *Engine) downAlertLocked(ts time.Time, ext labels.Labels) *rules.Alert {
	b := labels.NewBuilder(ext)
	b.Set(labels.AlertName, DatasourceDownAlert)
	b.Set("severity", "critical")
	desc := fmt.Sprintf("paged has not been able to query %s for %d consecutive evaluations. "+
		"Alerts keep their last state and are marked stale until queries succeed again; "+
		"no alert resolves meanwhile.", e.opts.DatasourceName, e.opts.DatasourceDownAfter)
	if e.lastDSErr != "" {
		desc += " Last error: " + e.lastDSErr
	}
	return &rules.Alert{
		Labels: b.Labels(),
		Annotations: labels.FromStrings(
			"description", desc,
			"runbook_url", e.opts.DatasourceDownRunbookURL,
			"summary", "paged cannot query its datasource "+e.opts.DatasourceName,
		),
		StartsAt:     e.health.downSince,
		GeneratorURL: e.opts.ExternalURL,
	}
}
