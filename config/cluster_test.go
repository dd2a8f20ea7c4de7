package config

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

func TestLoadConfigCluster(t *testing.T) {
	cfg, err := Load("testdata/cluster.yaml", noEnv)
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Cluster
	if !c.Enabled() || c.ListenAddress != "0.0.0.0:9094" || c.AdvertiseAddress != "10.0.0.1:9094" {
		t.Errorf("cluster addresses = %+v", c)
	}
	if !slices.Equal(c.Peers, []string{"paged-b.internal:9094", "10.0.0.2:9094"}) {
		t.Errorf("peers = %v", c.Peers)
	}
	if c.PeerTimeout != 10*time.Second || c.GossipInterval != DefaultGossipInterval || c.PushPullInterval != DefaultPushPullInterval {
		t.Errorf("cluster durations = %+v", c)
	}
	opts := NotifierCluster(c)
	if opts == nil || opts.ListenAddress != c.ListenAddress || opts.PeerTimeout != 10*time.Second || len(opts.Peers) != 2 {
		t.Errorf("notifier cluster options = %+v", opts)
	}

	y := cfg.Redacted2(t)
	for _, want := range []string{
		"cluster:\n  listen_address: 0.0.0.0:9094\n  advertise_address: 10.0.0.1:9094\n  peers:\n    - paged-b.internal:9094\n    - 10.0.0.2:9094\n  peer_timeout: 10s\n  gossip_interval: 200ms\n  pushpull_interval: 1m\n",
	} {
		if !strings.Contains(y, want) {
			t.Errorf("redacted config lacks %q:\n%s", want, y)
		}
	}
}

func TestLoadConfigClusterDisabledByDefault(t *testing.T) {
	for _, text := range []string{"", "cluster:\n", "cluster: {listen_address: \"\"}\n"} {
		cfg, err := Parse([]byte("datasource: {prometheus: {url: 'http://127.0.0.1:9090'}}\nrule_files: [rules/basic.rules.yaml]\n"+text), "testdata/inline.yaml", noEnv)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if cfg.Cluster.Enabled() || NotifierCluster(cfg.Cluster) != nil {
			t.Errorf("%q: cluster enabled: %+v", text, cfg.Cluster)
		}
		if y := cfg.Redacted2(t); strings.Contains(y, "cluster:") {
			t.Errorf("%q: redacted config shows a disabled cluster:\n%s", text, y)
		}
	}
}

// examples/ha is a pair: the same rules, datasource and notifier, each
// instance listing the other's gossip address, each with its own ports and
// storage.
func TestHAExamplePair(t *testing.T) {
	root := testbin.RepoRoot(t)
	a, err := Load(filepath.Join(root, "examples", "ha", "paged-a.yaml"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(filepath.Join(root, "examples", "ha", "paged-b.yaml"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range []string{"global", "datasource", "packs", "notifier"} {
		if a.sections[block] != b.sections[block] {
			t.Errorf("%s differs between the pair:\n%s\n---\n%s", block, a.sections[block], b.sections[block])
		}
	}
	if a.NotifierConfig == nil || !a.Cluster.Enabled() || !b.Cluster.Enabled() {
		t.Fatal("the pair needs a notifier and a cluster block")
	}
	if !slices.Equal(a.Cluster.Peers, []string{b.Cluster.ListenAddress}) || !slices.Equal(b.Cluster.Peers, []string{a.Cluster.ListenAddress}) {
		t.Errorf("peers do not point at each other: a %+v, b %+v", a.Cluster, b.Cluster)
	}
	if a.Cluster.PeerTimeout != b.Cluster.PeerTimeout {
		t.Errorf("peer_timeout differs: %v, %v", a.Cluster.PeerTimeout, b.Cluster.PeerTimeout)
	}
	if a.Storage.Path == b.Storage.Path || a.Web.ListenAddress == b.Web.ListenAddress || a.Cluster.ListenAddress == b.Cluster.ListenAddress {
		t.Error("the pair shares a storage path or a port")
	}
}
