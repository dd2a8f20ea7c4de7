package notifier

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// The deferred handler writes exactly what the wrapped one writes, with
// the same attributes and groups in the same order.
func TestDeferAttrsSameOutput(t *testing.T) {
	log := func(l *slog.Logger) {
		a := l.With("component", "dispatcher")
		b := a.WithGroup("ag").With("key", "{}:{alertname=\"X\"}", "n", 3)
		a.Debug("hidden", "x", 1)
		b.Info("flushing", "alerts", 2)
		a.Warn("done")
		l.With().Info("plain")
	}
	var want, got bytes.Buffer
	opts := &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	log(slog.New(slog.NewTextHandler(&want, opts)))
	log(slog.New(deferAttrs(slog.NewTextHandler(&got, opts))))
	if got.String() != want.String() {
		t.Fatalf("deferred handler wrote\n%s\nthe text handler\n%s", got.String(), want.String())
	}
	if strings.Contains(got.String(), "hidden") || !strings.Contains(got.String(), `ag.key="{}:{alertname=\"X\"}" ag.n=3 ag.alerts=2`) {
		t.Fatalf("unexpected output:\n%s", got.String())
	}
}

// With on a handler whose level is off allocates nothing beyond the
// recorded attributes: the wrapped handler's WithAttrs never runs.
func TestDeferAttrsNotFormattedWhenOff(t *testing.T) {
	c := &countingHandler{}
	l := slog.New(deferAttrs(c))
	for range 100 {
		l.With("aggrGroup", "x").Debug("flushing")
	}
	if c.withAttrs != 0 {
		t.Fatalf("wrapped WithAttrs called %d times for records that were never enabled", c.withAttrs)
	}
	l.With("a", 1).Error("boom")
	if c.withAttrs != 1 || c.handled != 1 {
		t.Fatalf("an enabled record: WithAttrs %d, Handle %d; want 1, 1", c.withAttrs, c.handled)
	}
}

type countingHandler struct {
	slog.Handler
	withAttrs, handled int
}

func (c *countingHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (c *countingHandler) Handle(context.Context, slog.Record) error    { c.handled++; return nil }
func (c *countingHandler) WithAttrs([]slog.Attr) slog.Handler           { c.withAttrs++; return c }
func (c *countingHandler) WithGroup(string) slog.Handler                { return c }

// go test -run '^$' -bench LoggerWith ./notifier/: what one aggregation
// group's loggers cost with the text handler and with deferAttrs on it.
func BenchmarkLoggerWith(b *testing.B) {
	for _, bc := range []struct {
		name string
		h    slog.Handler
	}{
		{"text", slog.NewTextHandler(io.Discard, nil)},
		{"deferred", deferAttrs(slog.NewTextHandler(io.Discard, nil))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l := slog.New(bc.h).With("component", "dispatcher")
			b.ReportAllocs()
			for b.Loop() {
				l.With("aggrGroup", `{}:{alertname="HighLatency", instance="gpu-7:8000"}`).
					With("receiver", "slack", "integration", "slack[0]").Debug("flushing")
			}
		})
	}
}
