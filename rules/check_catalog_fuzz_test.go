package rules

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// The catalog and type checks must survive any tree: nil children, typed
// nil nodes, calls without a function, selectors without matchers, and
// positions that fall outside the expression text.
func TestCatalogChecksOddAST(t *testing.T) {
	vs := func(name string, ms ...*labels.Matcher) *parser.VectorSelector {
		return &parser.VectorSelector{Name: name, LabelMatchers: ms}
	}
	hq := parser.Functions["histogram_quantile"]
	rate := parser.Functions["rate"]
	odd := []parser.Expr{
		(*parser.VectorSelector)(nil),
		(*parser.AggregateExpr)(nil),
		(*parser.BinaryExpr)(nil),
		(*parser.Call)(nil),
		(*parser.MatrixSelector)(nil),
		(*parser.SubqueryExpr)(nil),
		(*parser.ParenExpr)(nil),
		&parser.AggregateExpr{Op: parser.SUM},
		&parser.AggregateExpr{Op: parser.SUM, Grouping: []string{"model"}, Expr: vs("vllm:kv_cache_usage_perc")},
		&parser.BinaryExpr{Op: parser.GTR, RHS: vs("vllm:num_preemptions_total")},
		&parser.BinaryExpr{Op: parser.LAND, LHS: vs("tgi_request_count")},
		&parser.Call{Args: []parser.Expr{nil, vs("vllm:kv_cache_usage_perc")}},
		&parser.Call{Func: rate},
		&parser.Call{Func: rate, Args: []parser.Expr{nil}},
		&parser.Call{Func: rate, Args: []parser.Expr{&parser.MatrixSelector{}}},
		&parser.Call{Func: rate, Args: []parser.Expr{&parser.SubqueryExpr{}}},
		&parser.Call{Func: rate, Args: []parser.Expr{&parser.ParenExpr{}}},
		&parser.Call{Func: hq},
		&parser.Call{Func: hq, Args: []parser.Expr{&parser.NumberLiteral{Val: 0.9}, nil}},
		&parser.Call{Func: hq, Args: []parser.Expr{&parser.NumberLiteral{Val: 0.9}, &parser.AggregateExpr{Op: parser.SUM, Expr: vs("x_bucket")}}},
		vs(""),
		vs("", nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", "vllm:num_preemptions")),
		vs("vllm:time_to_first_token_seconds_bucket", nil, labels.MustNewMatcher(labels.MatchEqual, "le", "2"), labels.MustNewMatcher(labels.MatchEqual, "model", "x")),
		&parser.UnaryExpr{Op: parser.SUB},
		&parser.StepInvariantExpr{},
		&parser.ParenExpr{Expr: &parser.ParenExpr{}},
		&parser.NumberLiteral{},
		&parser.StringLiteral{},
	}
	for i, ast := range odd {
		t.Run(fmt.Sprintf("%d_%T", i, ast), func(t *testing.T) {
			f := ParseFile("odd.yaml", []byte("groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n"), ParseOptions{})
			if len(f.Groups) != 1 || len(f.Groups[0].Rules) != 1 {
				t.Fatal("fixture did not load")
			}
			f.Groups[0].Rules[0].Expr.AST = ast
			cfg := DefaultConfig()
			cfg.Prometheus = fakeProm{}
			var out []Finding
			// Every check, not only the catalogue's: none may panic.
			ran := 0
			for _, ch := range Checks() {
				ran++
				p := &Pass{File: f, Config: cfg, check: ch, out: &out}
				if ch.File != nil {
					ch.File(p, f)
				}
				if ch.Rule != nil {
					p.group, p.rule = f.Groups[0], f.Groups[0].Rules[0]
					ch.Rule(p, f.Groups[0].Rules[0])
				}
			}
			if ran != len(Checks()) || ran < 20 {
				t.Fatalf("ran %d checks", ran)
			}
			for _, fd := range out {
				if fd.Range.Start.Line < 1 || fd.Range.Start.Column < 1 {
					t.Errorf("finding without a position: %s", fd)
				}
			}
		})
	}
}

type fakeProm struct{}

func (fakeProm) SeriesExist(sel string) (bool, error) { return strings.Contains(sel, "up"), nil }

// FuzzCatalogChecks feeds expressions through the loader and the catalog
// and type checks: they must never panic, and every finding has a position
// inside the file.
func FuzzCatalogChecks(f *testing.F) {
	for _, s := range []string{
		`rate(vllm:num_preemptions[5m]) > 1`,
		`histogram_quantile(0.9, sum by (model) (rate(vllm:time_to_first_token_seconds_bucket{le="2"}[5m])))`,
		`sum without (le) (tgi_request_count_total) / on() group_left vllm:gpu_cache_usage_perc{model="x"}`,
		`{__name__="vllm:num_gpu_blocks_free"} - vllm:num_preemptions_total offset 1h`,
		`rate(sglang:num_queue_reqs[10m:30s]) and count(DCGM_FI_DEV_GPU_UTILS)`,
		`label_replace(vllm:kv_cache_usage_perc, "model", "$1", "model_name", "(.*)")`,
		`max(DCGM_FI_DEV_FB_USED) / (sum(DCGM_FI_DEV_FB_USED) + DCGM_FI_DEV_FB_FREE) * 100 > 90`,
		`rate(nv_inference_request_duration_us[5m]) / rate(nv_inference_request_success[5m]) / 1e6 > 0.5`,
		`rate(x_bucket{le="1"}[5m]) / on (le) group_left rate(x_count[5m]) unless sum by (code) (http_request_duration_seconds_count{status="5xx"})`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		if len(expr) > 4096 {
			return
		}
		src := "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: " + yamlQuote(expr) + "\n    labels: {server: vllm-v0}\n"
		file := ParseFile("fuzz.yaml", []byte(src), ParseOptions{})
		cfg := DefaultConfig()
		cfg.Only = append([]string{CheckSeriesLive}, catalogCheckNames...)
		cfg.Prometheus = fakeProm{}
		lines := strings.Count(src, "\n") + 1
		for _, fd := range Lint([]*File{file}, cfg) {
			if fd.Range.Start.Line < 1 || fd.Range.Start.Line > lines {
				t.Errorf("finding outside the file: %s", fd)
			}
		}
	})
}

func yamlQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "\r", `\r`).Replace(s) + `"`
}
