package config

import (
	"strconv"
	"strings"
	"testing"

	"github.com/pagedhq/paged/packs"
)

// With grafana_url, the packs' alerts link their panel of the exported
// dashboard; without it, they get no dashboard_url.
func TestDashboardURLs(t *testing.T) {
	load := func(extra string) *Config {
		cfg, err := Parse([]byte("datasource: {prometheus: {url: 'http://p:9090'}}\npacks:\n  - name: vllm\n    set: {VLLMKVCacheSaturated: 0.9}\n"+extra), "/tmp/paged.yaml", func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	ann := func(cfg *Config, alert string) (string, bool) {
		for _, src := range cfg.PackSources() {
			for _, g := range src.Groups.Groups {
				for _, r := range g.Rules {
					if r.Alert == alert {
						v, ok := r.Annotations["dashboard_url"]
						return v, ok
					}
				}
			}
		}
		t.Fatalf("no alert %s", alert)
		return "", false
	}
	if v, ok := ann(load(""), "VLLMKVCacheSaturated"); ok {
		t.Errorf("dashboard_url %q without grafana_url", v)
	}
	cfg := load("grafana_url: https://grafana.example/\n")
	got, _ := ann(cfg, "VLLMKVCacheSaturated")
	d, err := packs.GrafanaDashboard(cfg.Packs[0].Rendered)
	if err != nil {
		t.Fatal(err)
	}
	var id int
	for _, p := range d.Panels {
		if p.Title == "VLLMKVCacheSaturated" {
			id = p.ID
		}
	}
	if want := "https://grafana.example/d/paged-vllm?viewPanel=" + itoa(id); id == 0 || got != want {
		t.Errorf("dashboard_url = %q, want %q", got, want)
	}
	if _, err := Parse([]byte("datasource: {prometheus: {url: 'http://p:9090'}}\nrule_files: []\ngrafana_url: 'ftp://x'\n"), "/tmp/paged.yaml", nil); err == nil || !strings.Contains(err.Error(), "grafana_url") {
		t.Errorf("bad grafana_url: %v", err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
