package embedded

import (
	"reflect"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

func TestKeepFor(t *testing.T) {
	for _, c := range []struct {
		exprs []string
		want  *Keep
	}{
		{[]string{`histogram_quantile(0.99, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[5m])))`, `vllm:num_requests_waiting > 10`},
			&Keep{Names: []string{"vllm:num_requests_waiting", "vllm:time_to_first_token_seconds_bucket"}}},
		{[]string{`rate({__name__="tgi_request_count"}[1m]) / ignoring(x) up`, `count({__name__=~"sglang:.*"})`},
			&Keep{Names: []string{"tgi_request_count", "up"}, Patterns: []string{"sglang:.*"}}},
		{[]string{`vllm:num_requests_running`, `{job="vllm"}`}, nil}, // any name: keep all
		{[]string{`{__name__!="up", job="vllm"}`}, nil},              // negative name matcher: keep all
		{[]string{`vector(1)`}, &Keep{}},                             // reads nothing: only scrape health
	} {
		var exprs []parser.Expr
		for _, s := range c.exprs {
			e, err := parser.NewParser(parser.Options{}).ParseExpr(s)
			if err != nil {
				t.Fatal(err)
			}
			exprs = append(exprs, e)
		}
		if got := KeepFor(exprs...); !reflect.DeepEqual(got, c.want) {
			t.Errorf("KeepFor(%q) = %+v, want %+v", c.exprs, got, c.want)
		}
	}
}

// TestKeepRelabelConfig: the filter keeps the listed names, exactly, and
// names matching the patterns, anchored; an empty filter drops every
// scraped series.
func TestKeepRelabelConfig(t *testing.T) {
	rc := (&Keep{Names: []string{"vllm:num_requests_running", "a.b"}, Patterns: []string{"sglang:.*"}}).relabelConfig()
	for name, want := range map[string]bool{
		"vllm:num_requests_running": true, "a.b": true, "axb": false, "sglang:foo": true,
		"vllm:num_requests_running_total": false, "xsglang:foo": false, "up2": false,
	} {
		if got := rc.Regex.MatchString(name); got != want {
			t.Errorf("%s kept=%v, want %v", name, got, want)
		}
	}
	if (&Keep{}).relabelConfig().Regex.MatchString("vllm:num_requests_running") {
		t.Error("an empty filter keeps a series")
	}
	if (*Keep)(nil).relabelConfig() != nil {
		t.Error("nil filter has a relabel config")
	}
}
