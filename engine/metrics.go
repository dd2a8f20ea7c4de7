package engine

import (
	"github.com/prometheus/client_golang/prometheus"
	promrules "github.com/prometheus/prometheus/rules"
)

// metrics are paged's own, beside the rules manager's prometheus_rule_*.
type metrics struct {
	queries      *prometheus.CounterVec
	datasourceUp prometheus.Gauge
	staleSent    prometheus.Counter

	noSeriesChecks    *prometheus.CounterVec
	noSeriesQueries   *prometheus.CounterVec
	noSeriesSelectors prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer, e *Engine) *metrics {
	m := &metrics{
		queries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paged_datasource_queries_total",
			Help: "Rule queries sent to the datasource, by outcome: success, query (the datasource rejected the query), unavailable (no answer).",
		}, []string{"outcome"}),
		datasourceUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "paged_datasource_up",
			Help: "0 while PagedDatasourceDown fires, 1 otherwise.",
		}),
		staleSent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "paged_stale_alert_sends_total",
			Help: "Alerts re-sent with the stale flag because their rule's query failed.",
		}),
	}
	m.noSeriesChecks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "paged_rule_no_series_checks_total",
		Help: "Checks of whether the rules' selectors match series (PagedRuleNoSeries), by outcome: success (every selector answered), failure (a query failed; the clocks of unanswered selectors did not move).",
	}, []string{"outcome"})
	m.noSeriesQueries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "paged_rule_no_series_queries_total",
		Help: "Queries sent by the no-series check (many selectors to a query), by outcome: success, query (rejected), unavailable.",
	}, []string{"outcome"})
	m.noSeriesSelectors = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "paged_rule_no_series_selectors",
		Help: "Distinct selectors the no-series check counts, once reduced (value labels dropped).",
	})
	for _, o := range []string{"success", "failure"} {
		m.noSeriesChecks.WithLabelValues(o)
	}
	for _, o := range []string{"success", "query", "unavailable"} {
		m.noSeriesQueries.WithLabelValues(o)
	}
	m.datasourceUp.Set(1)
	for _, o := range []string{"success", "query", "unavailable"} {
		m.queries.WithLabelValues(o)
	}
	if reg != nil {
		reg.MustRegister(m.queries, m.datasourceUp, m.staleSent, m.noSeriesChecks, m.noSeriesQueries, m.noSeriesSelectors, &alertCollector{e: e})
	}
	return m
}

var (
	alertsDesc = prometheus.NewDesc("paged_alerts",
		"Active alerts by state (pending, firing), built-in alerts included.", []string{"state"}, nil)
	staleAlertsDesc = prometheus.NewDesc("paged_alerts_stale",
		"Active alerts kept at their last state because their rule's query fails.", nil, nil)
	staleRulesDesc = prometheus.NewDesc("paged_rules_stale",
		"Rules whose last query failed, by rule group.", []string{"rule_group"}, nil)
)

// alertCollector computes alert counts from the running rules at scrape
// time.
type alertCollector struct{ e *Engine }

func (c *alertCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- alertsDesc
	ch <- staleAlertsDesc
	ch <- staleRulesDesc
}

func (c *alertCollector) Collect(ch chan<- prometheus.Metric) {
	var pending, firing, stale float64
	staleRules := map[string]float64{}
	for _, g := range c.e.mgr.RuleGroups() {
		key := promrules.GroupKey(g.File(), g.Name())
		staleRules[key] += 0
		for _, r := range g.Rules() {
			st := c.e.RuleStatus(r)
			if st.Stale {
				staleRules[key]++
			}
			ar, ok := r.(*promrules.AlertingRule)
			if !ok {
				continue
			}
			for _, a := range ar.ActiveAlerts() {
				switch a.State {
				case promrules.StatePending:
					pending++
				case promrules.StateFiring:
					firing++
					if st.Stale {
						stale++
					}
				}
			}
		}
	}
	// Built-in alerts: PagedDatasourceDown, the state alerts,
	// PagedRuleNoSeries.
	firing += float64(len(c.e.BuiltinAlerts()))
	ch <- prometheus.MustNewConstMetric(alertsDesc, prometheus.GaugeValue, pending, "pending")
	ch <- prometheus.MustNewConstMetric(alertsDesc, prometheus.GaugeValue, firing, "firing")
	ch <- prometheus.MustNewConstMetric(staleAlertsDesc, prometheus.GaugeValue, stale)
	for k, v := range staleRules {
		ch <- prometheus.MustNewConstMetric(staleRulesDesc, prometheus.GaugeValue, v, k)
	}
}
