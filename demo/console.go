package demo

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/rules"
)

// console prints the demo for a person: phases, alerts as they fire and
// resolve (with their runbook links), webhook deliveries and the summary.
// It also keeps the alert history the script waits on. It is safe for
// concurrent use: the engine, the webhook sink and the script all write.
type console struct {
	out     io.Writer
	color   bool
	now     func() time.Time
	runbook func(ref string) string // resolves a runbook_url annotation

	mu      sync.Mutex
	active  map[uint64]*record // firing alerts by label hash
	history []*record          // every alert that fired, in firing order
	hooks   webhookCounts
	// sinkFiring holds the alerts (by label set) whose last state the
	// webhook sink received was firing.
	sinkFiring map[string]string
	changed    chan struct{} // closed and replaced on every change
}

// record is one alert instance from firing to resolution.
type record struct {
	Name     string
	Severity string
	Labels   labels.Labels
	Summary  string
	Runbook  string // resolved URL, "" without a runbook_url
	FiredAt  time.Time
	Resolved time.Time // zero while firing
	Stale    bool
}

// webhookCounts counts what the webhook sink received.
type webhookCounts struct {
	Notifications, Firing, Resolved int
}

func newConsole(out io.Writer, color bool, now func() time.Time, runbook func(string) string) *console {
	return &console{
		out: out, color: color, now: now, runbook: runbook,
		active: map[uint64]*record{}, sinkFiring: map[string]string{}, changed: make(chan struct{}),
	}
}

// ANSI styles, used only when color is on.
const (
	styleReset  = "\x1b[0m"
	styleBold   = "\x1b[1m"
	styleDim    = "\x1b[2m"
	styleRed    = "\x1b[31m"
	styleGreen  = "\x1b[32m"
	styleYellow = "\x1b[33m"
	styleBlue   = "\x1b[34m"
	styleCyan   = "\x1b[36m"
)

func (c *console) style(s string, styles ...string) string {
	if !c.color || len(styles) == 0 {
		return s
	}
	return strings.Join(styles, "") + s + styleReset
}

func severityStyle(sev string) string {
	switch sev {
	case "critical":
		return styleRed
	case "warning":
		return styleYellow
	case "info":
		return styleBlue
	}
	return ""
}

const clock = "15:04:05"

// indent lines up continuation lines under the alert name's column.
const indent = "          "

// printf writes one block of output under the lock.
func (c *console) printf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.out, format, args...)
}

// notify is the engine's NotifyFunc (teed before the notifier): it prints
// the transitions and ignores re-sends.
func (c *console) notify(_ context.Context, alerts []*rules.Alert) {
	now := c.now()
	var b strings.Builder
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := false
	for _, a := range alerts {
		h := a.Labels.Hash()
		r, firing := c.active[h]
		switch {
		case !a.Resolved(now) && !firing:
			r = &record{
				Name:     a.Labels.Get(labels.AlertName),
				Severity: a.Labels.Get("severity"),
				Labels:   a.Labels,
				Summary:  a.Annotations.Get("summary"),
				Runbook:  c.runbook(a.Annotations.Get("runbook_url")),
				FiredAt:  orNow(a.StartsAt, now),
				Stale:    a.Stale,
			}
			c.active[h] = r
			c.history = append(c.history, r)
			c.writeFiring(&b, r)
			changed = true
		case a.Resolved(now) && firing:
			r.Resolved = orNow(a.EndsAt, now)
			delete(c.active, h)
			c.writeResolved(&b, r)
			changed = true
		case firing && a.Stale != r.Stale:
			r.Stale = a.Stale
			state := "datasource answers again"
			if a.Stale {
				state = "datasource down: alert kept, marked stale"
			}
			fmt.Fprintf(&b, "%s  %s  %s: %s\n", now.Format(clock), c.style("STALE   ", styleDim), r.Name, state)
		}
	}
	_, _ = io.WriteString(c.out, b.String())
	if changed {
		c.signal()
	}
}

func orNow(t, now time.Time) time.Time {
	if t.IsZero() {
		return now
	}
	return t
}

func (c *console) writeFiring(b *strings.Builder, r *record) {
	fmt.Fprintf(b, "%s  %s  %s  %s\n",
		r.FiredAt.Format(clock),
		c.style("FIRING  ", styleBold, styleRed),
		c.style(fmt.Sprintf("%-8s", r.Severity), severityStyle(r.Severity)),
		c.style(r.Name, styleBold))
	if r.Summary != "" {
		fmt.Fprintf(b, "%s%s\n", indent, r.Summary)
	}
	if r.Runbook != "" {
		fmt.Fprintf(b, "%srunbook: %s\n", indent, c.style(r.Runbook, styleCyan))
	}
}

func (c *console) writeResolved(b *strings.Builder, r *record) {
	fmt.Fprintf(b, "%s  %s  %s  %s  %s\n",
		r.Resolved.Format(clock),
		c.style("RESOLVED", styleBold, styleGreen),
		c.style(fmt.Sprintf("%-8s", r.Severity), severityStyle(r.Severity)),
		c.style(r.Name, styleBold),
		c.style("after "+r.Resolved.Sub(r.FiredAt).Round(time.Second).String(), styleDim))
}

// sinkAlert is one alert of a webhook notification.
type sinkAlert struct {
	Name   string
	Key    string // the label set, identifying the alert
	Status string // firing or resolved
}

// webhook records and prints one notification received by the sink.
func (c *console) webhook(receiver, status string, alerts []sinkAlert) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hooks.Notifications++
	if status == "resolved" {
		c.hooks.Resolved++
	} else {
		c.hooks.Firing++
	}
	var names []string
	for _, a := range alerts {
		if a.Status == "resolved" {
			delete(c.sinkFiring, a.Key)
		} else {
			c.sinkFiring[a.Key] = a.Name
		}
		if !slices.Contains(names, a.Name) {
			names = append(names, a.Name)
		}
	}
	fmt.Fprintf(c.out, "%s%s\n", indent, c.style(fmt.Sprintf("↳ webhook %s received [%s] %s", receiver, strings.ToUpper(status), strings.Join(names, ", ")), styleDim))
	c.signal()
}

// waitSinkDrained waits until the webhook sink has seen every alert it
// saw firing resolved, at most timeout; then it notes what is missing and
// returns nil. It fails only when ctx ends or a component fails.
func (c *console) waitSinkDrained(ctx context.Context, timeout time.Duration, failed <-chan error) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		pending := slices.Sorted(maps.Values(c.sinkFiring))
		changed := c.changed
		c.mu.Unlock()
		if len(pending) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-failed:
			return err
		case <-deadline.C:
			c.printf("%s\n", c.style(fmt.Sprintf("── the webhook sink got no resolved notification for %s within %s", strings.Join(slices.Compact(pending), ", "), timeout), styleYellow))
			return nil
		case <-changed:
		}
	}
}

// signal wakes the waiters. Callers hold mu.
func (c *console) signal() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// phase announces a phase of the script.
func (c *console) phase(i, n int, p Phase, now time.Time) {
	line := fmt.Sprintf("── %s  phase %d/%d  %s: %s", now.Format(clock), i, n, p.Scenario, p.Title)
	if p.Await != "" {
		line += " (waiting for " + p.Await + ")"
	}
	c.printf("%s\n", c.style(line, styleBold, styleCyan))
}

// snapshot returns a copy of the history and a channel closed on the next
// change.
func (c *console) snapshot() ([]record, int, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]record, len(c.history))
	for i, r := range c.history {
		out[i] = *r
	}
	return out, len(c.active), c.changed
}

// counts returns what the webhook sink received.
func (c *console) webhookCounts() webhookCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hooks
}
