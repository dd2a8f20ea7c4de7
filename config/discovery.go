package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/discovery"
)

// allDiscovery is every discovery mechanism Prometheus registers in
// discovery/install (github.com/prometheus/prometheus v0.316.0, go.mod),
// by the name its scrape_config key carries (<name>_sd_configs), so that
// a mechanism this binary was built without is told apart from a typo.
// TestAllDiscoveryKnown keeps it in step with the library.
var allDiscovery = []string{
	"aws", "azure", "consul", "digitalocean", "dns", "docker", "dockerswarm",
	"ec2", "ecs", "elasticache", "eureka", "file", "gce", "hetzner", "http",
	"ionos", "kubernetes", "kuma", "lightsail", "linode", "marathon", "msk",
	"nerve", "nomad", "oci", "openstack", "outscale", "ovhcloud", "puppetdb",
	"rds", "scaleway", "serverset", "stackit", "triton", "uyuni", "vultr",
}

// missingDiscovery returns, for a scrape_config key such as
// "ec2_sd_configs" whose mechanism Prometheus has but this binary does
// not, what to use instead; ok is false for every other key.
func missingDiscovery(key string) (msg string, ok bool) {
	name, found := strings.CutSuffix(key, "_sd_configs")
	if !found || !slices.Contains(allDiscovery, name) || slices.Contains(discovery.RegisteredConfigNames(), name) {
		return "", false
	}
	return fmt.Sprintf("this paged is built without %s discovery (it has %s); "+
		"use the paged-full release archive, or build with: go build -tags paged_all_discovery ./cmd/paged",
		name, strings.Join(BuiltinDiscovery(), ", ")), true
}

// BuiltinDiscovery lists the discovery mechanisms this binary has,
// static_configs aside.
func BuiltinDiscovery() []string {
	var names []string
	for _, n := range discovery.RegisteredConfigNames() {
		if n != "static" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}
