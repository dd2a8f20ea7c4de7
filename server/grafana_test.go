package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/packs"
	"github.com/pagedhq/paged/rules/catalog"
	"github.com/pagedhq/paged/simulator"
)

// TestGrafanaDashboardQueries: every panel query of every generated
// dashboard runs, with the variables as Grafana substitutes them for
// "All", against paged in embedded mode and against Debian's Prometheus,
// both scraping a simulator of each server; each returns the simulator's
// data (absent(), as in VLLMTargetMissing, answers only when the series
// is gone; a panel on series that exist only after their first event,
// catalogued as such, answers only once the event happened). dcgm runs
// with the opt-in counters, so its thermal and ECC panels have data too.
func TestGrafanaDashboardQueries(t *testing.T) {
	jobs := map[string]simulator.Server{
		"vllm": simulator.ServerVLLM, "vllm-v0": simulator.ServerVLLMV0, "tgi": simulator.ServerTGI,
		"sglang": simulator.ServerSGLang, "triton": simulator.ServerTriton, "dcgm": simulator.ServerDCGM,
		"inference-gateway": simulator.ServerGateway,
	}
	var scrape, embedded strings.Builder
	for job, srv := range jobs {
		// steady: no error yet, and the error panels still chart 0.
		// dcgm with the opt-in counters its pack reads; the gateway as
		// llm-d's P/D scheduler with flow control on, so its decision
		// counters and its pool saturation exist.
		sim, err := simulator.New(simulator.Options{Server: srv, DCGMOptIn: srv == simulator.ServerDCGM,
			KVConnector: srv == simulator.ServerGateway, FlowControl: srv == simulator.ServerGateway})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(sim.Handler())
		t.Cleanup(hs.Close)
		target := strings.TrimPrefix(hs.URL, "http://")
		fmt.Fprintf(&scrape, "  - job_name: %q\n    static_configs: [{targets: [%q]}]\n", job, target)
		fmt.Fprintf(&embedded, "      - job_name: %q\n        static_configs: [{targets: [%q]}]\n", job, target)
	}
	prom := testbin.StartPrometheus(t, "global: {scrape_interval: 1s}\nscrape_configs:\n"+scrape.String())
	hook := httptest.NewServer(&generatorSink{})
	t.Cleanup(hook.Close)
	dir := t.TempDir()
	writeFile(t, dir, "see.rules.yaml", seeRules)
	// Every pack loaded, with embedded mode's default keep: referenced:
	// the metrics of the packs' dashboards are kept with those of their
	// rules, so every panel has data.
	builtin, err := packs.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	cfg := seeConfig("  type: embedded\n  embedded:\n    scrape_interval: 1s\n    scrape_configs:\n"+strings.TrimRight(embedded.String(), "\n"), hook.URL)
	cfg = strings.TrimRight(cfg, "\n") + "\npacks:\n"
	for _, p := range builtin {
		cfg += fmt.Sprintf("  - {name: %s}\n", p.Name)
	}
	writeFile(t, dir, "paged.yaml", cfg)
	base, _ := runPaged(t, dir, &syncBuffer{}, io.Discard)
	poll(t, base+"/-/ready", func(code int, _ string) bool { return code == http.StatusOK })

	clients := map[string]promv1.API{}
	for name, u := range map[string]string{"paged": base, "prometheus": prom.URL} {
		c, err := api.NewClient(api.Config{Address: u})
		if err != nil {
			t.Fatal(err)
		}
		clients[name] = promv1.NewAPI(c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Enough samples for rates: every job scraped five times by both.
	for name, c := range clients {
		waitFor(t, name+" has scraped every simulator", 60*time.Second, func() bool {
			v, _, _, err := c.Query(ctx, fmt.Sprintf(`min(count_over_time(up[1m])) >= 5 and count(up == 1) == %d`, len(jobs)), time.Now())
			vec, _ := v.(model.Vector)
			return err == nil && len(vec) == 1
		})
	}

	all, err := packs.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	vars := strings.NewReplacer(`"$instance"`, `".*"`, `"$Hostname"`, `".*"`, `"$model_name"`, `".*"`, `"$model"`, `".*"`, "$__rate_interval", "15s")
	now := time.Now()
	queries := 0
	for _, p := range all {
		r, err := p.Apply(packs.Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		d, err := packs.GrafanaDashboard(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, panel := range d.Panels {
			for _, tg := range panel.Targets {
				expr := vars.Replace(tg.Expr)
				if strings.Contains(expr, "$") {
					t.Errorf("%s / %s: a variable left in %s", p.Name, panel.Title, expr)
					continue
				}
				for name, c := range clients {
					queries++
					v, _, _, err := c.Query(ctx, expr, now)
					if err != nil {
						t.Errorf("%s / %s on %s: %v\n%s", p.Name, panel.Title, name, err, expr)
						continue
					}
					vec, _ := v.(model.Vector)
					// absent() has data only when the target is gone, a
					// panel on first-event series only after the event.
					if _, simulated := jobs[p.Name]; simulated && len(vec) == 0 && !strings.HasPrefix(expr, "absent(") {
						if firstEventOnly(t, expr) {
							t.Logf("%s / %s on %s: no data yet, as its series appear with their first event", p.Name, panel.Title, name)
							continue
						}
						t.Errorf("%s / %s on %s: no data\n%s", p.Name, panel.Title, name, expr)
					}
				}
			}
		}
	}
	if queries < 100 {
		t.Errorf("only %d panel queries ran", queries)
	}
}

// firstEventOnly reports whether every series expr selects is one the
// catalogue says exists only after its first event (an error counter of
// client_golang, SGLang's P/D prefill-side histogram): a steady simulator
// has not produced it yet.
func firstEventOnly(t *testing.T, expr string) bool {
	t.Helper()
	ast, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	n := 0
	only := true
	parser.Inspect(ast, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		n++
		s, ok := catalog.Default().Resolve(vs.Name)
		if !ok || s.Metric.AppearsOn == "" {
			only = false
		}
		return nil
	})
	return n > 0 && only
}
