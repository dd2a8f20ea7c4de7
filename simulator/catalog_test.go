package simulator

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"go.yaml.in/yaml/v3"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/rules/catalog"
)

// catalogMetric is the part of a catalog.yaml entry these checks need.
type catalogMetric struct {
	Name      string   `yaml:"name"`
	Type      string   `yaml:"type"`
	Engines   []string `yaml:"engines"`
	Status    string   `yaml:"status"`
	Condition string   `yaml:"condition"`
}

type catalogServer struct {
	Metrics     []catalogMetric `yaml:"metrics"`
	Removed     []catalogMetric `yaml:"removed"`
	NotReal     []catalogMetric `yaml:"not_real"`
	HTTPMetrics struct {
		Metrics []catalogMetric `yaml:"metrics"`
	} `yaml:"http_metrics"`
}

func loadCatalog(t *testing.T) map[string]catalogServer {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testbin.SharedDir(t), "fixtures", "metrics", "catalog.yaml"))
	if err != nil {
		t.Fatalf("catalog missing: %v", err)
	}
	var doc struct {
		Servers map[string]catalogServer `yaml:"servers"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("catalog.yaml: %v", err)
	}
	return doc.Servers
}

// emittedAfterAWhile scrapes a server after an hour of steady load and ten
// minutes of errors, so families created on first use exist.
func emittedAfterAWhile(t *testing.T, server Server) map[string]*dto.MetricFamily {
	t.Helper()
	s, clk := newTestSim(t, Options{Server: server, Seed: 3})
	clk.advance(time.Hour)
	if err := s.SetScenario("error-burst"); err != nil {
		t.Fatal(err)
	}
	clk.advance(10 * time.Minute)
	return scrape(t, s)
}

// TestCatalogFacts checks the simulator against catalog.yaml: every metric
// the catalog marks current for a server (and engine) without a condition is
// emitted with the catalog's type; nothing removed is emitted by V1 (or by
// current SGLang); none of the names the catalog lists as never real is
// emitted.
func TestCatalogFacts(t *testing.T) {
	cat := loadCatalog(t)
	cases := []struct {
		server  Server
		catalog string
		engine  string // vLLM engine filter
	}{
		{ServerVLLM, "vllm", "v1"},
		{ServerVLLMV0, "vllm", "v0"},
		{ServerTGI, "tgi", ""},
		{ServerSGLang, "sglang", ""},
		{ServerTriton, "triton", ""},
	}
	for _, c := range cases {
		t.Run(string(c.server), func(t *testing.T) {
			entry, ok := cat[c.catalog]
			if !ok || len(entry.Metrics) == 0 {
				t.Fatalf("catalog has no metrics for %s", c.catalog)
			}
			mfs := emittedAfterAWhile(t, c.server)
			want := entry.Metrics
			if c.catalog == "vllm" {
				want = append(slices.Clone(want), entry.HTTPMetrics.Metrics...)
			}
			checked := 0
			for _, m := range want {
				if m.Condition != "" || strings.Contains(m.Name, " ") {
					continue
				}
				switch m.Status {
				case "", "current":
				default:
					continue // conditional, removed, described_only, ...
				}
				if c.engine != "" && m.Engines != nil && !slices.Contains(m.Engines, c.engine) {
					continue
				}
				if cm := catalog.Default().Metric(m.Name); cm != nil && cm.Status == catalog.Removed {
					continue // corrected in rules/catalog/additions.yaml: removed upstream
				}
				checked++
				mf := mfs[m.Name]
				if mf == nil || len(mf.GetMetric()) == 0 {
					t.Errorf("%s: current in the catalog, not emitted", m.Name)
					continue
				}
				if got := strings.ToLower(mf.GetType().String()); got != m.Type {
					t.Errorf("%s: type %s, catalog says %s", m.Name, got, m.Type)
				}
			}
			if checked < 10 {
				t.Errorf("only %d catalog entries checked; the catalog layout may have changed", checked)
			}
			t.Logf("%d current catalog metrics emitted", checked)

			var gone []catalogMetric
			for _, m := range entry.Metrics {
				if m.Status == "removed" && (c.engine == "v1" || !slices.Contains(m.Engines, c.engine)) {
					gone = append(gone, m)
				}
			}
			if c.server != ServerVLLMV0 {
				gone = append(gone, entry.Removed...)
			}
			gone = append(gone, entry.NotReal...)
			for _, m := range gone {
				for _, name := range strings.Split(m.Name, " / ") {
					if strings.Contains(name, " ") {
						continue
					}
					if mfs[name] != nil {
						t.Errorf("%s: removed or never real (catalog), but emitted in %s mode", name, c.server)
					}
				}
			}
		})
	}
}

// TestV0HasLegacySignals pins the V0-only families the vllm-v0 pack alerts
// on, and that V1 has none of them.
func TestV0HasLegacySignals(t *testing.T) {
	v0 := emittedAfterAWhile(t, ServerVLLMV0)
	v1 := emittedAfterAWhile(t, ServerVLLM)
	for _, name := range []string{"vllm:num_requests_swapped", "vllm:cpu_cache_usage_perc", "vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds"} {
		if v0[name] == nil {
			t.Errorf("V0 mode lacks %s", name)
		}
		if v1[name] != nil {
			t.Errorf("V1 mode emits the removed %s", name)
		}
	}
	for name, mf := range v0 {
		if strings.HasSuffix(name, "_created") {
			t.Errorf("V0 disabled created series, but %s is emitted", name)
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "engine" {
					t.Fatalf("V0 has no engine label, but %s has one", name)
				}
			}
		}
	}
	for _, name := range []string{"vllm:num_preemptions_created", "vllm:time_to_first_token_seconds_created", "http_requests_created"} {
		if v1[name] == nil || v1[name].GetType() != dto.MetricType_GAUGE {
			t.Errorf("V1 mode lacks the gauge %s (prometheus_client created series)", name)
		}
	}
	if v1["python_gc_objects_collected_created"] != nil {
		t.Error("prometheus_client's GC collector has no created series, but one is emitted")
	}
}
