package config

import (
	"strings"
	"testing"
)

func TestGeneratorURL(t *testing.T) {
	const expr = `max(vllm:kv_cache_usage_perc) > 0.9`
	for _, c := range []struct{ name, ds, want string }{
		{"remote: the datasource's graph page", `datasource: {prometheus: {url: "http://user:pw@prom.internal:9090/"}}`,
			"http://prom.internal:9090/graph?g0.expr=max%28vllm%3Akv_cache_usage_perc%29+%3E+0.9&g0.tab=1"},
		{"remote: external_url", `datasource: {prometheus: {url: "http://prom.internal:9090", external_url: "https://prom.example/sub"}}`,
			"https://prom.example/sub/graph?g0.expr=max%28vllm%3Akv_cache_usage_perc%29+%3E+0.9&g0.tab=1"},
		{"remote: a template for Grafana Explore", `datasource: {prometheus: {url: "http://prom.internal:9090", generator_url_template: 'https://grafana.example/explore?expr={{ .Expr | urlquery }}&ds={{ .DatasourceURL | urlquery }}'}}`,
			"https://grafana.example/explore?expr=max%28vllm%3Akv_cache_usage_perc%29+%3E+0.9&ds=http%3A%2F%2Fprom.internal%3A9090"},
		{"remote: Grafana Explore as docs/configuration.md writes it", `datasource: {prometheus: {url: "http://prom.internal:9090", generator_url_template: 'https://grafana.example/explore?left={{ printf "{\"queries\":[{\"expr\":%q}]}" .Expr | urlquery }}'}}`,
			"https://grafana.example/explore?left=%7B%22queries%22%3A%5B%7B%22expr%22%3A%22max%28vllm%3Akv_cache_usage_perc%29+%3E+0.9%22%7D%5D%7D"},
		{"embedded: paged's /graph", "global: {external_url: 'https://paged.example/'}\ndatasource:\n  type: embedded\n  embedded: {scrape_configs: [{job_name: vllm, static_configs: [{targets: ['127.0.0.1:8000']}]}]}",
			"https://paged.example/graph?g0.expr=max%28vllm%3Akv_cache_usage_perc%29+%3E+0.9&g0.tab=1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte(c.ds+"\nrule_files: []\n"), "/tmp/paged.yaml", func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			if got := GeneratorURL(cfg)(expr); got != c.want {
				t.Errorf("generatorURL = %s\nwant %s", got, c.want)
			}
		})
	}
	for _, bad := range []string{
		`'{{ .Nope }}'`,            // no such field
		`'{{ .Expr '`,              // does not parse
		`'/graph?q={{ .Expr }}'`,   // not an absolute http(s) URL
		`'javascript:{{ .Expr }}'`, // nor another scheme
	} {
		_, err := Parse([]byte(`datasource: {prometheus: {url: "http://p:9090", generator_url_template: `+bad+`}}
rule_files: []
`), "/tmp/paged.yaml", func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), "generator_url_template") {
			t.Errorf("template %s: err = %v, want a problem at the key", bad, err)
		}
	}
}

// The new keys are shown by /api/v1/status/config, their secrets redacted.
func TestRedactedShowsGraphKeys(t *testing.T) {
	cfg, err := Parse([]byte(`datasource:
  type: embedded
  embedded:
    query: {timeout: 30s, max_samples: 1000}
    scrape_configs: [{job_name: vllm, static_configs: [{targets: ['127.0.0.1:8000']}]}]
grafana_url: "https://admin:hunter2@grafana.example"
rule_files: []
`), "/tmp/paged.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	y, err := cfg.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"timeout: 30s", "max_samples: 1000", "grafana_url: https://admin:xxxxx@grafana.example"} {
		if !strings.Contains(y, want) {
			t.Errorf("redacted config lacks %q:\n%s", want, y)
		}
	}
	if strings.Contains(y, "hunter2") {
		t.Errorf("a password in the redacted config:\n%s", y)
	}
	if _, err := Parse([]byte(y), "/tmp/paged.yaml", nil); err != nil {
		t.Errorf("the redacted config does not load: %v", err)
	}
}
