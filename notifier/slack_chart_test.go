package notifier

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"

	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/notifier/slackchart"
	"github.com/pagedhq/paged/rules"
)

// rangeFunc is a ChartSource answering from a function.
type rangeFunc func(ctx context.Context, expr string, start, end time.Time, step time.Duration) (promql.Matrix, error)

func (f rangeFunc) QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) (promql.Matrix, error) {
	return f(ctx, expr, start, end, step)
}

// ramp is one series per instance climbing from 0.5 to 1 over the range.
func ramp(instances ...string) rangeFunc {
	return func(_ context.Context, expr string, start, end time.Time, step time.Duration) (promql.Matrix, error) {
		var m promql.Matrix
		for _, inst := range instances {
			s := promql.Series{Metric: labels.FromStrings("__name__", "up", "instance", inst)}
			n := int(end.Sub(start)/step) + 1
			for i := range n {
				t := start.Add(time.Duration(i) * step)
				s.Floats = append(s.Floats, promql.FPoint{T: t.UnixMilli(), F: 0.5 + 0.5*float64(i)/float64(n)})
			}
			m = append(m, s)
		}
		return m, nil
	}
}

func TestSlackChartFollowsTheMessage(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	n := start(t, slackBotConfig(s, ""), Options{})
	var mu sync.Mutex
	var queried []string
	src := ramp("vllm-0:8000", "vllm-9:8000")
	n.SetChartSource(rangeFunc(func(ctx context.Context, expr string, start, end time.Time, step time.Duration) (promql.Matrix, error) {
		mu.Lock()
		queried = append(queried, expr)
		mu.Unlock()
		if d := end.Sub(start); d < time.Hour || d > 2*time.Hour {
			t.Errorf("chart range %s, want an hour before firing to now", d)
		}
		return src(ctx, expr, start, end, step)
	}))
	a := firing("KVCacheSaturated", "instance", "vllm-0:8000")
	n.Notify(context.Background(), []*rules.Alert{a})
	post := s.WaitCalls(t, 1, 10*time.Second)[0]
	if post.Method != "chat.postMessage" {
		t.Fatalf("first call %s, want the message before the chart", post.Method)
	}
	f := waitFile(t, s, 1)
	if f.ThreadTS != post.TS || !f.Completed || !strings.HasPrefix(f.Title, "KVCacheSaturated") {
		t.Fatalf("chart = %+v, want it completed in the thread of %s", f, post.TS)
	}
	img, err := png.Decode(bytes.NewReader(f.Bytes))
	if err != nil || img.Bounds().Dx() != slackchart.Width {
		t.Fatalf("chart is not the chart PNG: %v", err)
	}
	if err := os.WriteFile(filepath.Join(t.TempDir(), "chart.png"), f.Bytes, 0o644); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(queried) != 1 || queried[0] != "up" {
		t.Errorf("queried %q, want the rule's expression", queried)
	}
	mu.Unlock()
	if got := testutil.ToFloat64(n.charts.outcomes.WithLabelValues("uploaded")); got != 1 {
		t.Errorf("uploaded = %v", got)
	}
	// The resolution gets its chart too.
	n.Notify(context.Background(), []*rules.Alert{resolvedNow(a)})
	waitFile(t, s, 2)
}

// A failing datasource or upload leaves the page as it was.
func TestSlackChartFailuresLeaveThePage(t *testing.T) {
	s := notifiertest.NewSlack(t, testToken)
	n := start(t, slackBotConfig(s, ""), Options{})
	n.SetChartSource(rangeFunc(func(context.Context, string, time.Time, time.Time, time.Duration) (promql.Matrix, error) {
		return nil, errors.New("datasource down")
	}))
	n.Notify(context.Background(), []*rules.Alert{firing("KVCacheSaturated", "instance", "vllm-0:8000")})
	post := s.WaitCalls(t, 1, 10*time.Second)[0]
	waitOutcome(t, n, "query_failed")

	n.SetChartSource(ramp("vllm-1:8000"))
	s.Script(notifiertest.SlackReply{Method: "files.getUploadURLExternal", Error: "not_allowed_token_type"})
	n.Notify(context.Background(), []*rules.Alert{firing("ErrorRateHigh", "instance", "vllm-1:8000")})
	waitOutcome(t, n, "upload_failed")
	for _, f := range s.Files() {
		if f.Completed {
			t.Errorf("a chart was completed despite the failures: %+v", f)
		}
	}
	if m, ok := s.Message(post.Channel, post.TS); ok && m.Text != post.Text {
		t.Errorf("the message changed: %q", m.Text)
	}
}

func waitFile(t *testing.T, s *notifiertest.Slack, n int) notifiertest.SlackFile {
	t.Helper()
	// Drawing takes a few hundred milliseconds under the race detector
	// on a loaded machine; the deadline only ends a broken test.
	deadline := time.Now().Add(60 * time.Second)
	for {
		var done []notifiertest.SlackFile
		for _, f := range s.Files() {
			if f.Completed {
				done = append(done, f)
			}
		}
		if len(done) >= n {
			return done[n-1]
		}
		if time.Now().After(deadline) {
			var ms []string
			for _, c := range s.Calls() {
				ms = append(ms, c.Method+" "+c.Error)
			}
			t.Fatalf("%d chart(s) uploaded, want %d; calls: %q", len(done), n, ms)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitOutcome(t *testing.T, n *running, outcome string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for testutil.ToFloat64(n.charts.outcomes.WithLabelValues(outcome)) < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("no chart outcome %s:\n%s", outcome, n.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
