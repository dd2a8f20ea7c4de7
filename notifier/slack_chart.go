package notifier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/prometheus/alertmanager/template"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/slack-go/slack"

	"github.com/pagedhq/paged/notifier/slackchart"
)

// With a bot token, the first message of a group and its resolution get
// a chart of the rule's expression in their thread: from an hour before
// the group fired to now, with the rule's threshold. The message goes
// first; the chart is drawn and uploaded after it, on its own goroutine,
// so that a slow datasource or a failed upload never delays nor changes
// the page. A failure is logged and counted, nothing else.

// ChartSource answers the range queries of the charts: the embedded TSDB
// or the datasource's query_range (engine/backtest's sources are ones).
type ChartSource interface {
	QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) (promql.Matrix, error)
}

const (
	chartLookback = time.Hour      // before the group fired
	chartMaxRange = 25 * time.Hour // a group firing for days: its last day
	chartTimeout  = 30 * time.Second
	chartMaxRules = 2 // charts per message: the group's first rules
)

// charts draws and uploads the charts; one per notifier.
type charts struct {
	mu     sync.Mutex
	source ChartSource

	outcomes *prometheus.CounterVec // outcome
	inFlight sync.WaitGroup
}

func newCharts(reg prometheus.Registerer) *charts {
	c := &charts{outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "paged_slack_charts_total",
		Help: "Charts of an alert group's rule posted in its Slack thread, by outcome (uploaded, no_expression, query_failed, render_failed, upload_failed).",
	}, []string{"outcome"})}
	reg.MustRegister(c.outcomes)
	return c
}

// SetChartSource sets where the charts of Slack messages get their data;
// without one no chart is drawn.
func (n *Notifier) SetChartSource(s ChartSource) {
	n.charts.mu.Lock()
	defer n.charts.mu.Unlock()
	n.charts.source = s
}

func (c *charts) sourceOf() ChartSource {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.source
}

// chartJob is one message's chart.
type chartJob struct {
	conf      *SlackConfig
	channel   string
	threadTS  string
	data      *template.Data
	resolved  bool
	requested time.Time
}

// post draws and uploads the job's charts in the background.
func (c *charts) post(s *slackNotifier, job chartJob) {
	src := c.sourceOf()
	if src == nil || job.channel == "" || job.threadTS == "" {
		return
	}
	c.inFlight.Add(1)
	go func() {
		defer c.inFlight.Done()
		ctx, cancel := context.WithTimeout(context.Background(), chartTimeout)
		defer cancel()
		for _, outcome := range c.draw(ctx, s, src, job) {
			c.outcomes.WithLabelValues(outcome).Inc()
		}
	}()
}

// chartRule is one rule of a group to chart: its expression and the
// group's alerts of it.
type chartRule struct {
	name, expr string
	alerts     []template.Alert
}

// rulesOf finds the expressions of a group's alerts from their source
// links (g0.expr), as Prometheus and paged write them.
func rulesOf(d *template.Data) []chartRule {
	var out []chartRule
	idx := map[string]int{}
	for _, a := range d.Alerts {
		u, err := url.Parse(a.GeneratorURL)
		if err != nil {
			continue
		}
		expr := u.Query().Get("g0.expr")
		if expr == "" {
			continue
		}
		i, ok := idx[expr]
		if !ok {
			i = len(out)
			idx[expr] = i
			out = append(out, chartRule{name: a.Labels["alertname"], expr: expr})
		}
		out[i].alerts = append(out[i].alerts, a)
	}
	return out
}

func (c *charts) draw(ctx context.Context, s *slackNotifier, src ChartSource, job chartJob) []string {
	rs := rulesOf(job.data)
	if len(rs) == 0 {
		return []string{"no_expression"}
	}
	if len(rs) > chartMaxRules {
		rs = rs[:chartMaxRules]
	}
	var outcomes []string
	for _, r := range rs {
		png, err := chartPNG(ctx, src, r, job)
		if err != nil {
			var qe queryError
			outcome := "render_failed"
			if errors.As(err, &qe) {
				outcome = "query_failed"
			}
			s.logger.Warn("slack chart not drawn; the message stands", "alertname", r.name, "err", err)
			outcomes = append(outcomes, outcome)
			continue
		}
		if err := s.uploadChart(ctx, job, r.name, png); err != nil {
			s.logger.Warn("slack chart not uploaded; the message stands", "alertname", r.name, "err", err)
			outcomes = append(outcomes, "upload_failed")
			continue
		}
		outcomes = append(outcomes, "uploaded")
	}
	return outcomes
}

type queryError struct{ err error }

func (e queryError) Error() string { return "query_range: " + e.err.Error() }
func (e queryError) Unwrap() error { return e.err }

// chartPNG queries and draws one rule's chart.
func chartPNG(ctx context.Context, src ChartSource, r chartRule, job chartJob) ([]byte, error) {
	plan, err := slackchart.Split(r.expr)
	if err != nil {
		return nil, err
	}
	end := job.requested
	fired := end
	var resolvedAt time.Time
	for _, a := range r.alerts {
		if !a.StartsAt.IsZero() && a.StartsAt.Before(fired) {
			fired = a.StartsAt
		}
		if job.resolved && a.EndsAt.After(resolvedAt) {
			resolvedAt = a.EndsAt
		}
	}
	start := fired.Add(-chartLookback)
	if oldest := end.Add(-chartMaxRange); start.Before(oldest) {
		start = oldest
	}
	m, err := src.QueryRange(ctx, plan.Query, start, end, slackchart.Step(start, end))
	if err != nil {
		return nil, queryError{err}
	}
	series := slackchart.FromMatrix(ofAlerts(m, r.alerts))
	var buf bytes.Buffer
	err = slackchart.Render(&buf, slackchart.Chart{
		Title: r.name, Query: plan.Query, Series: series,
		Threshold: plan.Threshold, Op: plan.Op,
		Start: start, End: end, FiredAt: fired, ResolvedAt: resolvedAt,
		Unit: r.alerts[0].Annotations["unit"],
	})
	return buf.Bytes(), err
}

// ofAlerts keeps the series of the group's alerts: those whose labels
// (but the metric name) are all among one alert's. When none is, the
// expression's labels differ from the alerts' (an aggregation, label
// rewrites) and every series is kept.
func ofAlerts(m promql.Matrix, alerts []template.Alert) promql.Matrix {
	var out promql.Matrix
	for _, s := range m {
		for _, a := range alerts {
			match := true
			s.Metric.Range(func(l labels.Label) {
				if l.Name != labels.MetricName && a.Labels[l.Name] != l.Value {
					match = false
				}
			})
			if match {
				out = append(out, s)
				break
			}
		}
	}
	if len(out) == 0 {
		return m
	}
	return out
}

// uploadChart posts a PNG in the message's thread with Slack's external
// upload (files.getUploadURLExternal, then files.completeUploadExternal).
func (s *slackNotifier) uploadChart(ctx context.Context, job chartJob, name string, png []byte) error {
	api, err := botAPI(job.conf, s.rt)
	if err != nil {
		return err
	}
	state := "firing"
	if job.resolved {
		state = "resolved"
	}
	_, err = api.UploadFileContext(ctx, slack.UploadFileParameters{
		Reader:          bytes.NewReader(png),
		FileSize:        len(png),
		Filename:        fmt.Sprintf("%s-%s.png", name, job.requested.UTC().Format("20060102-1504")),
		Title:           fmt.Sprintf("%s (%s)", name, state),
		AltTxt:          fmt.Sprintf("Chart of %s's expression from an hour before it fired to %s UTC", name, job.requested.UTC().Format("15:04")),
		Channel:         job.channel,
		ThreadTimestamp: job.threadTS,
	})
	return err
}
