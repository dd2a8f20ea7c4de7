//go:build paged_minimal_discovery

package server

// The discovery mechanisms LLM serving fleets use, without the cloud SDKs:
// Kubernetes, file, HTTP, DNS and Consul (plus static_configs, always).
// Other *_sd_configs then fail check-config as unknown fields.
import (
	_ "github.com/prometheus/prometheus/discovery/consul"
	_ "github.com/prometheus/prometheus/discovery/dns"
	_ "github.com/prometheus/prometheus/discovery/file"
	_ "github.com/prometheus/prometheus/discovery/http"
	_ "github.com/prometheus/prometheus/discovery/kubernetes"
)
