package config

import (
	"errors"
	"strings"
	"testing"
)

// FuzzConfigPacks: any packs: block gives a configuration or problems,
// each with its line and column in the file; never a panic.
func FuzzConfigPacks(f *testing.F) {
	for _, s := range []string{
		"- name: vllm\n  selector: '{job=\"vllm-prod\"}'\n  set: {VLLMKVCacheSaturated: 0.9}\n  for: {VLLMKVCacheSaturated: 5m}\n  severity: {VLLMQueueBacklog: critical}\n  labels: {team: x}\n  disable: [VLLMKVCacheOverprovisioned]\n",
		"- {name: tgi, selector: '{job=~\"(\"}'}\n",
		"- name: vllm\n  set: {VLLMTargetDown: .inf, Nope: [1]}\n",
		"- vllm\n- vllm\n",
		"- name: ../../../etc\n",
		"- name: vllm\n  selector: \"{\\x00}\"\n",
		"{}",
		"- name: dcgm\n  labels: {\"\\xff\": x, alertname: y}\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, block string) {
		var b strings.Builder
		b.WriteString("datasource:\n  prometheus: {url: \"http://127.0.0.1:9090\"}\npacks:\n")
		for _, l := range strings.Split(block, "\n") {
			b.WriteString("  " + l + "\n")
		}
		cfg, err := Parse([]byte(b.String()), "paged.yaml", func(string) string { return "" })
		if err == nil {
			for _, p := range cfg.Packs {
				if fe := p.Rendered.File.Errors(); len(fe) > 0 {
					t.Fatalf("a pack that does not load was accepted: %v", fe)
				}
			}
			return
		}
		var ce *Error
		if !errors.As(err, &ce) {
			t.Fatalf("error %T: %v", err, err)
		}
		for _, p := range ce.Problems {
			if p.File == "paged.yaml" && p.Line <= 0 {
				t.Fatalf("problem without a position: %s", p)
			}
		}
	})
}
