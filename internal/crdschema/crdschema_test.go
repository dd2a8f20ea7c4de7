package crdschema_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagedhq/paged/internal/crdschema"
	"github.com/pagedhq/paged/internal/testbin"
)

func load(t *testing.T) (*crdschema.Schema, string) {
	t.Helper()
	dir := filepath.Join(testbin.SharedDir(t), "corpus", "prometheus-operator-kube-prometheus", "manifests")
	crd, err := os.ReadFile(filepath.Join(dir, "setup", "0prometheusruleCustomResourceDefinition.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := crdschema.Load(crd, "v1")
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// kube-prometheus's own PrometheusRule manifests pass.
func TestCorpusManifestsPass(t *testing.T) {
	s, dir := load(t)
	files, err := filepath.Glob(filepath.Join(dir, "*-prometheusRule.yaml"))
	if err != nil || len(files) < 5 {
		t.Fatalf("manifests %v, %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range s.ValidateYAML(b) {
			t.Errorf("%s: %v", filepath.Base(f), e)
		}
	}
}

// Each broken manifest fails with the constraint it breaks.
func TestBrokenManifestsFail(t *testing.T) {
	s, _ := load(t)
	const good = `apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: paged-vllm
  namespace: monitoring
  labels: {release: kube-prometheus-stack}
spec:
  groups:
    - name: g
      interval: 30s
      rules:
        - alert: A
          expr: up == 0
          for: 5m
          labels: {severity: warning}
`
	if errs := s.ValidateYAML([]byte(good)); len(errs) > 0 {
		t.Fatalf("good manifest: %v", errs)
	}
	for name, c := range map[string]struct{ from, to, want string }{
		"group without name": {"    - name: g\n      interval: 30s\n", "    - interval: 30s\n", "spec.groups[0].name: is required"},
		"bad for":            {"for: 5m", "for: 5 minutes", `spec.groups[0].rules[0].for: "5 minutes" does not match`},
		"number label":       {"severity: warning", "severity: 1", "spec.groups[0].rules[0].labels.severity: must be of type string"},
		"unknown rule field": {"          for: 5m\n", "          forr: 5m\n", "spec.groups[0].rules[0].forr: unknown field"},
		"bad name":           {"name: paged-vllm", "name: Paged_VLLM", `metadata.name: "Paged_VLLM"`},
		"bad label value":    {"release: kube-prometheus-stack", "release: -x-", "metadata.labels.release"},
		"wrong kind":         {"kind: PrometheusRule", "kind: PrometheusRules", "kind: is PrometheusRules"},
		"expr as list":       {"expr: up == 0", "expr: [up]", "spec.groups[0].rules[0].expr: must be an integer or a string"},
		"no spec":            {"spec:\n  groups:", "spek:\n  groups:", "spec: is required"},
	} {
		bad := strings.Replace(good, c.from, c.to, 1)
		if bad == good {
			t.Fatalf("%s: replacement did not apply", name)
		}
		errs := s.ValidateYAML([]byte(bad))
		found := false
		for _, e := range errs {
			found = found || strings.Contains(e.Error(), c.want)
		}
		if !found {
			t.Errorf("%s: errors %v, want one with %q", name, errs, c.want)
		}
	}
	dup := good + strings.TrimPrefix(good[strings.Index(good, "    - name: g"):], "")
	if errs := s.ValidateYAML([]byte(dup)); len(errs) == 0 || !strings.Contains(errs[0].Error(), "duplicate entry") {
		t.Errorf("duplicate group names: %v", errs)
	}
}
