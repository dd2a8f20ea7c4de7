package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	promrules "github.com/prometheus/prometheus/rules"
)

// firingRule returns a rule holding n firing alerts.
func firingRule(b *testing.B, n int, ts time.Time) *promrules.AlertingRule {
	expr, err := parser.NewParser(parser.Options{}).ParseExpr("llm_load > 0")
	if err != nil {
		b.Fatal(err)
	}
	ar := promrules.NewAlertingRule("Many", expr, 0, 0, labels.EmptyLabels(), labels.EmptyLabels(), labels.EmptyLabels(), "", true, nil)
	vec := make(promql.Vector, n)
	for i := range vec {
		vec[i] = promql.Sample{Metric: labels.FromStrings("server", fmt.Sprintf("s%05d", i), "model_name", "llama", "severity", "warning"), F: 1}
	}
	if _, err := ar.Eval(context.Background(), 0, ts, answer(ar.Query().String(), vec), nil, 0); err != nil {
		b.Fatal(err)
	}
	return ar
}

// BenchmarkStateCommit10k is the cost of writing the alert state of a
// group with 10,000 firing alerts after one evaluation: when nothing but
// the values changed (most evaluations), when ten alerts were sent again
// (an evaluation where a few change), and when every alert was (once per
// resend delay), fsync included.
func BenchmarkStateCommit10k(b *testing.B) {
	for _, tc := range []struct {
		name   string
		resend int
	}{{"unchanged", 0}, {"ten-resent", 10}, {"all-resent", 10_000}} {
		b.Run(tc.name, func(b *testing.B) {
			s, err := openStateStore(b.TempDir(), nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer s.close()
			ts := time.Now()
			ar := firingRule(b, 10_000, ts)
			src := []alertSource{{id: ruleID{name: "Many"}, rule: ar}}
			seq, _ := s.commit("g", ts, src, nil) // the first commit puts every alert
			if err := s.log.Wait(seq); err != nil {
				b.Fatal(err)
			}
			st0 := s.log.Stats()
			b.ResetTimer()
			for i := range b.N {
				ts = ts.Add(time.Second)
				if tc.resend > 0 {
					b.StopTimer()
					n := 0
					ar.ForEachActiveAlert(func(a *promrules.Alert) {
						if n++; n <= tc.resend {
							a.LastSentAt, a.ValidUntil = ts, ts.Add(4*time.Minute)
						}
					})
					b.StartTimer()
				}
				seq, changed := s.commit("g", ts, src, nil)
				if changed != (tc.resend > 0) {
					b.Fatalf("commit %d: changed = %v", i, changed)
				}
				if changed {
					if err := s.log.Wait(seq); err != nil {
						b.Fatal(err)
					}
				}
			}
			st := s.log.Stats()
			b.ReportMetric(float64(st.Bytes-st0.Bytes)/float64(b.N), "B/commit")
			b.ReportMetric(float64(st.Fsyncs-st0.Fsyncs)/float64(b.N), "fsyncs/commit")
		})
	}
}

// BenchmarkHistoryEvents10k is the engine's share of the history's cost
// in an evaluation where 10,000 alerts change state: turning their
// transitions into events (labels with the external ones, details). The
// history's commit of them is measured by bench/history.
func BenchmarkHistoryEvents10k(b *testing.B) {
	ts := time.Now()
	ar := firingRule(b, 10_000, ts)
	var trans []transition
	ar.ForEachActiveAlert(func(a *promrules.Alert) { trans = append(trans, newTransition(promrules.StatePending, a)) })
	ext := labels.FromStrings("cluster", "eu-1")
	b.ReportAllocs()
	for b.Loop() {
		if evs := transitionEvents(trans, ext, ts, "many"); len(evs) != len(trans) {
			b.Fatalf("%d events of %d transitions", len(evs), len(trans))
		}
	}
}
