package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/internal/testbin"
)

// TestSystemdUnitVerifies: systemd-analyze verify finds nothing to say
// about deploy/systemd/paged.service (it warns on unknown keys and bad
// values without failing, so any output fails the test), and the unit
// has the settings the packaging promises.
func TestSystemdUnitVerifies(t *testing.T) {
	bin := testbin.Require(t, "systemd-analyze")
	unit, err := os.ReadFile("systemd/paged.service")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"DynamicUser=yes", "StateDirectory=paged", "ExecReload=/bin/kill -HUP $MAINPID", "ProtectSystem=strict", "NoNewPrivileges=yes"} {
		if !bytes.Contains(unit, []byte(want+"\n")) {
			t.Errorf("unit lacks %s", want)
		}
	}
	// verify checks that the executables exist: point them at this test
	// binary.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "paged.service")
	if err := os.WriteFile(path, bytes.ReplaceAll(unit, []byte("/usr/local/bin/paged"), []byte(self)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "verify", path).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestDockerfile: the image is a static, version-stamped binary run as a
// non-root user with /data as a volume and a HEALTHCHECK on /-/healthy,
// and its default paged.yaml passes check-config. Where a container
// runtime answers, the image is built and must answer /-/ready.
func TestDockerfile(t *testing.T) {
	df, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CGO_ENABLED=0", "-X main.version=${VERSION}", "USER 65532:65532", `VOLUME ["/data"]`, "/-/healthy", "FROM scratch", "COPY deploy/docker/paged.yaml /etc/paged/paged.yaml",
		// The chart's Kubernetes discovery needs the paged-full build.
		`ARG GO_TAGS="paged_all_discovery"`} {
		if !bytes.Contains(df, []byte(want)) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if _, err := config.Load("docker/paged.yaml", func(string) string { return "" }); err != nil {
		t.Errorf("docker/paged.yaml: %v", err)
	}
	docker, err := exec.LookPath("docker")
	if err != nil || exec.Command(docker, "info").Run() != nil {
		t.Skip("no container runtime answers here (docker info fails): the image was not built")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tag := fmt.Sprintf("paged-test:%d", time.Now().UnixNano())
	if out, err := exec.CommandContext(ctx, docker, "build", "--build-arg", "VERSION=test", "-t", tag, "..").CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(docker, "rmi", "-f", tag).Run() })
	addr := testbin.FreeAddr(t)
	out, err := exec.CommandContext(ctx, docker, "run", "-d", "--rm", "-p", addr+":9095", tag, "demo", "--listen", "0.0.0.0:9095").Output()
	if err != nil {
		t.Fatalf("docker run: %v", err)
	}
	id := strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command(docker, "rm", "-f", id).Run() })
	if err := testbin.WaitReady(ctx, "http://"+addr+"/-/ready", time.Minute, nil); err != nil {
		logs, _ := exec.Command(docker, "logs", id).CombinedOutput()
		t.Fatalf("container not ready: %v\n%s", err, logs)
	}
}

// helmTemplate renders the chart with the given --set values.
func helmTemplate(t *testing.T, helm string, sets ...string) []map[string]any {
	t.Helper()
	args := []string{"template", "paged", "helm/paged", "--namespace", "llm"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	out, err := exec.Command(helm, args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var docs []map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var d map[string]any
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("helm template output: %v\n%s", err, out)
		}
		if d != nil {
			docs = append(docs, d)
		}
	}
	return docs
}

func kinds(docs []map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, d := range docs {
		k, _ := d["kind"].(string)
		if _, dup := out[k]; !dup {
			out[k] = d
		}
	}
	return out
}

// checkRenderedConfig runs the ConfigMap's paged.yaml through the same
// loader as `paged check-config` and returns it (nil in a build without
// Kubernetes discovery, which must refer the config to paged-full).
func checkRenderedConfig(t *testing.T, docs []map[string]any) *config.Config {
	t.Helper()
	cm := kinds(docs)["ConfigMap"]
	data, _ := cm["data"].(map[string]any)
	text, _ := data["paged.yaml"].(string)
	if text == "" {
		t.Fatalf("ConfigMap has no paged.yaml: %v", cm)
	}
	path := filepath.Join(t.TempDir(), "paged.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, func(k string) string {
		return map[string]string{"POD_IP": "10.1.2.3", "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T0/B0/x"}[k]
	})
	if config.DiscoveryBuild != "all" {
		// The chart scrapes with Kubernetes discovery, which only the
		// paged-full build (the container image's) has: this build must
		// say so and nothing else. scripts/test.sh checks the rest of the
		// rendered config in that build.
		var ce *config.Error
		if !errors.As(err, &ce) || len(ce.Problems) == 0 {
			t.Fatalf("the default build accepts the chart's kubernetes_sd_configs: %v", err)
		}
		for _, p := range ce.Problems {
			if !strings.Contains(p.Message, "without kubernetes discovery") || !strings.Contains(p.Message, "paged_all_discovery") {
				t.Errorf("rendered paged.yaml: %s", p)
			}
		}
		return nil
	}
	if err != nil {
		t.Fatalf("rendered paged.yaml fails check-config: %v\n%s", err, text)
	}
	return cfg
}

// TestHelmChart: helm lint passes for one instance and for the HA pair,
// and helm template renders a Deployment (or a two-replica StatefulSet
// with the gossip peers wired), Service, ConfigMap, PVC, RBAC for
// Kubernetes discovery, ServiceMonitor, PrometheusRule and Secret
// references, whose paged.yaml passes check-config.
func TestHelmChart(t *testing.T) {
	helm := testbin.Require(t, "helm")
	for _, sets := range [][]string{nil, {"ha.enabled=true", "serviceMonitor.enabled=true", "prometheusRule.enabled=true"}} {
		args := []string{"lint", "--strict", "helm/paged"}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		if out, err := exec.Command(helm, args...).CombinedOutput(); err != nil {
			t.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	one := helmTemplate(t, helm, "secretEnv[0].name=SLACK_WEBHOOK_URL", "secretEnv[0].secretName=paged-slack", "secretEnv[0].key=url", "authTokenSecret.name=paged-token")
	k := kinds(one)
	for _, want := range []string{"Deployment", "Service", "ConfigMap", "PersistentVolumeClaim", "ServiceAccount", "ClusterRole", "ClusterRoleBinding"} {
		if k[want] == nil {
			t.Errorf("default render lacks a %s", want)
		}
	}
	if k["StatefulSet"] != nil || k["ServiceMonitor"] != nil || k["PrometheusRule"] != nil {
		t.Error("default render has a StatefulSet, ServiceMonitor or PrometheusRule")
	}
	dep, _ := yaml.Marshal(k["Deployment"])
	for _, want := range []string{"secretKeyRef", "paged-slack", "paged-token", "claimName: paged", "/-/ready", "runAsNonRoot: true"} {
		if !bytes.Contains(dep, []byte(want)) {
			t.Errorf("Deployment lacks %q:\n%s", want, dep)
		}
	}
	cm, _ := yaml.Marshal(k["ConfigMap"])
	if !bytes.Contains(cm, []byte("auth_token_file: /etc/paged/secrets/token")) {
		t.Errorf("ConfigMap does not point web.auth_token_file at the Secret's mount:\n%s", cm)
	}
	// check-config reads the token file, which exists only in the pod:
	// the config is checked as rendered without it.
	cfg := checkRenderedConfig(t, helmTemplate(t, helm))
	if cfg != nil && (cfg.Storage.Path != "/data" || cfg.Web.ListenAddress != "0.0.0.0:9095" || len(cfg.Datasource.Embedded.ScrapeConfigs) != 1 || cfg.Datasource.Embedded.Keep != "referenced") {
		t.Errorf("rendered config: storage %q, listen %q, %d scrape configs, keep %q",
			cfg.Storage.Path, cfg.Web.ListenAddress, len(cfg.Datasource.Embedded.ScrapeConfigs), cfg.Datasource.Embedded.Keep)
	}

	ha := helmTemplate(t, helm, "ha.enabled=true", "serviceMonitor.enabled=true", "prometheusRule.enabled=true")
	k = kinds(ha)
	for _, want := range []string{"StatefulSet", "ServiceMonitor", "PrometheusRule"} {
		if k[want] == nil {
			t.Errorf("HA render lacks a %s", want)
		}
	}
	if k["Deployment"] != nil || k["PersistentVolumeClaim"] != nil {
		t.Error("HA render has a Deployment or a separate PVC (the StatefulSet has volumeClaimTemplates)")
	}
	if r := k["StatefulSet"]["spec"].(map[string]any)["replicas"]; r != 2 {
		t.Errorf("StatefulSet replicas = %v", r)
	}
	cfg = checkRenderedConfig(t, ha)
	want := []string{"paged-0.paged-gossip.llm.svc:9094", "paged-1.paged-gossip.llm.svc:9094"}
	if cfg != nil && (strings.Join(cfg.Cluster.Peers, ",") != strings.Join(want, ",") || cfg.Cluster.AdvertiseAddress != "10.1.2.3:9094") {
		t.Errorf("cluster peers %v advertise %q, want %v and the pod IP", cfg.Cluster.Peers, cfg.Cluster.AdvertiseAddress, want)
	}
	pr, _ := yaml.Marshal(k["PrometheusRule"])
	if !bytes.Contains(pr, []byte("VLLM")) {
		t.Errorf("PrometheusRule has no vLLM alert:\n%.500s", pr)
	}
}
