package notifier

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/prometheus/alertmanager/cluster"
	"github.com/prometheus/alertmanager/notify"
	"github.com/prometheus/client_golang/prometheus"
)

// Defaults of ClusterOptions: Alertmanager's own (its --cluster.* flags).
const (
	DefaultPeerTimeout      = 15 * time.Second
	DefaultGossipInterval   = cluster.DefaultGossipInterval
	DefaultPushPullInterval = cluster.DefaultPushPullInterval
	// clusterLeaveTimeout bounds how long shutdown waits for the leave
	// message to reach the other peers.
	clusterLeaveTimeout = 10 * time.Second
)

// ClusterOptions makes the notifier one peer of an HA pair (or group):
// the peers gossip the notification log and the silences, and each waits
// PeerTimeout times its position in the cluster before sending, so the
// first peer sends and the others find the group already notified.
type ClusterOptions struct {
	// ListenAddress is the host:port gossip binds (TCP and UDP).
	ListenAddress string
	// AdvertiseAddress is the host:port other peers reach this one at;
	// empty derives it from ListenAddress.
	AdvertiseAddress string
	// Peers are the host:port of the other peers to join at start. A peer
	// that is down is retried in the background.
	Peers []string
	// Name identifies the peer; empty gives a random one. Peers are
	// ordered by name: the first sends, the next waits PeerTimeout, the
	// one after 2*PeerTimeout, and so on.
	Name string
	// PeerTimeout is the wait between the peers' turns (default 15s).
	PeerTimeout time.Duration
	// GossipInterval is how often gossip messages are sent (default 200ms).
	GossipInterval time.Duration
	// PushPullInterval is how often full state is exchanged (default 1m).
	PushPullInterval time.Duration
	// SettleTimeout bounds the wait at start for the cluster to settle
	// before the first notification (default PushPullInterval). Sending
	// goes ahead after it even if the cluster never settles.
	SettleTimeout time.Duration
}

// Validate checks the addresses and fills the defaults of zero durations.
func (c *ClusterOptions) Validate() error {
	var errs []error
	check := func(what, addr string, allowEmpty bool) {
		if addr == "" && allowEmpty {
			return
		}
		if err := checkHostPort(addr); err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: %w", what, err))
		}
	}
	check("listen address", c.ListenAddress, false)
	check("advertise address", c.AdvertiseAddress, true)
	for i, p := range c.Peers {
		check(fmt.Sprintf("peers[%d]", i), p, false)
	}
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"peer timeout", &c.PeerTimeout, DefaultPeerTimeout},
		{"gossip interval", &c.GossipInterval, DefaultGossipInterval},
		{"push-pull interval", &c.PushPullInterval, DefaultPushPullInterval},
		{"settle timeout", &c.SettleTimeout, 0},
	} {
		switch {
		case *d.v < 0:
			errs = append(errs, fmt.Errorf("cluster %s: must not be negative", d.name))
		case *d.v == 0:
			*d.v = d.def
		}
	}
	if c.SettleTimeout == 0 {
		c.SettleTimeout = c.PushPullInterval // Alertmanager's default
	}
	return errors.Join(errs...)
}

func checkHostPort(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("expected host:port, got %q", addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("invalid port in %q", addr)
	}
	return nil
}

// newPeer binds the gossip listener. Alertmanager's cluster metrics
// (alertmanager_cluster_*, alertmanager_peer_position) are registered on
// reg.
func newPeer(c *ClusterOptions, logger *slog.Logger, reg prometheus.Registerer) (*cluster.Peer, error) {
	p, err := cluster.Create(
		logger,
		reg,
		c.ListenAddress,
		c.AdvertiseAddress,
		c.Peers,
		true, // wait for names that resolve to nothing yet (DNS of peers still starting)
		c.PushPullInterval,
		c.GossipInterval,
		cluster.DefaultTCPTimeout,
		cluster.DefaultResolvePeersTimeout,
		cluster.DefaultProbeTimeout,
		cluster.DefaultProbeInterval,
		nil, // no TLS
		false,
		"",
		c.Name,
	)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	return p, nil
}

// joinCluster joins the known peers and waits in the background for the
// member list to settle; the pipeline holds notifications until it has,
// or until SettleTimeout. The returned function waits for the settle
// goroutine after ctx ends.
func (n *Notifier) joinCluster(ctx context.Context) (wait func()) {
	c := n.opts.Cluster
	if err := n.peer.Join(cluster.DefaultReconnectInterval, cluster.DefaultReconnectTimeout); err != nil {
		// The peers are retried in the background; a peer that starts
		// alone sends alone until they come up.
		n.logger.Warn("joining the cluster failed, retrying in the background", "peers", c.Peers, "err", err)
	}
	settleCtx, cancel := context.WithTimeout(ctx, c.SettleTimeout)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		n.peer.Settle(settleCtx, c.GossipInterval*10)
		n.logger.Info("cluster settled", "peer", n.peer.Name(), "members", n.peer.ClusterSize())
	}()
	return func() { <-done }
}

func (n *Notifier) leaveCluster() {
	if err := n.peer.Leave(clusterLeaveTimeout); err != nil {
		n.logger.Warn("leaving the cluster failed", "err", err)
	}
}

// clusterWait is the pipeline's wait before sending: one PeerTimeout for
// each peer ordered before this one, so peers take turns and later ones
// find what earlier ones sent in the gossiped notification log.
func (n *Notifier) clusterWait() time.Duration {
	if n.peer == nil {
		return 0
	}
	return time.Duration(n.peer.Position()) * n.opts.Cluster.PeerTimeout
}

// apiPeer is the peer for the API's status: nil without a cluster.
func (n *Notifier) apiPeer() cluster.ClusterPeer {
	if n.peer == nil {
		return nil
	}
	return n.peer
}

// notifyPeer is the peer as the pipeline wants it: a nil interface when
// there is no cluster (a typed nil would be taken for a peer).
func (n *Notifier) notifyPeer() notify.Peer {
	if n.peer == nil {
		return nil
	}
	return n.peer
}
