package rules

import (
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// TestSeriesChecks: what each selector is reduced to, which are skipped
// and why, and the catalogue's hints.
func TestSeriesChecks(t *testing.T) {
	type want struct {
		selector, checked string
		skip              string // substring of the reason; "" when checked
		hint              string // substring of the hint; "" when none
	}
	cases := []struct {
		name string
		expr string
		opts SeriesCheckOptions
		want []want
	}{
		{
			name: "value labels of a known metric are dropped, identity kept",
			expr: `sum(rate(vllm:request_success_total{finished_reason="error", job="vllm-prod", model_name=~"llama.*"}[5m])) > 0`,
			want: []want{{selector: `vllm:request_success_total{finished_reason="error",job="vllm-prod",model_name=~"llama.*"}`,
				checked: `vllm:request_success_total{job="vllm-prod",model_name=~"llama.*"}`}},
		},
		{
			name: "histogram buckets counted through _count, TGI method dropped",
			expr: `rate(vllm:e2e_request_latency_seconds_bucket{le="60", engine="0"}[5m]) and tgi_batch_inference_count{method="prefill", instance="a:1"}`,
			want: []want{
				{selector: `vllm:e2e_request_latency_seconds_bucket{engine="0",le="60"}`, checked: `vllm:e2e_request_latency_seconds_count{engine="0"}`},
				{selector: `tgi_batch_inference_count{instance="a:1",method="prefill"}`, checked: `tgi_batch_inference_count{instance="a:1"}`},
			},
		},
		{
			name: "a relabelled target label of a known metric is kept",
			expr: `vllm:num_requests_waiting{team="llm", region=~"eu-.*"}`,
			want: []want{{selector: `vllm:num_requests_waiting{region=~"eu-.*",team="llm"}`, checked: `vllm:num_requests_waiting{region=~"eu-.*",team="llm"}`}},
		},
		{
			name: "unknown metric: only identity labels",
			expr: `kube_pod_status_phase{phase="Running", namespace="llm", team="a"} == 1`,
			want: []want{{selector: `kube_pod_status_phase{namespace="llm",phase="Running",team="a"}`, checked: `kube_pod_status_phase{namespace="llm"}`}},
		},
		{
			name: "unknown metric keeps what the pack selector added",
			expr: `up{job="vllm", tier="prod", le="x"} == 0`,
			opts: SeriesCheckOptions{Keep: []string{"tier"}},
			want: []want{{selector: `up{job="vllm",le="x",tier="prod"}`, checked: `up{job="vllm",tier="prod"}`}},
		},
		{
			name: "absent and absent_over_time are skipped",
			expr: `absent(up{job="vllm"}) == 1 or absent_over_time(vllm:num_requests_running[10m])`,
			want: []want{
				{selector: `up{job="vllm"}`, skip: "inside absent()"},
				{selector: `vllm:num_requests_running`, skip: "inside absent_over_time()"},
			},
		},
		{
			name: "right of unless is skipped, left checked",
			expr: `up == 0 unless on (instance) maintenance_mode == 1`,
			want: []want{
				{selector: `up`, checked: `up`},
				{selector: `maintenance_mode`, skip: "right of unless"},
			},
		},
		{
			name: "a side of or with a fallback is skipped",
			expr: `sum(rate(errors_total{code="500"}[5m])) or vector(0)`,
			want: []want{{selector: `errors_total{code="500"}`, skip: "fallback"}},
		},
		{
			name: "both sides of or with selectors are checked",
			expr: `a_metric or b_metric`,
			want: []want{{selector: `a_metric`, checked: `a_metric`}, {selector: `b_metric`, checked: `b_metric`}},
		},
		{
			name: "new or old name of a renamed metric: both sides skipped, other selectors checked",
			expr: `sum(rate(vllm:inter_token_latency_seconds_bucket[5m]) or rate(vllm:time_per_output_token_seconds_bucket{engine!=""}[5m])) and vllm:num_requests_running`,
			want: []want{
				{selector: `vllm:inter_token_latency_seconds_bucket`, skip: "renamed metric"},
				{selector: `vllm:time_per_output_token_seconds_bucket{engine!=""}`, skip: "renamed metric"},
				{selector: `vllm:num_requests_running`, checked: `vllm:num_requests_running`},
			},
		},
		{
			name: "metrics that appear with the first event are skipped",
			expr: `rate(tgi_request_failure{err="overloaded"}[5m]) / rate(http_requests_total{status="5xx"}[5m])`,
			want: []want{
				{selector: `tgi_request_failure{err="overloaded"}`, skip: "until the first failed request"},
				{selector: `http_requests_total{status="5xx"}`, skip: "until the first API request"},
			},
		},
		{
			name: "ALERTS and recorded names are skipped",
			expr: `ALERTS{alertname="X"} and job:errors:rate5m > 1`,
			opts: SeriesCheckOptions{Recorded: func(n string) bool { return n == "job:errors:rate5m" }},
			want: []want{
				{selector: `ALERTS{alertname="X"}`, skip: "ALERTS"},
				{selector: `job:errors:rate5m`, skip: "recording rule"},
			},
		},
		{
			name: "nothing left to select",
			expr: `{status="5xx", engine=""}`,
			want: []want{{selector: `{engine="",status="5xx"}`, skip: "no matcher that selects series"}},
		},
		{
			name: "duplicates once, offset ignored",
			expr: `vllm:num_requests_running offset 5m > vllm:num_requests_running`,
			want: []want{{selector: `vllm:num_requests_running`, checked: `vllm:num_requests_running`}},
		},
		{
			name: "removed metric: hint with version and replacement",
			expr: `max(vllm:gpu_cache_usage_perc{job="vllm"}) > 0.9`,
			want: []want{{selector: `vllm:gpu_cache_usage_perc{job="vllm"}`, checked: `vllm:gpu_cache_usage_perc{job="vllm"}`,
				hint: "vllm:gpu_cache_usage_perc was removed from vLLM in 0.12 (removed by PR #29330, merged 2025-11-24): use vllm:kv_cache_usage_perc"}},
		},
		{
			name: "renamed histogram keeps its suffix in the hint",
			expr: `rate(vllm:time_per_output_token_seconds_bucket{le="1"}[5m])`,
			want: []want{{selector: `vllm:time_per_output_token_seconds_bucket{le="1"}`, checked: `vllm:time_per_output_token_seconds_count`,
				hint: "use vllm:inter_token_latency_seconds_bucket"}},
		},
		{
			name: "newer name: what older releases expose",
			expr: `rate(vllm:inter_token_latency_seconds_count[5m])`,
			want: []want{{selector: `vllm:inter_token_latency_seconds_count`, checked: `vllm:inter_token_latency_seconds_count`,
				hint: "older releases expose vllm:time_per_output_token_seconds_count instead"}},
		},
		{
			name: "not enabled by default",
			expr: `rate(vllm:spec_decode_num_drafts_total[5m])`,
			want: []want{{selector: `vllm:spec_decode_num_drafts_total`, checked: `vllm:spec_decode_num_drafts_total`,
				hint: "exists only with speculative decoding configured (not enabled by default)"}},
		},
		{
			name: "counter without _total, label the server does not set",
			expr: `rate(vllm:num_preemptions[5m]) and vllm:num_requests_running{model="x"}`,
			want: []want{
				{selector: `vllm:num_preemptions`, checked: `vllm:num_preemptions`, hint: "vLLM exposes this counter as vllm:num_preemptions_total"},
				{selector: `vllm:num_requests_running{model="x"}`, checked: `vllm:num_requests_running{model="x"}`, hint: "has no label model (its labels: model_name, engine)"},
			},
		},
		{
			name: "V0 rule on a removed metric: accepted, but moved to V1 is the likely cause",
			expr: `vllm:num_requests_swapped{engine=""} > 0`,
			opts: SeriesCheckOptions{Server: "vllm-v0"},
			want: []want{{selector: `vllm:num_requests_swapped{engine=""}`, checked: `vllm:num_requests_swapped{engine=""}`,
				hint: "needs the vllm pack instead of vllm-v0"}},
		},
		{
			name: "a current metric without history says nothing",
			expr: `vllm:num_requests_running > 9`,
			want: []want{{selector: `vllm:num_requests_running`, checked: `vllm:num_requests_running`}},
		},
	}
	p := parser.NewParser(parser.Options{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			expr, err := p.ParseExpr(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			got := SeriesChecks(expr, tc.opts)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d selectors, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Selector != w.selector {
					t.Errorf("[%d] selector %q, want %q", i, g.Selector, w.selector)
				}
				if w.skip != "" {
					if !strings.Contains(g.Skip, w.skip) || g.Checked != "" {
						t.Errorf("[%d] %s: skip %q checked %q, want skipped for %q", i, w.selector, g.Skip, g.Checked, w.skip)
					}
					continue
				}
				if g.Skip != "" || g.Checked != w.checked {
					t.Errorf("[%d] %s: checked %q (skip %q), want %q", i, w.selector, g.Checked, g.Skip, w.checked)
				}
				if w.hint == "" && g.Hint != "" {
					t.Errorf("[%d] %s: unexpected hint %q", i, w.selector, g.Hint)
				}
				if !strings.Contains(g.Hint, w.hint) {
					t.Errorf("[%d] %s: hint %q, want it to contain %q", i, w.selector, g.Hint, w.hint)
				}
			}
		})
	}
}

// TestSeriesChecksDropped lists the dropped labels, sorted.
func TestSeriesChecksDropped(t *testing.T) {
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(`tgi_batch_forward_duration_bucket{method="decode", le="0.5", job="tgi"} and {__name__="vllm:e2e_request_latency_seconds_bucket", le="1"}`)
	if err != nil {
		t.Fatal(err)
	}
	got := SeriesChecks(expr, SeriesCheckOptions{})
	if len(got) != 2 || strings.Join(got[0].Dropped, ",") != "le,method" || got[0].Checked != `tgi_batch_forward_duration_count{job="tgi"}` {
		t.Fatalf("got %+v, want le and method dropped, the buckets counted through _count", got)
	}
	if got[1].Checked != `{__name__="vllm:e2e_request_latency_seconds_count"}` {
		t.Errorf("__name__ form: checked %s", got[1].Checked)
	}
	if len(got[0].Matchers) != 2 {
		t.Errorf("matchers %v, want __name__ and job", got[0].Matchers)
	}
}

// FuzzSeriesChecks: any expression the parser accepts is reduced without
// a panic, to selectors that parse again and keep only matchers the rule
// had.
func FuzzSeriesChecks(f *testing.F) {
	for _, s := range []string{
		`sum(rate(vllm:request_success_total{finished_reason="error"}[5m])) or vector(0)`,
		`absent(up{job="vllm"}) unless on() x{a="b"}`,
		`{__name__=~"vllm:.*", status!="5xx"}`,
		`histogram_quantile(0.9, rate(x_bucket{le="1"}[5m] offset 1h @ 100))`,
		`max_over_time(vllm:kv_cache_usage_perc[1h:5m]) > 0.25 and (- DCGM_FI_DEV_GPU_TEMP{gpu="0"})`,
		`{"utf8.metric", "a b"="c"}`,
	} {
		f.Add(s)
	}
	p := parser.NewParser(parser.Options{})
	f.Fuzz(func(t *testing.T, s string) {
		expr, err := p.ParseExpr(s)
		if err != nil {
			return
		}
		for _, sc := range SeriesChecks(expr, SeriesCheckOptions{Keep: []string{"tier"}}) {
			if sc.Skip != "" {
				if sc.Checked != "" {
					t.Fatalf("skipped selector %s has a check %s", sc.Selector, sc.Checked)
				}
				continue
			}
			ms, err := p.ParseMetricSelector(sc.Checked)
			if err != nil {
				t.Fatalf("checked selector %q of %q does not parse: %v", sc.Checked, s, err)
			}
			orig, err := p.ParseMetricSelector(sc.Selector)
			if err != nil {
				t.Fatalf("selector %q of %q does not parse: %v", sc.Selector, s, err)
			}
			for _, m := range ms {
				if m.Name == labels.MetricName && strings.HasSuffix(m.Value, "_count") {
					// The buckets of a histogram, counted through _count.
					c := *m
					c.Value = strings.TrimSuffix(m.Value, "_count") + "_bucket"
					if hasMatcher(orig, &c) {
						continue
					}
				}
				if !hasMatcher(orig, m) {
					t.Fatalf("checked %q adds %s to %q", sc.Checked, m, sc.Selector)
				}
			}
		}
	})
}

func hasMatcher(ms []*labels.Matcher, m *labels.Matcher) bool {
	for _, o := range ms {
		if o.Name == m.Name && o.Type == m.Type && o.Value == m.Value {
			return true
		}
	}
	return false
}
