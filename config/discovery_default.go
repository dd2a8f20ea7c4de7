//go:build !paged_all_discovery

package config

// The default build discovers targets from files, HTTP, DNS and Consul
// (plus static_configs, always): what a laptop, a VM fleet or CI needs,
// without the client libraries of Kubernetes and the clouds. Those made
// every command start slower and heavier than promtool, `paged version`
// and `paged lint` included (bench/startup.sh: Kubernetes's client alone
// added 37 MB to the binary and 14 MiB to every start). Kubernetes, EC2,
// Azure, GCE and the rest are in a build with -tags paged_all_discovery,
// the paged-full release archives and the container image. A scrape
// config that names one of them is told so by check-config
// (missingDiscovery).
import (
	"github.com/prometheus/prometheus/discovery"
	_ "github.com/prometheus/prometheus/discovery/consul"
	_ "github.com/prometheus/prometheus/discovery/dns"
	_ "github.com/prometheus/prometheus/discovery/file"
	_ "github.com/prometheus/prometheus/discovery/http"

	promconfig "github.com/prometheus/common/config"
)

// DiscoveryBuild names this binary's set of discovery mechanisms.
const DiscoveryBuild = "default"

// sdTLSConfig: none of this build's mechanisms has TLS files that
// promtool checks.
func sdTLSConfig(discovery.Config) (string, promconfig.TLSConfig, bool) {
	return "", promconfig.TLSConfig{}, false
}
