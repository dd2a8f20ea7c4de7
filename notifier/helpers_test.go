package notifier

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/rules"
)

type syncBuffer = testbin.SyncBuffer

// running is a Notifier whose Run goroutine the test owns.
type running struct {
	*Notifier
	logs *syncBuffer
	stop func() // cancels Run and waits for it (state flushed)
}

func mustConfig(t testing.TB, text string) *Config {
	t.Helper()
	c, err := ParseConfig([]byte(text))
	if err != nil {
		t.Fatalf("config: %v\n%s", err, text)
	}
	return c
}

func start(t testing.TB, conf string, opts Options) *running {
	t.Helper()
	opts.Config = mustConfig(t, conf)
	logs := &syncBuffer{}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if opts.ExternalURL == "" {
		opts.ExternalURL = "http://paged.example:9095"
	}
	n, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return runNotifier(t, n, logs)
}

// runNotifier starts n's Run; stop (also run at cleanup) cancels it and
// waits.
func runNotifier(t testing.TB, n *Notifier, logs *syncBuffer) *running {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return &running{Notifier: n, logs: logs, stop: stop}
}

// firing makes an alert that starts now and is valid for an hour. (An
// alert that started longer than group_wait ago flushes its group at once,
// possibly before the other alerts of the same Notify call are grouped.)
func firing(name string, extra ...string) *rules.Alert {
	now := time.Now()
	ls := append([]string{"alertname", name}, extra...)
	return &rules.Alert{
		Labels: labels.FromStrings(ls...),
		Annotations: labels.FromStrings(
			"summary", "KV cache of "+name+" is saturated",
			"description", "usage is 97% on vllm-0",
			"runbook_url", "vllm/"+name+".md",
			"dashboard_url", "https://grafana.example/d/vllm",
		),
		StartsAt:     now,
		EndsAt:       now.Add(time.Hour),
		GeneratorURL: "http://prometheus.example/graph?g0.expr=up",
	}
}

// resolvedNow returns a copy of a resolved at now.
func resolvedNow(a *rules.Alert) *rules.Alert {
	c := *a
	c.EndsAt = time.Now()
	return &c
}

func contains(t testing.TB, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}

// tinyRoute is a route with timers small enough for tests.
const tinyRoute = `
route:
  receiver: %s
  group_by: [alertname]
  group_wait: 20ms
  group_interval: 100ms
  repeat_interval: 1h
`
