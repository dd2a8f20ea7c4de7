// Package metrics is a made-up endpoint picker in the shape of GAIE's.
package metrics

import "github.com/prometheus/client_golang/prometheus"

const (
	objective = "inference_objective"
	pool      = "inference_pool"
)

var (
	modelLabels    = []string{"model_name", "target_model_name"}
	endpointLabels = []string{"pod_name", "namespace", "port"}

	requestCounter = prometheus.NewCounterVec(
		prometheus.CounterOpts{Subsystem: objective, Name: "request_total"},
		append(modelLabels, "priority"),
	)
	readyPods = prometheus.NewGaugeVec(
		prometheus.GaugeOpts{Subsystem: pool, Name: "ready_pods"},
		[]string{"name", "extra"},
	)
	attempts = prometheus.NewCounterVec(
		prometheus.CounterOpts{Subsystem: "inference_extension", Name: "scheduler_attempts_total"},
		append([]string{"status", "target_model_name"}, endpointLabels...),
	)
	madeUp = prometheus.NewHistogramVec(
		prometheus.HistogramOpts{Subsystem: objective, Name: "made_up_seconds"},
		modelLabels,
	)
	perPod = prometheus.NewDesc(prometheus.BuildFQName("", pool, "per_pod_queue_size"), "help", []string{"name", "model_server_pod"}, nil)
)

func collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(perPod, prometheus.GaugeValue, 1, "a", "b")
}
