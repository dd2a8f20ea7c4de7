//go:build !paged_minimal_discovery

package server

// Every service discovery mechanism Prometheus has, so that any
// scrape_config of a prometheus.yml parses and runs here. The cloud SDKs
// (AWS, Azure, GCE...) cost about 35 MiB of resident memory at start
// (bench/embedded/RESULTS.md); build with -tags paged_minimal_discovery for
// Kubernetes, file, HTTP, DNS and Consul discovery only.
import _ "github.com/prometheus/prometheus/discovery/install"
