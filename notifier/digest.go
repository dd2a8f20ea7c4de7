package notifier

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/alertmanager/nflog"
	"github.com/prometheus/alertmanager/nflog/nflogpb"
	"github.com/slack-go/slack"
)

// Digest is a message about paging rather than about alerts: the weekly
// report (package digest). It goes to a receiver's slack_configs and
// webhook_configs only, never through its other integrations (they
// page someone); the receiver need not be in the route tree.
type Digest struct {
	// Key identifies the digest (the scheduled time of its period).
	// Each integration of the receiver delivers a key once: the
	// notification log records the delivery, on disk before SendDigest
	// returns and gossiped to the other members of a cluster.
	Key string
	// Due is when the digest was scheduled.
	Due time.Time
	// Text is the message's plain text: Slack's notification and
	// fallback text.
	Text string
	// Blocks are the Slack message's Block Kit blocks.
	Blocks []slack.Block
	// JSON is the body posted to the receiver's webhooks.
	JSON []byte
}

// DigestResult is what SendDigest did with each integration of the
// receiver that carries a digest.
type DigestResult struct {
	// Sent is the number of integrations this paged delivered it to.
	Sent int
	// Already is the number that had it already: from this paged
	// before a restart, or from another member of the cluster.
	Already int
}

// ErrDigestTooLate says that a member of a cluster did not send a
// digest because it is older than the notification log's retention:
// the record of another member having sent it may be gone, and sending
// it again would send it twice.
var ErrDigestTooLate = errors.New("the digest is older than the notification log's retention: in a cluster it is not sent so late, since the other member may have sent it")

// digestGroupKey is the notification log's group key of a digest. An
// alert group's key starts with "{", so the two never meet.
func digestGroupKey(key string) string { return "paged-digest:" + key }

// SendDigest sends d to the slack_configs and webhook_configs of the
// receiver, each once. In a cluster, it first waits for the gossip to
// settle and for its turn (PeerTimeout times its position, as the
// notification pipeline does), so that the member before it sends and
// this one finds the delivery in the gossiped notification log. An
// integration that fails is reported in the error; those that delivered
// are recorded and not sent again when SendDigest is called again for
// the same key.
//
// The cluster deduplicates a digest as it does a notification, rather
// than by letting only the member at position 0 send: with positions
// alone, a member that was down while the other sent (being position 0
// then) would send the digest again when it starts and catches up; the
// gossiped notification log, which it pulls when it joins, tells it the
// digest went out. As with notifications, both may send when the gossip
// takes longer than peer_timeout: a digest twice rather than none.
func (n *Notifier) SendDigest(ctx context.Context, receiver string, d Digest) (DigestResult, error) {
	var res DigestResult
	if d.Key == "" {
		return res, errors.New("digest: no key")
	}
	n.mu.Lock()
	conf := n.conf
	n.mu.Unlock()
	var recv *Receiver
	for i := range conf.Receivers {
		if conf.Receivers[i].Name == receiver {
			recv = &conf.Receivers[i]
		}
	}
	switch {
	case recv == nil:
		return res, fmt.Errorf("digest: no receiver %q in the notifier's configuration", receiver)
	case len(recv.SlackConfigs)+len(recv.WebhookConfigs) == 0:
		return res, fmt.Errorf("digest: receiver %q has no slack_configs or webhook_configs", receiver)
	}
	if n.peer != nil {
		if time.Since(d.Due) >= n.opts.Retention {
			return res, ErrDigestTooLate
		}
		if err := n.peer.WaitReady(ctx); err != nil {
			return res, fmt.Errorf("digest: waiting for the cluster to settle: %w", err)
		}
		if wait := n.clusterWait(); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return res, ctx.Err()
			case <-t.C:
			}
		}
	}
	nfl := durableNflog{log: n.nflog, state: n.nflogSt, logger: n.logger.With("component", "nflog")}
	gkey := digestGroupKey(d.Key)
	var errs []error
	deliver := func(integration string, idx int, send func() error) {
		r := &nflogpb.Receiver{GroupName: receiver, Integration: integration, Idx: uint32(idx)}
		if es, err := nfl.Query(nflog.QGroupKey(gkey), nflog.QReceiver(r)); err == nil && len(es) == 1 {
			res.Already++
			return
		}
		if err := send(); err != nil {
			errs = append(errs, fmt.Errorf("%s_configs[%d]: %w", integration, idx, err))
			return
		}
		res.Sent++
		// Kept for the notification log's retention, longer than any
		// member waits to send a digest it missed (ErrDigestTooLate).
		if err := nfl.Log(r, gkey, nil, nil, nil, nil, 0); err != nil {
			n.logger.Error("digest sent but not recorded in the notification log: a restart may send it again", "receiver", receiver, "integration", integration, "err", err)
		}
	}
	for i, sc := range recv.SlackConfigs {
		deliver("slack", i, func() error { return n.digestToSlack(ctx, receiver, sc, i, d) })
	}
	for i, wc := range recv.WebhookConfigs {
		deliver("webhook", i, func() error {
			w, err := newWebhook(wc, nil, n.opts.Transport, n.logger.With("integration", "webhook", "receiver", receiver))
			if err != nil {
				return err
			}
			return w.post(ctx, d.JSON).Err()
		})
	}
	return res, errors.Join(errs...)
}

// digestToSlack posts the digest as a new message: through the incoming
// webhook, or with the bot token to the configured channel. Errors never
// carry the webhook URL or the token.
func (n *Notifier) digestToSlack(ctx context.Context, receiver string, sc *SlackConfig, idx int, d Digest) error {
	client, err := httpClient(sc.HTTPConfig, "slack", n.opts.Transport)
	if err != nil {
		return err
	}
	s := &slackNotifier{conf: sc, idx: idx, client: slackClient(client, sc), logger: n.logger.With("integration", "slack", "receiver", receiver), metrics: n.metrics, rt: n.opts.Transport}
	timeout := time.Duration(sc.Timeout)
	if timeout <= 0 {
		timeout = DefaultSlackTimeout
	}
	msg := slackMessage{Text: d.Text, Blocks: d.Blocks}
	if !sc.BotMode() {
		return s.postWebhook(ctx, timeout, msg).Err()
	}
	token, err := secretOrFile(string(sc.AppToken), sc.AppTokenFile)
	if err != nil {
		return fmt.Errorf("app_token_file: %w", err)
	}
	appURL := sc.AppURL
	if appURL == "" {
		appURL = DefaultSlackAppURL
	}
	api := slack.New(token, slack.OptionAPIURL(appURL), slack.OptionHTTPClient(s.client))
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, _, err = api.PostMessageContext(ctx, sc.Channel, slack.MsgOptionText(msg.Text, false), slack.MsgOptionBlocks(msg.Blocks...))
	return s.verdict("chat.postMessage", err).Err()
}
