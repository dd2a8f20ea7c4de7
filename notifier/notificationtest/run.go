package notificationtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/common/model"

	"github.com/pagedhq/paged/engine/ruletest"
	"github.com/pagedhq/paged/notifier"
)

// Options configure the notification tests of a run.
type Options struct {
	// Config is the notifier block of paged.yaml the tests run against.
	Config *notifier.Config
	// Render carries the daemon's settings that change the payloads.
	Render notifier.RenderOptions
	// Update writes the golden files with what is rendered instead of
	// comparing (paged test --update).
	Update bool
	// RuleTests runs the rule tests that from_rule_test names.
	RuleTests ruletest.Options
	// Stdout gets a line per golden file written. Nil discards.
	Stdout io.Writer
	// Coverage, when set, records what the tests exercise.
	Coverage *Coverage
}

// Runner returns the ruletest.NotificationsFunc that runs the
// notification_tests of a test file with opts.
func Runner(opts Options) ruletest.NotificationsFunc {
	if opts.Stdout == nil {
		opts.Stdout = io.Discard
	}
	return func(ctx context.Context, f *ruletest.File, match func(string) bool) []*ruletest.GroupResult {
		return run(ctx, opts, f, match)
	}
}

const kind = "notification_test"

func run(ctx context.Context, opts Options, f *ruletest.File, match func(string) bool) []*ruletest.GroupResult {
	tests, bad, top := Parse(f.Path, f.NotificationTests)
	if len(top) > 0 {
		gr := &ruletest.GroupResult{Name: "notification_tests", Pos: f.NotificationsPos}
		for _, err := range top {
			gr.Failures = append(gr.Failures, failure(err))
		}
		return []*ruletest.GroupResult{gr}
	}
	var out []*ruletest.GroupResult
	for i, t := range tests {
		name := t.Name
		if name == "" {
			name = fmt.Sprintf("notification#%d", i)
		}
		if !match(name) {
			continue
		}
		gr := &ruletest.GroupResult{Name: name, Pos: t.Pos}
		start := time.Now()
		if errs := bad[t]; len(errs) > 0 {
			for _, err := range errs {
				gr.Failures = append(gr.Failures, failure(err))
			}
		} else {
			c := &check{opts: opts, test: t, dir: filepath.Dir(f.Path), result: gr}
			c.run(ctx)
		}
		gr.Duration = time.Since(start)
		out = append(out, gr)
	}
	return out
}

func failure(err error) ruletest.Failure {
	var pe *ParseError
	if errors.As(err, &pe) {
		return ruletest.Failure{Pos: pe.Pos, Message: pe.Msg}
	}
	return ruletest.Failure{Message: err.Error()}
}

// check runs one notification test.
type check struct {
	opts   Options
	test   *Test
	dir    string
	result *ruletest.GroupResult
}

func (c *check) fail(pos Pos, what, msg string) {
	c.result.Failures = append(c.result.Failures, ruletest.Failure{
		Pos: pos, Kind: kind + " " + what,
		Message: fmt.Sprintf("    name: %s,\n%s", c.result.Name, msg),
	})
}

// diff is a failure's body: the expected and got lines, as a diff.
func (c *check) diff(pos Pos, what string, exp, got []string) {
	c.fail(pos, what, "        diff (- expected, + got):\n            "+indent(lineDiff(exp, got), "            "))
}

func (c *check) run(ctx context.Context) {
	t := c.test
	at := t.At
	under, err := c.alertsUnderTest(ctx, &at)
	if err != nil {
		c.fail(t.Pos, "alerts", "    "+err.Error())
		return
	}
	also := make([]*alert.Alert, 0, len(t.AlsoFiring))
	for _, a := range t.AlsoFiring {
		also = append(also, newAlert(a.Labels, a.Annotations, at))
	}
	o, err := evaluate(ctx, c.opts.Config, t.At, under, also, t.Silences)
	if err != nil {
		c.fail(t.Pos, "evaluation", "    "+err.Error())
		return
	}
	if c.opts.Coverage != nil {
		c.opts.Coverage.record(o, under)
	}
	if e := t.ExpReceivers; e != nil {
		if got := recvs(o); !slices.Equal(e.Value, got) {
			c.diff(e.Pos, "exp_receivers", e.Value, got)
		}
	}
	if e := t.ExpGroupLabels; e != nil {
		exp := make([]string, 0, len(e.Value))
		for _, m := range e.Value {
			exp = append(exp, labelSet(m).String())
		}
		var got []string
		for _, g := range o.groups {
			if s := g.labels.String(); !slices.Contains(got, s) {
				got = append(got, s)
			}
		}
		slices.Sort(exp)
		slices.Sort(got)
		if !slices.Equal(exp, got) {
			c.diff(e.Pos, "exp_group_labels", exp, got)
		}
	}
	if e := t.ExpInhibited; e != nil {
		c.checkInhibited(e, o, under)
	}
	if e := t.ExpSilenced; e != nil {
		var exp, got []string
		for _, a := range under {
			by := o.silencedBy[a.Fingerprint()]
			exp = append(exp, alertLine(a)+" "+silencedText(e.Value))
			got = append(got, alertLine(a)+" "+silencedText(len(by) > 0))
		}
		if !slices.Equal(exp, got) {
			c.diff(e.Pos, "exp_silenced", exp, got)
		}
	}
	if e := t.ExpMuted; e != nil {
		c.checkMuted(e, o)
	}
	for _, ep := range t.ExpPayloads {
		c.checkPayload(ctx, ep, o, at)
	}
}

func silencedText(silenced bool) string {
	if !silenced {
		return "not silenced"
	}
	return "silenced"
}

func (c *check) checkInhibited(e *Expect[Inhibited], o *outcome, under []*alert.Alert) {
	want := e.Value
	var exp, got []string
	ok := true
	for _, a := range under {
		srcs := o.inhibitors[a.Fingerprint()]
		var gotText []string
		for _, s := range srcs {
			gotText = append(gotText, "inhibited by "+s.Labels.String())
		}
		if len(srcs) == 0 {
			gotText = []string{"not inhibited"}
		}
		expText := "not inhibited"
		switch {
		case want.Name != "":
			expText = "inhibited by {alertname=\"" + want.Name + "\", ...}"
		case want.Labels != nil:
			expText = "inhibited by " + strings.TrimSuffix(labelSet(want.Labels).String(), "}") + ", ...}"
		case want.Inhibited:
			expText = "inhibited"
		}
		match := len(srcs) > 0 == want.Inhibited
		if match && len(srcs) > 0 && (want.Name != "" || want.Labels != nil) {
			match = slices.ContainsFunc(srcs, func(s *alert.Alert) bool {
				if want.Name != "" && string(s.Labels[model.AlertNameLabel]) != want.Name {
					return false
				}
				for k, v := range want.Labels {
					if string(s.Labels[model.LabelName(k)]) != v {
						return false
					}
				}
				return true
			})
		}
		if !match {
			ok = false
		}
		exp = append(exp, alertLine(a)+" "+expText)
		for _, g := range gotText {
			got = append(got, alertLine(a)+" "+g)
		}
	}
	if !ok {
		c.diff(e.Pos, "exp_inhibited", exp, got)
	}
}

func (c *check) checkMuted(e *Expect[Muted], o *outcome) {
	want := e.Value
	if want.Muted && c.test.At.IsZero() {
		c.fail(e.Pos, "exp_muted", "    time intervals are evaluated at `at`: set at: to the time of the test")
		return
	}
	var exp, got []string
	ok := true
	for _, r := range o.routes {
		why, muted := o.muted[r]
		recv := r.RouteOpts.Receiver
		expMuted := want.Muted
		if want.IsList {
			expMuted = slices.Contains(want.Receivers, recv)
		}
		if muted != expMuted || (want.Interval != "" && !slices.Contains(strings.Split(why, ", "), want.Interval)) {
			ok = false
		}
		expText := recv + " not muted"
		if expMuted {
			expText = recv + " muted"
			if want.Interval != "" {
				expText += " by " + want.Interval
			}
		}
		gotText := recv + " not muted"
		if muted {
			gotText = recv + " muted by " + why
			if want.Interval == "" && expMuted {
				gotText = expText // the reason was not asserted
			}
		}
		exp = append(exp, expText)
		got = append(got, gotText)
	}
	if want.IsList {
		for _, recv := range want.Receivers {
			if !slices.Contains(recvs(o), recv) {
				ok = false
				exp = append(exp, recv+" muted")
			}
		}
	}
	if !ok {
		c.diff(e.Pos, "exp_muted", exp, got)
	}
}

func recvs(o *outcome) []string {
	var out []string
	for _, r := range o.routes {
		out = append(out, r.RouteOpts.Receiver)
	}
	return out
}

// alertsUnderTest builds the alerts: explicit ones start at `at`; those of
// a rule test start when their rule fired, and `at` defaults to the time
// of the rule test's eval_time.
func (c *check) alertsUnderTest(ctx context.Context, at *time.Time) ([]*alert.Alert, error) {
	t := c.test
	if t.FromRuleTest == nil {
		var out []*alert.Alert
		for _, a := range t.Alerts {
			out = append(out, newAlert(a.Labels, a.Annotations, *at))
		}
		return out, nil
	}
	fr := t.FromRuleTest
	path := fr.File
	if !filepath.IsAbs(path) {
		path = filepath.Join(c.dir, path)
	}
	fired, err := ruletest.AlertsAt(ctx, c.opts.RuleTests, path, fr.Group, fr.EvalTime)
	if err != nil {
		return nil, fmt.Errorf("from_rule_test: %w", err)
	}
	if len(fired) == 0 {
		return nil, fmt.Errorf("from_rule_test: no alert fires in %s at %s", fr.File, model.Duration(fr.EvalTime))
	}
	var out []*alert.Alert
	for _, f := range fired {
		a := newAlert(f.Labels.Map(), f.Annotations.Map(), f.FiredAt)
		out = append(out, a)
		if at.IsZero() {
			*at = f.FiredAt
		}
	}
	return out, nil
}

func newAlert(ls, ann map[string]string, at time.Time) *alert.Alert {
	a := model.Alert{Labels: labelSet(ls), Annotations: labelSet(ann), StartsAt: at}
	if at.IsZero() {
		a.StartsAt = time.Unix(0, 0).UTC()
	}
	return alert.New(a, a.StartsAt, false)
}

func labelSet(m map[string]string) model.LabelSet {
	ls := make(model.LabelSet, len(m))
	for k, v := range m {
		ls[model.LabelName(k)] = model.LabelValue(v)
	}
	return ls
}

func alertLine(a *alert.Alert) string { return a.Labels.String() }

// checkPayload renders what the receiver is sent: every group of the
// alerts under test routed to it, without the inhibited and silenced
// alerts, unless a time interval mutes the route.
func (c *check) checkPayload(ctx context.Context, ep ExpPayload, o *outcome, at time.Time) {
	var payloads []rendered
	reached := false
	for _, g := range o.groups {
		if g.route.RouteOpts.Receiver != ep.Receiver {
			continue
		}
		reached = true
		if _, muted := o.muted[g.route]; muted {
			continue
		}
		var alerts []*alert.Alert
		for _, a := range g.alerts {
			fp := a.Fingerprint()
			if len(o.inhibitors[fp]) == 0 && len(o.silencedBy[fp]) == 0 {
				alerts = append(alerts, a)
			}
		}
		if len(alerts) == 0 {
			continue
		}
		rt := at
		if rt.IsZero() {
			rt = time.Unix(0, 0).UTC()
		}
		ps, err := notifier.RenderPayloads(ctx, c.opts.Config, c.opts.Render, notifier.RenderGroup{
			Receiver: ep.Receiver, GroupKey: g.key, GroupLabels: g.labels, RouteLabels: g.route.RouteOpts.Labels,
			Alerts: alerts, At: rt,
		})
		if err != nil {
			c.fail(ep.Pos, "exp_payloads", "    "+err.Error())
			return
		}
		if c.opts.Coverage != nil {
			c.opts.Coverage.renderedFor(ep.Receiver)
		}
		for _, p := range ps {
			payloads = append(payloads, rendered{Integration: p.Integration, Group: g.key, Body: p.Body})
		}
	}
	if len(payloads) == 0 {
		why := "no alert under test is routed to it"
		if reached {
			why = "its alerts are inhibited, silenced or muted"
		}
		c.fail(ep.Pos, "exp_payloads", fmt.Sprintf("    receiver %s is sent nothing: %s", ep.Receiver, why))
		return
	}
	for _, s := range ep.Contains {
		found := false
		for _, p := range payloads {
			if bytes.Contains(p.Body, []byte(s)) || bytes.Contains(indentJSON(p.Body), []byte(s)) {
				found = true
			}
		}
		if !found {
			c.fail(ep.Pos, "exp_payloads", fmt.Sprintf("    receiver %s: no payload contains %q; got:\n%s", ep.Receiver, s, indent("        "+strings.TrimSuffix(string(goldenText(payloads)), "\n"), "        ")))
		}
	}
	if ep.Golden == "" {
		return
	}
	path := ep.Golden
	if !filepath.IsAbs(path) {
		path = filepath.Join(c.dir, path)
	}
	got := goldenText(payloads)
	if c.opts.Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			err = os.WriteFile(path, got, 0o644)
			if err == nil {
				fmt.Fprintf(c.opts.Stdout, "  updated %s\n", path)
				return
			}
			c.fail(ep.Pos, "exp_payloads", "    writing golden file: "+err.Error())
			return
		} else {
			c.fail(ep.Pos, "exp_payloads", "    writing golden file: "+err.Error())
			return
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		c.fail(ep.Pos, "exp_payloads", fmt.Sprintf("    golden file %s: %v (paged test --update writes it)", ep.Golden, errors.Unwrap(err)))
		return
	}
	if !bytes.Equal(want, got) {
		c.fail(ep.Pos, "exp_payloads", fmt.Sprintf("    receiver %s differs from %s (paged test --update rewrites it):\n        diff (- golden, + got):\n            %s",
			ep.Receiver, ep.Golden, indent(lineDiff(lines(want), lines(got)), "            ")))
	}
}

// rendered is one payload in a golden file.
type rendered struct {
	Integration string          `json:"integration"`
	Group       string          `json:"group"`
	Body        json.RawMessage `json:"body"`
}

// goldenText is the golden file of a receiver: the payload itself, indented,
// when one request is sent; else the list of requests with their
// integration and group.
func goldenText(ps []rendered) []byte {
	if len(ps) == 1 {
		return append(indentJSON(ps[0].Body), '\n')
	}
	b, err := json.Marshal(ps)
	if err != nil {
		return []byte(err.Error())
	}
	return append(indentJSON(b), '\n')
}

func indentJSON(b []byte) []byte {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return b
	}
	return out.Bytes()
}

func lines(b []byte) []string {
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}
