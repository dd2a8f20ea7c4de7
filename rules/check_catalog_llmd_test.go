package rules

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// catalogCheckNames are the checks of this area, for tests that run them
// together.
var catalogCheckNames = []string{
	CheckCatalogUnknownMetric, CheckCatalogCounterSuffix, CheckCatalogRemovedMetric,
	CheckCatalogSeriesSuffix, CheckCatalogLabel, CheckPromQLCounter, CheckPromQLRateGauge,
	CheckPromQLHistogramLe, CheckPromQLLeBucket, CheckCatalogThresholdUnit,
}

// TestLLMDBugs: every defect of the public llm-d and vLLM example rules
// that the catalogue can see is reported, with its exact position; the
// correct rules of the same file stay silent.
func TestLLMDBugs(t *testing.T) {
	path := "testdata/llm-d/llm-d-alerts.bad.yaml"
	f, err := ReadFile(path, ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Problems) > 0 {
		t.Fatalf("loader problems: %v", f.Problems)
	}
	cfg := DefaultConfig()
	cfg.Only = catalogCheckNames
	var got []string
	for _, fd := range Lint([]*File{f}, cfg) {
		got = append(got, fd.String())
	}
	want := []string{
		path + ":19:24: error [catalog/removed-metric] inference_model_request_error_total was removed from Gateway API Inference Extension (renamed when InferenceModel became InferenceObjective): use inference_objective_request_error_total",
		path + ":21:24: error [catalog/removed-metric] inference_model_request_total was removed from Gateway API Inference Extension (renamed when InferenceModel became InferenceObjective): use inference_objective_request_total",
		path + ":28:55: error [catalog/removed-metric] inference_model_request_duration_seconds_bucket was removed from Gateway API Inference Extension (renamed when InferenceModel became InferenceObjective): use inference_objective_request_duration_seconds_bucket",
		path + ":36:31: error [catalog/counter-suffix] vllm:num_preemptions matches no series: vLLM exposes this counter as vllm:num_preemptions_total (prometheus_client adds _total)",
		path + ":64:22: error [catalog/counter-suffix] vllm:num_preemptions matches no series: vLLM exposes this counter as vllm:num_preemptions_total (prometheus_client adds _total)",
		path + ":70:66: error [promql/le-bucket] le=\"120\" matches nothing on Prometheus 3, which stores this bucket boundary as le=\"120.0\"; vLLM's prometheus_client writes le=\"120.0\" too, so Prometheus 2 stores the same: use le=\"120.0\"",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The finding's line really is the expression's line.
	lines := bytes.Split(mustRead(t, path), []byte("\n"))
	if !bytes.Contains(lines[35], []byte("vllm:num_preemptions[5m]")) {
		t.Errorf("line 36 is %q", lines[35])
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
