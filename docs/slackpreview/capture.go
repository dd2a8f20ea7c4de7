package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	promrules "github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/util/strutil"

	"github.com/pagedhq/paged/history"
	"github.com/pagedhq/paged/notifier"
	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

// Scenario is the alert the picture shows: one rule of a pack, fed one
// series at a steady value until it fires, then a value below the
// threshold until it resolves.
type Scenario struct {
	PackFile    string            // the rule file
	Alert       string            // the alert rule's name
	Series      map[string]string // labels of the input series, __name__ included
	FiringValue float64
	ClearValue  float64
	// Labels override the rule's labels (the README shows a critical page).
	Labels      map[string]string
	ExternalURL string // paged's external URL: runbook, silence and graph links
	Channel     string
}

// Capture is what the Slack stand-in received for the scenario.
type Capture struct {
	Firing   Message // the first chat.postMessage
	Resolved Message // the message after chat.update
	Reply    Message // the thread reply posted after the update
}

const captureToken = "xoxb-slackpreview-not-a-real-token"

// evaluation is the scenario's rule evaluated until its alert fires:
// what both captures start from.
type evaluation struct {
	rule   *promrules.AlertingRule
	db     *tsdb.DB // closed by the caller
	query  promrules.QueryFunc
	ext    *url.URL
	series labels.Labels
	step   time.Duration
	gen    string       // the alert's generatorURL
	fired  *rules.Alert // the firing alert, as the engine hands it on
}

// evaluate evaluates the scenario's rule with Prometheus's rule code
// over a throwaway TSDB in dir until its alert fires.
func evaluate(ctx context.Context, sc Scenario, dir string) (*evaluation, error) {
	rule, err := loadRule(sc)
	if err != nil {
		return nil, err
	}
	db, err := tsdb.Open(dir, slog.New(slog.DiscardHandler), nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		return nil, fmt.Errorf("tsdb: %w", err)
	}
	eng := promql.NewEngine(promql.EngineOpts{MaxSamples: 1e6, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	ev := &evaluation{rule: rule, db: db, query: promrules.EngineQueryFunc(eng, db), step: 30 * time.Second, series: labels.FromMap(sc.Series)}
	if ev.ext, err = url.Parse(sc.ExternalURL); err != nil {
		db.Close()
		return nil, fmt.Errorf("external url: %w", err)
	}

	// The series sits at FiringValue from `for` + 1m ago until now; the
	// rule is evaluated every 30s over that span, as the engine would.
	now := time.Now().Truncate(time.Second)
	start := now.Add(-rule.HoldDuration() - time.Minute)
	if err := appendSamples(ctx, db, ev.series, start, now, ev.step, sc.FiringValue); err != nil {
		db.Close()
		return nil, err
	}
	for ts := start; !ts.After(now); ts = ts.Add(ev.step) {
		if _, err := rule.Eval(ctx, 0, ts, ev.query, ev.ext, 0); err != nil {
			db.Close()
			return nil, fmt.Errorf("evaluating %s: %w", sc.Alert, err)
		}
	}
	active := rule.ActiveAlerts()
	if len(active) != 1 || active[0].State != promrules.StateFiring {
		db.Close()
		return nil, fmt.Errorf("%s: want one firing alert after %s at %v, got %d active", sc.Alert, rule.HoldDuration(), sc.FiringValue, len(active))
	}
	ev.gen = strings.TrimSuffix(sc.ExternalURL, "/") + strutil.TableLinkForExpression(rule.Query().String())
	ev.fired = toAlert(active[0], ev.gen, now.Add(4*time.Minute))
	return ev, nil
}

// capture evaluates the scenario's rule with Prometheus's rule code over
// a throwaway TSDB and hands the alerts to a real paged Notifier whose
// Slack is the in-process stand-in, and returns the calls it received.
func capture(ctx context.Context, sc Scenario, dir string) (*Capture, error) {
	ev, err := evaluate(ctx, sc, dir)
	if err != nil {
		return nil, err
	}
	defer ev.db.Close()

	slack := notifiertest.NewSlackHandler(captureToken)
	n, stop, err := startNotifier(ctx, sc, slack, captureConfig(slack, `"#`+sc.Channel+`"`, ""))
	if err != nil {
		return nil, err
	}
	defer stop()

	n.Notify(ctx, []*rules.Alert{ev.fired})
	calls, err := waitCalls(ctx, slack, 1)
	if err != nil {
		return nil, err
	}
	post := calls[0]

	// The value drops below the threshold: the next evaluation resolves.
	later := time.Now().Truncate(time.Second).Add(time.Second)
	if err := appendSamples(ctx, ev.db, ev.series, later, later, ev.step, sc.ClearValue); err != nil {
		return nil, err
	}
	if _, err := ev.rule.Eval(ctx, 0, later, ev.query, ev.ext, 0); err != nil {
		return nil, fmt.Errorf("evaluating %s: %w", sc.Alert, err)
	}
	var resolved *promrules.Alert
	ev.rule.ForEachActiveAlert(func(a *promrules.Alert) {
		if !a.ResolvedAt.IsZero() {
			resolved = a
		}
	})
	if resolved == nil {
		return nil, fmt.Errorf("%s: did not resolve at %v", sc.Alert, sc.ClearValue)
	}
	for !time.Now().After(later) { // the notifier compares EndsAt with its own clock
		time.Sleep(later.Sub(time.Now()) + time.Millisecond)
	}
	n.Notify(ctx, []*rules.Alert{toAlert(resolved, ev.gen, resolved.ResolvedAt)})
	calls, err = waitCalls(ctx, slack, 3)
	if err != nil {
		return nil, err
	}
	update, reply := calls[1], calls[2]
	if update.Method != "chat.update" || reply.Method != "chat.postMessage" || reply.ThreadTS != post.TS {
		return nil, fmt.Errorf("want chat.update then a thread reply, got %s, %s (thread %q)", update.Method, reply.Method, reply.ThreadTS)
	}
	edited, ok := slack.Message(update.Channel, post.TS)
	if !ok {
		return nil, errors.New("the stand-in lost the posted message")
	}
	return &Capture{
		Firing:   Message{Time: ev.fired.StartsAt, Text: post.Text, Blocks: post.Blocks},
		Resolved: Message{Time: ev.fired.StartsAt, Edited: true, Text: edited.Text, Blocks: edited.Blocks},
		Reply:    Message{Time: resolved.ResolvedAt, Text: reply.Text, Blocks: reply.Blocks},
	}, nil
}

// captureConfig is the notifier block of the captures: one receiver, one
// bot-token destination on the stand-in, and extra appended (the
// slack_interactivity block, for the acknowledgement).
func captureConfig(slack *notifiertest.Slack, channel, extra string) string {
	return fmt.Sprintf(`
route:
  receiver: oncall
  group_by: [alertname]
  group_wait: 10ms
  group_interval: 50ms
  repeat_interval: 1h
receivers:
  - name: oncall
    slack_configs:
      - app_token: %s
        app_url: %s
        channel: %s
`, captureToken, slack.APIURL(), channel) + extra
}

// startNotifier runs a real notifier with the configuration text, its
// Slack the in-process stand-in; stop ends it and waits.
func startNotifier(ctx context.Context, sc Scenario, slack *notifiertest.Slack, confText string) (n *notifier.Notifier, stop func(), err error) {
	conf, err := notifier.ParseConfig([]byte(confText))
	if err != nil {
		return nil, nil, fmt.Errorf("notifier config: %w", err)
	}
	// A history, as paged run keeps by default: the messages link to the
	// alerts' timelines.
	dir, err := os.MkdirTemp("", "slackpreview-")
	if err != nil {
		return nil, nil, err
	}
	hist, err := history.Open(history.Options{Path: filepath.Join(dir, history.FileName)})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	n, err = notifier.New(notifier.Options{Config: conf, ExternalURL: sc.ExternalURL, Transport: notifiertest.InProcess(slack), History: hist})
	if err != nil {
		hist.Close()
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("notifier: %w", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- n.Run(runCtx) }()
	return n, func() {
		cancel()
		<-done
		hist.Close()
		os.RemoveAll(dir)
	}, nil
}

// loadRule finds the scenario's alert in its pack and builds it with
// Prometheus's AlertingRule, labels overridden as the scenario says.
func loadRule(sc Scenario) (*promrules.AlertingRule, error) {
	p := parser.NewParser(parser.Options{})
	groups, errs := rulefmt.ParseFile(sc.PackFile, false, model.UTF8Validation, p, slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert != sc.Alert {
				continue
			}
			expr, err := p.ParseExpr(r.Expr)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", sc.PackFile, r.Alert, err)
			}
			ls := labels.NewBuilder(labels.FromMap(r.Labels))
			for k, v := range sc.Labels {
				ls.Set(k, v)
			}
			return promrules.NewAlertingRule(r.Alert, expr, time.Duration(r.For), time.Duration(r.KeepFiringFor),
				ls.Labels(), labels.FromMap(r.Annotations), labels.EmptyLabels(), sc.ExternalURL, false, nil), nil
		}
	}
	return nil, fmt.Errorf("%s: no alert named %s", sc.PackFile, sc.Alert)
}

func appendSamples(ctx context.Context, db *tsdb.DB, ls labels.Labels, from, to time.Time, step time.Duration, v float64) error {
	app := db.Appender(ctx)
	for ts := from; !ts.After(to); ts = ts.Add(step) {
		if _, err := app.Append(0, ls, ts.UnixMilli(), v); err != nil {
			_ = app.Rollback()
			return fmt.Errorf("append: %w", err)
		}
	}
	if err := app.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// toAlert is the engine's conversion (engine/notify.go): StartsAt is the
// firing time, EndsAt the resolve time or the end of validity.
func toAlert(a *promrules.Alert, generatorURL string, validUntil time.Time) *rules.Alert {
	out := &rules.Alert{
		Labels:       a.Labels.Copy(),
		Annotations:  a.Annotations.Copy(),
		StartsAt:     a.FiredAt,
		EndsAt:       validUntil,
		GeneratorURL: generatorURL,
	}
	if !a.ResolvedAt.IsZero() {
		out.EndsAt = a.ResolvedAt
	}
	return out
}

// waitCalls polls the stand-in until it has received n calls; the
// notifier delivers on its own goroutines after group_wait.
func waitCalls(ctx context.Context, s *notifiertest.Slack, n int) ([]notifiertest.SlackCall, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if c := s.Calls(); len(c) >= n {
			for _, call := range c {
				if call.Error != "" {
					return nil, fmt.Errorf("slack stand-in answered %s with %s", call.Method, call.Error)
				}
			}
			return c, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("slack stand-in got %d calls, want %d: %w", len(s.Calls()), n, ctx.Err())
		case <-tick.C:
		}
	}
}

// writeJSON writes v indented, for testdata.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
