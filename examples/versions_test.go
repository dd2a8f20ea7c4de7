package examples_test

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/packs"
	"github.com/pagedhq/paged/rules"
	"github.com/pagedhq/paged/rules/catalog"
	"github.com/pagedhq/paged/simulator"
)

// simulated maps a pack to the simulator server whose output it is run
// against.
var simulated = map[string]simulator.Server{
	"vllm":              simulator.ServerVLLM,
	"vllm-features":     simulator.ServerVLLM,
	"vllm-v0":           simulator.ServerVLLMV0,
	"tgi":               simulator.ServerTGI,
	"sglang":            simulator.ServerSGLang,
	"triton":            simulator.ServerTriton,
	"dcgm":              simulator.ServerDCGM,
	"inference-gateway": simulator.ServerGateway,
}

// Every pack, against the simulator's output for every release it claims
// (pack.yaml releases, the catalogue's versions as data): an alert whose
// metrics the release does not expose cannot fire there, and pack.yaml
// must say so under unavailable, with the releases and why. An entry that
// is no longer true fails too. The log shows, per release, which alerts can
// fire.
func TestPacksPerVersion(t *testing.T) {
	all, err := packs.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		srv, ok := simulated[p.Name]
		if !ok {
			t.Errorf("pack %s has no simulated server: add it to simulated", p.Name)
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			releases := p.Releases
			line := p.Name
			if line == "vllm-features" {
				line = "vllm"
			}
			if want := catalog.Default().Releases(line); !slices.Equal(releases, want) {
				t.Errorf("pack.yaml releases %v, want the catalogue's %v (rules/catalog/additions.yaml)", releases, want)
			}
			if len(releases) == 0 {
				releases = []string{""} // no release history: the simulator's current names
			}
			alerts := alertExprs(t, p)
			for _, rel := range releases {
				present := simulatedNames(t, srv, rel)
				var can, cannot []string
				for _, a := range alerts {
					if canFire(a.expr, present) {
						can = append(can, a.name)
					} else {
						cannot = append(cannot, a.name)
					}
				}
				var declared []string
				for name, u := range p.Unavailable {
					if slices.Contains(u.Releases, rel) {
						declared = append(declared, name)
					}
				}
				sort.Strings(declared)
				sort.Strings(cannot)
				if !slices.Equal(cannot, declared) {
					t.Errorf("%s %s: alerts that cannot fire %v, pack.yaml unavailable says %v", p.Name, cmpOr(rel, "(current)"), cannot, declared)
				}
				t.Logf("%s %s: %d/%d alerts can fire; cannot: %v", p.Name, cmpOr(rel, "(current)"), len(can), len(alerts), cannot)
			}
			for name, u := range p.Unavailable {
				if !slices.ContainsFunc(alerts, func(a alertExpr) bool { return a.name == name }) {
					t.Errorf("pack.yaml unavailable names %s, which is not an alert of the pack", name)
				}
				for _, r := range u.Releases {
					if !slices.Contains(p.Releases, r) {
						t.Errorf("pack.yaml unavailable: %s: release %s is not in releases", name, r)
					}
				}
			}
		})
	}
}

// The per-version run fails where it should: the old VLLMInterTokenLatencyHigh
// (ITL only) cannot fire on 0.10, and the swap alert cannot on 0.10.
func TestCanFireCatchesVersionGaps(t *testing.T) {
	v010 := simulatedNames(t, simulator.ServerVLLM, "0.10")
	old := `histogram_quantile(0.99, sum by (le) (rate(vllm:inter_token_latency_seconds_bucket[5m]))) > 0.5`
	both := `histogram_quantile(0.99, sum by (le) (rate(vllm:inter_token_latency_seconds_bucket[5m]) or rate(vllm:time_per_output_token_seconds_bucket[5m]))) > 0.5`
	for expr, want := range map[string]bool{old: false, both: true} {
		e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := canFire(e, v010); got != want {
			t.Errorf("on vLLM 0.10, canFire(%s) = %v, want %v", expr, got, want)
		}
	}
	v014 := simulatedNames(t, simulator.ServerVLLM, "0.14")
	if v014["vllm:time_per_output_token_seconds_bucket"] || !v014["vllm:inter_token_latency_seconds_bucket"] {
		t.Errorf("vLLM 0.14 simulator: TPOT %v, ITL %v; want ITL only", v014["vllm:time_per_output_token_seconds_bucket"], v014["vllm:inter_token_latency_seconds_bucket"])
	}
	v0 := simulatedNames(t, simulator.ServerVLLMV0, "0.10")
	if v0["vllm:num_requests_swapped"] {
		t.Error("vLLM V0 0.10 simulator still exposes vllm:num_requests_swapped (removed in 0.10)")
	}
	if !simulatedNames(t, simulator.ServerVLLMV0, "0.8")["vllm:num_requests_swapped"] {
		t.Error("vLLM V0 0.8 simulator lacks vllm:num_requests_swapped")
	}
	// The gateway's rename in 1.1 (inference_model_* to inference_objective_*):
	// a rule on the new name alone is dead on 1.0, and on the old one from 1.1.
	newOnly := `sum(rate(inference_objective_request_total[5m])) > 0`
	oldOnly := `sum(rate(inference_model_request_total[5m])) > 0`
	for _, c := range []struct {
		rel, expr string
		want      bool
	}{{"1.0", newOnly, false}, {"1.0", oldOnly, true}, {"1.1", newOnly, true}, {"1.1", oldOnly, false}} {
		e, err := parser.NewParser(parser.Options{}).ParseExpr(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := canFire(e, simulatedNames(t, simulator.ServerGateway, c.rel)); got != c.want {
			t.Errorf("on the inference gateway %s, canFire(%s) = %v, want %v", c.rel, c.expr, got, c.want)
		}
	}
}

// On a default dcgm-exporter install (etc/default-counters.csv as
// shipped), exactly the alerts on opt-in counters cannot fire, and the
// pack's notes name each of them; with the counters enabled every alert can.
func TestDCGMDefaultCounters(t *testing.T) {
	p, err := packs.Lookup("dcgm")
	if err != nil {
		t.Fatal(err)
	}
	def := simulatedNamesWith(t, simulator.Options{Server: simulator.ServerDCGM})
	optIn := simulatedNamesWith(t, simulator.Options{Server: simulator.ServerDCGM, DCGMOptIn: true})
	var cannot []string
	for _, a := range alertExprs(t, p) {
		if !canFire(a.expr, optIn) {
			t.Errorf("%s cannot fire even with the opt-in counters", a.name)
		}
		if !canFire(a.expr, def) {
			cannot = append(cannot, a.name)
			if !strings.Contains(p.Notes, a.name) {
				t.Errorf("%s cannot fire on a default dcgm-exporter, but pack.yaml notes do not say so: %q", a.name, p.Notes)
			}
		}
	}
	sort.Strings(cannot)
	if want := []string{"GPUDoubleBitECCErrors", "GPUHealthCheckFailed", "GPUNVLinkErrors", "GPUThermalThrottling", "GPUXIDErrorsRepeating"}; !slices.Equal(cannot, want) {
		t.Errorf("on default counters, alerts that cannot fire: %v, want %v", cannot, want)
	}
}

type alertExpr struct {
	name string
	expr parser.Expr
}

func alertExprs(t *testing.T, p *packs.Pack) []alertExpr {
	t.Helper()
	var out []alertExpr
	for _, path := range p.RuleFiles() {
		f, err := rules.ReadFile(strings.TrimPrefix(path, "packs/"), rules.ParseOptions{})
		if err != nil {
			f, err = rules.ReadFile(path, rules.ParseOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				if !r.IsAlert() {
					continue
				}
				if r.Expr == nil || r.Expr.AST == nil {
					t.Fatalf("%s: expression does not parse", r.Name())
				}
				out = append(out, alertExpr{r.Name(), r.Expr.AST})
			}
		}
	}
	return out
}

// simulatedNames is the set of series names a simulated server of the
// release exposes after a few minutes under load, plus what a scrape adds
// (up) and the names that exist only once their first event happened
// (catalogue AppearsOn: a failed request, the first API request) where
// the release has them.
func simulatedNames(t *testing.T, srv simulator.Server, release string) map[string]bool {
	t.Helper()
	// Optional features on: their alerts can fire wherever the release has the metrics.
	return simulatedNamesWith(t, simulator.Options{Server: srv, Version: release, SpecDecode: true, KVConnector: true, DCGMOptIn: true, NaNCheck: true, PrefillWorker: true, FlowControl: true})
}

func simulatedNamesWith(t *testing.T, opts simulator.Options) map[string]bool {
	t.Helper()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	opts.Seed, opts.Start, opts.Now = 1, start, func() time.Time { return start }
	sim, err := simulator.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := sim.WriteMetricsAt(&buf, start.Add(5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(buf.Bytes(), []byte("\n")) {
		buf.WriteByte('\n')
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(&buf)
	if err != nil {
		t.Fatalf("parse simulator output: %v", err)
	}
	names := map[string]bool{"up": true}
	for name, f := range fams {
		switch f.GetType().String() {
		case "HISTOGRAM":
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[name+s] = true
			}
		case "SUMMARY":
			for _, s := range []string{"", "_sum", "_count"} {
				names[name+s] = true
			}
		default:
			names[name] = true
		}
	}
	for _, m := range catalog.Default().Metrics() {
		if m.AppearsOn == "" || (opts.Version != "" && !catalog.Default().ExposedIn(string(opts.Server), m.Name, opts.Version)) {
			continue // no event, or not in this release at all
		}
		for _, s := range []string{"", "_bucket", "_sum", "_count"} {
			names[m.Name+s] = true
		}
	}
	return names
}

// canFire reports whether expr can return a series when only the named
// series exist: a selector needs its metric; `or` needs either side,
// `unless` its left side, other binary operators both; absent() needs
// nothing.
func canFire(e parser.Expr, present map[string]bool) bool {
	switch n := e.(type) {
	case *parser.VectorSelector:
		name := n.Name
		for _, m := range n.LabelMatchers {
			if m.Name == model.MetricNameLabel && name == "" {
				name = m.Value
			}
		}
		return present[name]
	case *parser.MatrixSelector:
		return canFire(n.VectorSelector, present)
	case *parser.SubqueryExpr:
		return canFire(n.Expr, present)
	case *parser.ParenExpr:
		return canFire(n.Expr, present)
	case *parser.UnaryExpr:
		return canFire(n.Expr, present)
	case *parser.StepInvariantExpr:
		return canFire(n.Expr, present)
	case *parser.AggregateExpr:
		return canFire(n.Expr, present)
	case *parser.BinaryExpr:
		switch n.Op {
		case parser.LOR:
			return canFire(n.LHS, present) || canFire(n.RHS, present)
		case parser.LUNLESS:
			return canFire(n.LHS, present)
		}
		return canFire(n.LHS, present) && canFire(n.RHS, present)
	case *parser.Call:
		if n.Func.Name == "absent" || n.Func.Name == "absent_over_time" {
			return true
		}
		for _, a := range n.Args {
			if !canFire(a, present) {
				return false
			}
		}
		return true
	case *parser.NumberLiteral, *parser.StringLiteral:
		return true
	}
	panic(fmt.Sprintf("canFire: unhandled %T", e))
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
