package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"

	"github.com/pagedhq/paged/internal/crdschema"
	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/rules"
)

// exportConfig loads every built-in pack, vllm with every override key.
const exportConfig = `datasource:
  prometheus: {url: "http://127.0.0.1:9090"}
packs:
  - name: vllm
    selector: '{job="vllm-prod", namespace=~"llm-.*"}'
    set: {VLLMKVCacheSaturated: 0.9, VLLMTimeToFirstTokenHigh: 3}
    for: {VLLMKVCacheSaturated: 5m}
    severity: {VLLMQueueBacklog: critical}
    labels: {team: llm-platform}
    disable: [VLLMKVCacheOverprovisioned]
  - {name: vllm-v0, selector: '{job="vllm-legacy"}'}
  - {name: tgi, labels: {team: llm-platform}}
  - sglang
  - triton
  - dcgm
`

// mainOK runs the command line in-process and returns stdout; a non-zero
// exit fails the test.
func mainOK(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), args, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("paged %s: exit %d\n%s", strings.Join(args, " "), code, stderr.String())
	}
	return stdout.String()
}

// Every export format of every pack, with overrides: Debian's promtool
// (Prometheus 2.42) accepts the rule files and the groups of the manifests
// and namespaces, the manifests pass the PrometheusRule CRD's schema of
// kube-prometheus, and the namespaces decode as mimirtool decodes them.
// (paged lint of the same outputs is in testdata/script/export.txtar.)
func TestExportPassesPromtoolAndSchema(t *testing.T) {
	promtool := testbin.Require(t, "promtool")
	crdFile := filepath.Join(testbin.SharedDir(t), "corpus", "prometheus-operator-kube-prometheus", "manifests", "setup", "0prometheusruleCustomResourceDefinition.yaml")
	crd, err := os.ReadFile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	schema, err := crdschema.Load(crd, "v1")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "paged.yaml"), []byte(exportConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"rules", "prometheusrule", "mimir"} {
		mainOK(t, "export", "--config", filepath.Join(dir, "paged.yaml"), "--format", format, "-o", filepath.Join(dir, format),
			"--namespace", map[string]string{"prometheusrule": "monitoring"}[format],
			"--runbook-base-url", "https://runbooks.example.com/")
	}
	for _, pack := range []string{"vllm", "vllm-v0", "tgi", "sglang", "triton", "dcgm"} {
		t.Run(pack, func(t *testing.T) {
			// rules: the file itself.
			promtoolCheck(t, promtool, filepath.Join(dir, "rules", pack+".yaml"))

			// prometheusrule: the CRD schema, and its spec.groups.
			manifest, err := os.ReadFile(filepath.Join(dir, "prometheusrule", pack+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range schema.ValidateYAML(manifest) {
				t.Errorf("PrometheusRule schema: %v", e)
			}
			var m struct {
				Spec struct {
					Groups yaml.Node `yaml:"groups"`
				} `yaml:"spec"`
			}
			if err := yaml.Unmarshal(manifest, &m); err != nil {
				t.Fatal(err)
			}
			promtoolCheck(t, promtool, writeGroups(t, dir, pack+"-spec.yaml", &m.Spec.Groups))

			// mimir: mimirtool's own decoding (known fields only, then
			// Prometheus's rule validation), and its groups.
			ns, err := os.ReadFile(filepath.Join(dir, "mimir", pack+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			groups := mimirtoolParse(t, ns, pack)
			promtoolCheck(t, promtool, writeGroups(t, dir, pack+"-mimir.yaml", groups))
		})
	}

	// The overrides are in every format.
	for _, format := range []string{"rules", "prometheusrule", "mimir"} {
		b, err := os.ReadFile(filepath.Join(dir, format, "vllm.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		f := rules.ParseFile(format, b, rules.ParseOptions{})
		alerts := map[string]*rules.Rule{}
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				alerts[r.Name()] = r
			}
		}
		kv := alerts["VLLMKVCacheSaturated"]
		sev, _ := alerts["VLLMQueueBacklog"].Label("severity")
		team, _ := kv.Label("team")
		rb, _ := kv.Annotation("runbook_url")
		if len(alerts) != 23 || alerts["VLLMKVCacheOverprovisioned"] != nil || kv.For.Value != model.Duration(5*time.Minute) ||
			!strings.Contains(kv.Expr.Value, `vllm:kv_cache_usage_perc{job="vllm-prod",namespace=~"llm-.*"}) > 0.9`) ||
			sev.Value != "critical" || team.Value != "llm-platform" || rb.Value != "https://runbooks.example.com/vllm/VLLMKVCacheSaturated.md" {
			t.Errorf("%s: the overrides did not all apply:\n%s", format, b)
		}
	}
}

func promtoolCheck(t *testing.T, promtool, file string) {
	t.Helper()
	out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SUCCESS") || strings.Contains(string(out), "WARNING") {
		t.Errorf("promtool check rules %s: %v\n%s", filepath.Base(file), err, out)
	}
}

func writeGroups(t *testing.T, dir, name string, groups *yaml.Node) string {
	t.Helper()
	b, err := yaml.Marshal(map[string]*yaml.Node{"groups": groups})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// mimirtoolParse reads a ruler namespace file as mimirtool's rules.ParseBytes
// does: every document into {namespace, groups} with unknown fields
// refused, then each rule through Prometheus's rulefmt validation, group
// names unique in the namespace. It returns the groups of the only
// namespace, which must be named want.
func mimirtoolParse(t *testing.T, content []byte, want string) *yaml.Node {
	t.Helper()
	type namespace struct {
		Namespace string              `yaml:"namespace,omitempty"`
		Groups    []rulefmt.RuleGroup `yaml:"groups"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(content))
	dec.KnownFields(true)
	var nss []namespace
	for {
		var ns namespace
		err := dec.Decode(&ns)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("mimir namespace: %v", err)
		}
		nss = append(nss, ns)
	}
	if len(nss) != 1 || nss[0].Namespace != want {
		t.Fatalf("namespaces %+v, want one named %s", nss, want)
	}
	var nodes struct {
		Groups []rulefmt.RuleGroupNode `yaml:"groups"`
	}
	if err := yaml.Unmarshal(content, &nodes); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, g := range nss[0].Groups {
		if g.Name == "" || seen[g.Name] {
			t.Errorf("group %d: empty or repeated name %q", i, g.Name)
		}
		seen[g.Name] = true
		for j, r := range g.Rules {
			for _, err := range r.Validate(nodes.Groups[i].Rules[j], model.UTF8Validation, parser.NewParser(parser.Options{})) {
				t.Errorf("group %s rule %s: %v", g.Name, r.Alert+r.Record, err)
			}
		}
	}
	var doc struct {
		Groups yaml.Node `yaml:"groups"`
	}
	if err := yaml.Unmarshal(content, &doc); err != nil {
		t.Fatal(err)
	}
	return &doc.Groups
}

// Debian's Prometheus (2.42) loads the exported vllm rule file and fires
// the pack's alert on `paged simulate`: the selector makes it match the
// scrape job vllm-prod, and VLLMTargetMissing, whose absent(up{...}) the
// selector retargets to that job, is silent once the job is scraped (with
// the pack's job="vllm" it would be pending).
func TestExportedRulesFireInPrometheus(t *testing.T) {
	testbin.Require(t, "prometheus")
	dir := t.TempDir()
	// The simulator, as `paged simulate`, speeded up so the KV cache fills
	// in seconds.
	simAddr := testbin.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	var simOut, simErr lockedBuffer
	simDone := make(chan int, 1)
	go func() {
		simDone <- Main(ctx, []string{"simulate", "--listen", simAddr, "--server", "vllm", "--scenario", "kv-saturation", "--speed", "60"}, strings.NewReader(""), &simOut, &simErr)
	}()
	t.Cleanup(func() {
		cancel()
		<-simDone
	})
	if err := testbin.WaitReady(ctx, "http://"+simAddr+"/metrics", 10*time.Second, nil); err != nil {
		t.Fatalf("simulate: %v\n%s", err, simErr.String())
	}

	mainOK(t, "export", "--format", "rules", "-o", filepath.Join(dir, "rules"), "vllm",
		"--selector", `{job="vllm-prod"}`,
		"--for", "VLLMKVCacheSaturated=0s", "--for", "VLLMTargetMissing=1h",
		"--severity", "VLLMKVCacheSaturated=critical", "--label", "team=llm-platform",
		"--runbook-base-url", "https://runbooks.example.com/")
	prom := testbin.StartPrometheus(t, fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: vllm-prod
    static_configs: [{targets: [%q]}]
`, filepath.Join(dir, "rules", "vllm.yaml"), simAddr))

	type alert struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
		State       string            `json:"state"`
	}
	alerts := func() map[string]alert {
		out := map[string]alert{}
		resp, err := http.Get(prom.URL + "/api/v1/alerts")
		if err != nil {
			return out
		}
		defer resp.Body.Close()
		var ans struct {
			Data struct {
				Alerts []alert `json:"alerts"`
			} `json:"data"`
		}
		if json.NewDecoder(resp.Body).Decode(&ans) == nil {
			for _, a := range ans.Data.Alerts {
				out[a.Labels["alertname"]] = a
			}
		}
		return out
	}
	var firing alert
	deadline := time.Now().Add(90 * time.Second)
	for firing.State != "firing" {
		if time.Now().After(deadline) {
			t.Fatalf("VLLMKVCacheSaturated did not fire in Prometheus (alerts %v)\n%s", alerts(), prom.Output())
		}
		time.Sleep(500 * time.Millisecond) // an external process: poll its API
		firing = alerts()["VLLMKVCacheSaturated"]
	}
	// Its group may have evaluated before the first scrape and made the
	// alert pending; once the job is scraped the next evaluations clear
	// it. With the pack's own job="vllm" it would stay pending.
	deadline = time.Now().Add(15 * time.Second)
	for {
		a, ok := alerts()["VLLMTargetMissing"]
		if !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("VLLMTargetMissing is still %s although job vllm-prod is scraped: the selector did not reach absent()", a.State)
		}
		time.Sleep(500 * time.Millisecond) // an external process: poll its API
	}
	if firing.Labels["job"] != "vllm-prod" || firing.Labels["severity"] != "critical" || firing.Labels["team"] != "llm-platform" || firing.Labels["server"] != "vllm" {
		t.Errorf("alert labels %v", firing.Labels)
	}
	if firing.Annotations["runbook_url"] != "https://runbooks.example.com/vllm/VLLMKVCacheSaturated.md" ||
		!strings.HasPrefix(firing.Annotations["summary"], "vLLM KV cache ") {
		t.Errorf("annotations %v", firing.Annotations)
	}
}

// TestHelmChartPrometheusRulesCurrent: the PrometheusRule files the Helm
// chart ships are what `paged export --format prometheusrule` writes now
// (the generator line, which names the version, aside). Regenerate with
//
//	go run ./cmd/paged export --format prometheusrule -o deploy/helm/paged/files/prometheusrules
func TestHelmChartPrometheusRulesCurrent(t *testing.T) {
	dir := t.TempDir()
	mainOK(t, "export", "--format", "prometheusrule", "-o", dir)
	chart := filepath.Join(testbin.RepoRoot(t), "deploy/helm/paged/files/prometheusrules")
	fresh, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(fresh) < 5 {
		t.Fatalf("export wrote %v (%v)", fresh, err)
	}
	dropFirst := func(b []byte) string { _, rest, _ := strings.Cut(string(b), "\n"); return rest }
	for _, f := range fresh {
		want, _ := os.ReadFile(f)
		got, err := os.ReadFile(filepath.Join(chart, filepath.Base(f)))
		if err != nil {
			t.Errorf("chart lacks %s: %v", filepath.Base(f), err)
			continue
		}
		if dropFirst(got) != dropFirst(want) {
			t.Errorf("deploy/helm/paged/files/prometheusrules/%s is out of date: run paged export again", filepath.Base(f))
		}
	}
}
