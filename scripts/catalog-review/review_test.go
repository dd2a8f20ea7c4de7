package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
)

// review runs the tool on a testdata checkout and returns its report,
// without the gone lines (the fixtures declare a few families only).
func review(t *testing.T, project, dir string) (string, []string) {
	t.Helper()
	var out bytes.Buffer
	if _, err := Run(context.Background(), Options{Project: project, Checkout: dir, Out: &out, List: true}); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for l := range strings.SplitSeq(out.String(), "\n") {
		if l != "" && !strings.HasPrefix(l, "gone ") && !strings.HasPrefix(l, "#") && !strings.Contains(l, "difference(s)") {
			lines = append(lines, l)
		}
	}
	return out.String(), lines
}

func wantLines(t *testing.T, report string, got, want []string) {
	t.Helper()
	for _, w := range want {
		if !slices.ContainsFunc(got, func(l string) bool { return strings.HasPrefix(l, w) }) {
			t.Errorf("missing %q\nreport:\n%s", w, report)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d lines, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
}

func TestTGI(t *testing.T) {
	report, got := review(t, "tgi", "testdata/tgi")
	wantLines(t, report, got, []string{
		"wrong  tgi_request_failure: err values exploded upstream are not in the catalogue's",
		"lacks  tgi_made_up_gauge (gauge; labels [shard]) router/src/server.rs:11",
		// A histogram without buckets is a summary; tgi_queue_size is a gauge.
		"wrong  tgi_queue_size: type summary upstream, gauge in the catalogue",
		"wrong  tgi_batch_current_size: upstream only describes it",
	})
	for _, s := range []string{
		"#   tgi_request_duration (histogram; labels []) router/src/server.rs:6",
		"#   tgi_request_skipped_tokens (summary; labels []) router/src/server.rs:7",
		"#   tgi_batch_total_tokens (gauge) router/src/server.rs:21",
	} {
		if !strings.Contains(report, s) {
			t.Errorf("missing %q in\n%s", s, report)
		}
	}
	if strings.Contains(report, "tgi_commented_out") {
		t.Errorf("a commented-out macro was read:\n%s", report)
	}
}

func TestDCGMExporter(t *testing.T) {
	report, got := review(t, "dcgm-exporter", "testdata/dcgm")
	wantLines(t, report, got, []string{
		"wrong  DCGM_FI_DEV_FB_FREE: type counter upstream, gauge in the catalogue",
		"lacks  DCGM_FI_DEV_MADE_UP (gauge) etc/default-counters.csv:6",
	})
	if !strings.Contains(report, "#   DCGM_FI_DEV_THERMAL_VIOLATION (counter, disabled by default)") ||
		!strings.Contains(report, "#   DCGM_FI_PROF_PCIE_TX_BYTES (gauge) etc/default-counters.csv:8") ||
		strings.Contains(report, "DCGM_FI_DRIVER_VERSION") {
		t.Errorf("fields read wrong:\n%s", report)
	}
}

func TestGAIE(t *testing.T) {
	report, got := review(t, "gaie", "testdata/gaie")
	wantLines(t, report, got, []string{
		"wrong  inference_pool_ready_pods: labels [extra name] upstream, [name] in the catalogue",
		"lacks  inference_objective_made_up_seconds (histogram; labels [model_name target_model_name])",
	})
	for _, s := range []string{
		"#   inference_objective_request_total (counter; labels [model_name priority target_model_name])",
		"#   inference_extension_scheduler_attempts_total (counter; labels [namespace pod_name port status target_model_name])",
		"#   inference_pool_per_pod_queue_size (gauge; labels [model_server_pod name])",
	} {
		if !strings.Contains(report, s) {
			t.Errorf("missing %q in\n%s", s, report)
		}
	}
	// A revision without the endpoint picker is GAIE 1.6's absence.
	var out bytes.Buffer
	n, err := Run(context.Background(), Options{Project: "gaie", Checkout: "testdata/tgi", Out: &out})
	if err != nil || n != 0 || !strings.Contains(out.String(), "# no metrics: pkg/epp/metrics/metrics.go is not in the checkout") {
		t.Errorf("no endpoint picker: %d differences, %v\n%s", n, err, out.String())
	}
}

func TestVLLM(t *testing.T) {
	report, got := review(t, "vllm", "testdata/vllm")
	wantLines(t, report, got, []string{
		"wrong  vllm:time_to_first_token_seconds: labels [engine model_name oops] upstream",
		"lacks  vllm:made_up_gauge (gauge; labels [engine model_name])",
	})
	for _, s := range []string{
		"#   vllm:request_success_total (counter; labels [engine finished_reason model_name])",
		"#   vllm:num_preemptions_total (counter; labels [engine model_name])",
		"#   vllm:cache_config_info (gauge) vllm/v1/metrics/loggers.py:34",
	} {
		if !strings.Contains(report, s) {
			t.Errorf("missing %q in\n%s", s, report)
		}
	}
	if strings.Contains(report, "other_gauge") {
		t.Errorf("another program's gauge was read:\n%s", report)
	}
}

func TestUsage(t *testing.T) {
	var out bytes.Buffer
	if _, err := Run(context.Background(), Options{Project: "nope", Checkout: ".", Out: &out}); err == nil {
		t.Error("unknown project accepted")
	}
	if _, err := Run(context.Background(), Options{Project: "tgi", Checkout: "testdata/none", Out: &out}); err == nil {
		t.Error("missing checkout accepted")
	}
	if _, err := Run(context.Background(), Options{Project: "tgi", Checkout: "testdata/tgi", Out: &out, Release: "1.0"}); err == nil {
		t.Error("-release accepted for a project without releases in the catalogue")
	}
}
