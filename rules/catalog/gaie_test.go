package catalog

import (
	"slices"
	"testing"
)

// The gateway's metrics, as read in the extension's source
// (additions.yaml): types, labels, the v1.1 rename and the releases.
func TestGatewayMetrics(t *testing.T) {
	c := Default()
	s := c.Server("gaie")
	if s == nil || s.Prefix != "inference_" || c.ServerFor("inference_pool_ready_pods") != s {
		t.Fatalf("gaie server %+v", s)
	}
	for _, w := range []struct {
		name   string
		typ    Type
		labels []string
		status Status
	}{
		{"inference_objective_request_total", Counter, []string{"model_name", "target_model_name", "priority"}, Current},
		{"inference_objective_request_error_total", Counter, []string{"model_name", "target_model_name", "error_code"}, Current},
		{"inference_objective_request_duration_seconds", Histogram, []string{"model_name", "target_model_name"}, Current},
		{"inference_pool_average_kv_cache_utilization", Gauge, []string{"name"}, Current},
		{"inference_pool_average_queue_size", Gauge, []string{"name"}, Current},
		{"inference_pool_ready_pods", Gauge, []string{"name"}, Current},
		{"inference_pool_per_pod_queue_size", Gauge, []string{"name", "model_server_pod"}, Current},
		{"inference_extension_scheduler_attempts_total", Counter, []string{"status", "target_model_name", "pod_name", "namespace", "port"}, Current},
		{"llm_d_inference_scheduler_disagg_decision_total", Counter, []string{"model_name", "decision_type"}, Conditional},
		{"inference_model_request_total", Counter, []string{"model_name", "target_model_name"}, Removed},
	} {
		m := c.Metric(w.name)
		if m == nil {
			t.Errorf("%s: not in the catalogue", w.name)
			continue
		}
		if m.Server != s || m.Type != w.typ || !slices.Equal(m.Labels, w.labels) || m.Status != w.status {
			t.Errorf("%s: server %s type %q labels %v status %s; want gaie %q %v %s", w.name, m.Server.Key, m.Type, m.Labels, m.Status, w.typ, w.labels, w.status)
		}
	}
	if got := c.Replaces("inference_objective_request_error_total"); !slices.Equal(got, []string{"inference_model_request_error_total"}) {
		t.Errorf("inference_objective_request_error_total replaces %v", got)
	}
	if got := c.Metric("inference_objective_request_duration_seconds").Buckets; len(got) != 1 || len(got[0]) != 35 || got[0][34] != 3600 {
		t.Errorf("request duration buckets %v, want the 35 general latency buckets to 3600 s", got)
	}
	line := "inference-gateway"
	for _, w := range []struct {
		name, rel string
		exposed   bool
	}{
		{"inference_model_request_total", "1.0", true},
		{"inference_model_request_total", "1.1", false},
		{"inference_objective_request_total", "1.0", false},
		{"inference_objective_request_total", "1.1", true},
		{"inference_extension_scheduler_attempts_total", "1.2", false},
		{"inference_extension_scheduler_attempts_total", "1.3", true},
		{"inference_pool_average_running_requests", "1.4", false},
		{"inference_pool_ready_pods", "0.3", true},
	} {
		if got := c.ExposedIn(line, w.name, w.rel); got != w.exposed {
			t.Errorf("ExposedIn(%s, %s) = %v, want %v", w.name, w.rel, got, w.exposed)
		}
	}
}
