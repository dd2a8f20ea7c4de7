//go:build paged_all_discovery

package config

// Every service discovery mechanism Prometheus has, Kubernetes and the
// clouds included, so that any scrape_config of a prometheus.yml parses
// and runs here: the paged-full release archives and the container image.
// Their client libraries cost every command of this build about 25 ms
// and 40 MiB at start (bench/startup.sh), which is why the default build
// leaves them out.
import (
	"github.com/prometheus/prometheus/discovery"
	_ "github.com/prometheus/prometheus/discovery/install"
	"github.com/prometheus/prometheus/discovery/kubernetes"

	promconfig "github.com/prometheus/common/config"
)

// DiscoveryBuild names this binary's set of discovery mechanisms.
const DiscoveryBuild = "all"

// sdTLSConfig returns the scrape_config key and TLS settings of a
// discovery config whose TLS files promtool checks: Kubernetes's.
func sdTLSConfig(c discovery.Config) (string, promconfig.TLSConfig, bool) {
	if k, ok := c.(*kubernetes.SDConfig); ok {
		return "kubernetes_sd_configs", k.HTTPClientConfig.TLSConfig, true
	}
	return "", promconfig.TLSConfig{}, false
}
