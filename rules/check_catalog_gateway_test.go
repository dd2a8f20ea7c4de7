package rules

import (
	"strings"
	"testing"
)

// The gateway's metrics are known to the catalogue (additions.yaml): the
// pre-1.1 names, typos, labels a family does not carry and rate() on a
// gauge are reported with their positions; the correct rule is not.
func TestGatewayCatalogFindings(t *testing.T) {
	path := "testdata/gateway/gateway-alerts.bad.yaml"
	f, err := ReadFile(path, ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Only = catalogCheckNames
	var got []string
	for _, fd := range Lint([]*File{f}, cfg) {
		got = append(got, fd.String())
	}
	want := []string{
		path + ":8:24: error [catalog/removed-metric] inference_model_request_total was removed from Gateway API Inference Extension (renamed when InferenceModel became InferenceObjective): use inference_objective_request_total",
		path + ":10:15: warning [catalog/unknown-metric] inference_pool_ready_pod is not a Gateway API Inference Extension metric; did you mean inference_pool_ready_pods?",
		path + `:12:23: warning [catalog/label] by (model_name): inference_pool_average_queue_size has no label "model_name" (its labels: name); did you mean name?`,
		path + ":14:15: error [promql/rate-gauge] rate() on inference_pool_ready_pods, which is a gauge: rate assumes a counter and reads every drop as a reset; use deriv() or delta()",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
