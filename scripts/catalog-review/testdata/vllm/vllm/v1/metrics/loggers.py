# A made-up logger in the shape of vLLM's.
import prometheus_client


class PrometheusStatLogger:
    _gauge_cls = prometheus_client.Gauge
    _counter_cls = prometheus_client.Counter
    _histogram_cls = prometheus_client.Histogram

    def __init__(self, vllm_config):
        labelnames = ["model_name", "engine"]
        self.gauge_running = self._gauge_cls(
            name="vllm:num_requests_running",
            documentation="Number of requests (in batches).",
            multiprocess_mode="mostrecent",
            labelnames=labelnames)
        self.counter_success = self._counter_cls(
            name="vllm:request_success",
            documentation="Count of successfully processed requests.",
            labelnames=labelnames + ["finished_reason"])
        self.counter_preempt = self._counter_cls(
            name="vllm:num_preemptions_total",
            documentation="Already with _total.",
            labelnames=labelnames)
        self.hist = self._histogram_cls(
            name="vllm:time_to_first_token_seconds",
            documentation="Histogram of time to first token in seconds.",
            buckets=[0.001, 0.005],
            labelnames=labelnames + ["oops"])
        self.made_up = prometheus_client.Gauge(
            "vllm:made_up_gauge", "positional name", labelnames=labelnames)
        info_labels = config.metrics_info()
        name = "vllm:cache_config_info"
        self.info = self._gauge_cls(name=name, documentation="x", labelnames=info_labels.keys())
        self.not_ours = prometheus_client.Gauge("other_gauge", "not vLLM's")
