package config

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagedhq/paged/internal/testbin"
)

// TestScrapeConfigsJudgedAsPromtool: every scrape_configs list under
// testdata/scrape (file, DNS, HTTP and Consul discovery, relabelling,
// auth, TLS, limits) is accepted by paged exactly when Debian's `promtool
// check config` accepts it as a prometheus.yml, and the name says which
// it is, so both judges are held to it. A rejected one gets a problem with
// a line and column inside the scrape config. The configs under
// testdata/scrape/all use mechanisms only the paged_all_discovery build
// has (Kubernetes, EC2, GCE): that build is judged on them too, and the
// default build must refer them to it (TestMissingDiscovery).
//
// Debian's promtool 2.42 is built without Kubernetes, Consul, Linode and
// Nomad discovery: the configs that use them (the prom3 folders) are
// judged by Prometheus 3's promtool, the version paged embeds, when
// PAGED_PROMTOOL3 names one (scripts/promtool3.sh builds it); without it
// they are skipped with that message.
func TestScrapeConfigsJudgedAsPromtool(t *testing.T) {
	promtool := testbin.Require(t, "promtool")
	judge := func(t *testing.T, dir string, min int, promtool string) {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil || len(files) < min {
			t.Fatalf("%s: %d files, %v", dir, len(files), err)
		}
		checkScrapeConfigs(t, promtool, files)
	}
	promtool3 := func(t *testing.T) string {
		p := os.Getenv("PAGED_PROMTOOL3")
		if p == "" {
			t.Skip("Debian's promtool lacks kubernetes/consul discovery: set PAGED_PROMTOOL3 to Prometheus 3's promtool (scripts/promtool3.sh builds it)")
		}
		return p
	}
	judge(t, "testdata/scrape", 10, promtool)
	t.Run("prom3", func(t *testing.T) { judge(t, "testdata/scrape/prom3", 2, promtool3(t)) })
	t.Run("all", func(t *testing.T) {
		if DiscoveryBuild != "all" {
			t.Skip("built without -tags paged_all_discovery: TestMissingDiscovery covers testdata/scrape/all; scripts/test.sh runs this build too")
		}
		judge(t, "testdata/scrape/all", 2, promtool)
		t.Run("prom3", func(t *testing.T) { judge(t, "testdata/scrape/all/prom3", 4, promtool3(t)) })
	})
}

func checkScrapeConfigs(t *testing.T, promtool string, files []string) {
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			snippet, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS("testdata/scrape")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, dir, "prometheus.yml", "scrape_configs:\n"+string(snippet))
			out, err := exec.Command(promtool, "check", "config", filepath.Join(dir, "prometheus.yml")).CombinedOutput()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatalf("promtool: %v", err)
			}
			promtoolOK := err == nil

			writeFile(t, dir, "basic.rules.yaml", basicRules)
			indented := "    " + strings.ReplaceAll(strings.TrimRight(string(snippet), "\n"), "\n", "\n    ")
			writeFile(t, dir, "paged.yaml", "datasource:\n  type: embedded\n  embedded:\n    scrape_configs:\n"+indented+"\nrule_files: [basic.rules.yaml]\n")
			_, perr := Load(filepath.Join(dir, "paged.yaml"), noEnv)
			pagedOK := perr == nil

			wantOK := strings.HasSuffix(f, ".good.yaml")
			if promtoolOK != wantOK {
				t.Errorf("promtool check config: ok=%v, want %v:\n%s", promtoolOK, wantOK, out)
			}
			if pagedOK != promtoolOK {
				t.Errorf("paged ok=%v but promtool ok=%v\npromtool: %s\npaged: %v", pagedOK, promtoolOK, out, perr)
			}
			var ce *Error
			if errors.As(perr, &ce) {
				for _, p := range ce.Problems {
					if p.Line < 5 || p.Column < 5 || !strings.HasPrefix(p.Key, "datasource.embedded.scrape_configs[") {
						t.Errorf("problem not placed inside the scrape config: %s", p)
					}
				}
				t.Logf("promtool: %s\npaged: %v", strings.TrimSpace(string(out)), perr)
			}
		})
	}
}

// TestScrapeConfigSecretsRedacted: a scrape config's password and bearer
// token never reach /api/v1/status/config; Prometheus's own marshalling
// writes <secret> in their place, and the rest of the job is kept.
func TestScrapeConfigSecretsRedacted(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "basic.rules.yaml", basicRules)
	writeFile(t, dir, "paged.yaml", `datasource:
  type: embedded
  embedded:
    scrape_configs:
      - job_name: auth
        basic_auth: {username: paged, password: hunter2-do-not-print}
        static_configs: [{targets: ["127.0.0.1:8000"]}]
      - job_name: token
        authorization: {credentials: tok-do-not-print}
        consul_sd_configs: [{server: "127.0.0.1:8500", services: [vllm]}]
        relabel_configs: [{source_labels: [__meta_consul_node], target_label: node}]
rule_files: [basic.rules.yaml]
`)
	cfg, err := Load(filepath.Join(dir, "paged.yaml"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cfg.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "do-not-print") {
		t.Fatalf("secret in the redacted config:\n%s", out)
	}
	for _, want := range []string{"password: <secret>", "credentials: <secret>", "server: 127.0.0.1:8500", "target_label: node", "keep: referenced"} {
		if !strings.Contains(out, want) {
			t.Errorf("redacted config lacks %q:\n%s", want, out)
		}
	}
}

// TestScrapeConfigEnv: ${ENV} expands in scrape configs as everywhere in
// paged.yaml (the demo's target comes from it), while relabelling's ${1}
// stays a regex group.
func TestScrapeConfigEnv(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "basic.rules.yaml", basicRules)
	writeFile(t, dir, "paged.yaml", `datasource:
  type: embedded
  embedded:
    scrape_configs:
      - job_name: vllm
        static_configs: [{targets: ["${TARGET}"]}]
        relabel_configs:
          - {source_labels: [__address__], regex: '(.*):\d+', replacement: '${1}', target_label: host}
rule_files: [basic.rules.yaml]
`)
	cfg, err := Load(filepath.Join(dir, "paged.yaml"), func(k string) string {
		return map[string]string{"TARGET": "10.1.2.3:8000"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	sc := cfg.Datasource.Embedded.ScrapeConfigs[0]
	if got := StaticTargets(sc); len(got) != 1 || got[0] != "10.1.2.3:8000" {
		t.Errorf("targets = %v", got)
	}
	if got := sc.RelabelConfigs[0].Replacement; got != "${1}" {
		t.Errorf("replacement = %q, want ${1}", got)
	}
}
