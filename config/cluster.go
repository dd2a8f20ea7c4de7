package config

import (
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/pagedhq/paged/notifier"
)

// Defaults of the cluster: block: Alertmanager's.
const (
	DefaultPeerTimeout      = notifier.DefaultPeerTimeout
	DefaultGossipInterval   = notifier.DefaultGossipInterval
	DefaultPushPullInterval = notifier.DefaultPushPullInterval
)

// ClusterConfig is the cluster: block. Two paged instances with the same
// rules and notifier block, each listing the other in peers, form an HA
// pair: their notifiers gossip the notification log and the silences, and
// one notification goes out per alert group (docs/ha.md).
type ClusterConfig struct {
	// ListenAddress is the host:port gossip binds, TCP and UDP. Empty (the
	// default) runs paged alone.
	ListenAddress string
	// AdvertiseAddress is the host:port the other peers reach this one at;
	// empty derives it from ListenAddress.
	AdvertiseAddress string
	// Peers are the other instances' gossip addresses (host:port).
	Peers []string
	// PeerTimeout is how long each peer waits after the one before it
	// before sending.
	PeerTimeout      time.Duration
	GossipInterval   time.Duration
	PushPullInterval time.Duration
}

// Enabled reports whether paged runs as a peer of a cluster.
func (c ClusterConfig) Enabled() bool { return c.ListenAddress != "" }

func defaultClusterConfig() ClusterConfig {
	return ClusterConfig{
		PeerTimeout:      DefaultPeerTimeout,
		GossipInterval:   DefaultGossipInterval,
		PushPullInterval: DefaultPushPullInterval,
	}
}

// cluster decodes the cluster: block. Addresses are host:port; durations
// are positive.
func (d *decoder) cluster(n *yaml.Node, key string, dst *ClusterConfig) {
	var peersNode, advertiseNode *yaml.Node
	d.mapping(n, key,
		field{"listen_address", func(n *yaml.Node, key string) {
			if v, ok := d.scalar(n, key); ok && v == "" {
				return // empty: no cluster
			}
			d.hostPort(&dst.ListenAddress)(n, key)
		}},
		field{"advertise_address", func(n *yaml.Node, key string) {
			advertiseNode = n
			if v, ok := d.scalar(n, key); ok && v == "" {
				return
			}
			d.hostPort(&dst.AdvertiseAddress)(n, key)
		}},
		field{"peers", func(n *yaml.Node, key string) {
			peersNode = n
			d.list(func(n *yaml.Node, key string) {
				var p string
				d.hostPort(&p)(n, key)
				if p != "" {
					dst.Peers = append(dst.Peers, p)
				}
			})(n, key)
		}},
		field{"peer_timeout", d.clusterDuration(&dst.PeerTimeout)},
		field{"gossip_interval", d.clusterDuration(&dst.GossipInterval)},
		field{"pushpull_interval", d.clusterDuration(&dst.PushPullInterval)},
	)
	if dst.ListenAddress != "" || d.hasProblemUnder(key+".listen_address") {
		return
	}
	if peersNode != nil && len(peersNode.Content) > 0 {
		d.errorf(peersNode, key+".peers", "needs cluster.listen_address: peers gossip with this instance on it")
	}
	if dst.AdvertiseAddress != "" {
		d.errorf(advertiseNode, key+".advertise_address", "needs cluster.listen_address")
	}
}

// clusterDuration is a positive duration. A negative one, which
// Alertmanager's flags would take, is named as such.
func (d *decoder) clusterDuration(dst *time.Duration) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		if n.Kind == yaml.ScalarNode && strings.HasPrefix(strings.TrimSpace(n.Value), "-") {
			d.errorf(n, key, "must not be negative")
			return
		}
		d.duration(dst, false)(n, key)
	}
}

// NotifierCluster is the notifier's view of the cluster: block; nil when
// the cluster is disabled.
func NotifierCluster(c ClusterConfig) *notifier.ClusterOptions {
	if !c.Enabled() {
		return nil
	}
	return &notifier.ClusterOptions{
		ListenAddress:    c.ListenAddress,
		AdvertiseAddress: c.AdvertiseAddress,
		Peers:            c.Peers,
		PeerTimeout:      c.PeerTimeout,
		GossipInterval:   c.GossipInterval,
		PushPullInterval: c.PushPullInterval,
	}
}
