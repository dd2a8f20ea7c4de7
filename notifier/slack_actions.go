package notifier

import (
	"github.com/pagedhq/paged/history"

	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/dispatch"
	"github.com/prometheus/alertmanager/nflog"
	"github.com/prometheus/alertmanager/silence"
	"github.com/prometheus/alertmanager/silence/silencepb"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/slack-go/slack"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The action_ids of the buttons paged puts on a group's message when
// slack_interactivity is configured. They are a contract: tests, the
// documentation and other tools rely on them.
const (
	ActionAck                   = "paged.ack"
	ActionUnack                 = "paged.unack"
	ActionSilence1h             = "paged.silence.1h"
	ActionSilence4h             = "paged.silence.4h"
	ActionSilence24h            = "paged.silence.24h"
	ActionSilenceUntilResolved  = "paged.silence.until_resolved"
	ActionUnsilence             = "paged.unsilence"
	actionsBlockID              = "paged.actions"
	statusBlockID               = "paged.status"
	untilResolvedMax            = 7 * 24 * time.Hour
	silenceAnnotationFrom       = "paged.from"           // "slack"
	silenceAnnotationUntilResol = "paged.until_resolved" // "true"
	silenceAnnotationGroup      = "paged.group_key"
	silenceAnnotationReceiver   = "paged.receiver"
)

// silenceDurations are the fixed-length silences the buttons offer.
var silenceDurations = map[string]time.Duration{
	ActionSilence1h:  time.Hour,
	ActionSilence4h:  4 * time.Hour,
	ActionSilence24h: 24 * time.Hour,
}

// Outcomes of a Slack action, for paged_slack_actions_total.
const (
	actApplied   = "applied"   // the state changed
	actUnchanged = "unchanged" // already so (a double click, someone else first)
	actDuplicate = "duplicate" // the same press delivered again
	actRefused   = "refused"   // the user may not act
	actInvalid   = "invalid"   // not a paged button, or a group paged does not know
	actFailed    = "failed"    // the state could not be written
)

// slackActions applies the presses of a group's buttons.
type slackActions struct {
	n       *Notifier
	logger  *slog.Logger
	counter *prometheus.CounterVec // action, outcome
	// suppressed counts repeat notifications held back by an
	// acknowledgement.
	suppressed prometheus.Counter
	// socketUp is 1 while a Socket Mode connection is open.
	socketUp prometheus.Gauge

	mu     sync.Mutex // one action at a time: they are rare, and each reads then writes
	groups userGroupCache
}

func newSlackActions(n *Notifier, reg prometheus.Registerer) *slackActions {
	a := &slackActions{
		n:      n,
		logger: n.logger.With("component", "slack-actions"),
		counter: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paged_slack_actions_total",
			Help: "Presses of the Slack message buttons (acknowledge, silence, …) by action and outcome (applied, unchanged, duplicate, refused, invalid, failed).",
		}, []string{"action", "outcome"}),
	}
	a.suppressed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "paged_slack_repeats_held_total",
		Help: "Repeat notifications (repeat_interval) not sent because the group is acknowledged in Slack.",
	})
	a.socketUp = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "paged_slack_socket_mode_connected",
		Help: "1 while paged holds a Slack Socket Mode connection (slack_interactivity mode socket), else 0: presses of the buttons wait in Slack meanwhile.",
	})
	reg.MustRegister(a.counter, a.suppressed, a.socketUp)
	return a
}

// actionResult is what an action did, for the log, the metric and the
// reply to the user.
type actionResult struct {
	outcome string
	// ephemeral, when set, is told to the user alone.
	ephemeral string
	// edit: the message must be edited to show the new state.
	edit bool
	ref  actionRef
	conf *SlackConfig
}

// press is one button press, from Socket Mode or HTTP.
type press struct {
	action    string // the action_id
	value     string
	actionTS  string
	userID    string
	userName  string
	channelID string
	messageTS string
}

// pressesOf returns the paged presses of an interaction; others are
// ignored (another app's buttons, link buttons' clicks).
func pressesOf(cb *slack.InteractionCallback) []press {
	if cb.Type != slack.InteractionTypeBlockActions {
		return nil
	}
	var out []press
	for _, a := range cb.ActionCallback.BlockActions {
		if a == nil || !strings.HasPrefix(a.ActionID, "paged.") {
			continue
		}
		p := press{
			action: a.ActionID, value: a.Value, actionTS: a.ActionTs,
			userID: cb.User.ID, userName: cb.User.Name,
			channelID: cb.Channel.ID, messageTS: cb.Container.MessageTs,
		}
		if p.userName == "" {
			p.userName = cb.User.Name
		}
		if p.channelID == "" {
			p.channelID = cb.Container.ChannelID
		}
		if p.messageTS == "" {
			p.messageTS = cb.Message.Timestamp
		}
		if p.actionTS == "" {
			p.actionTS = cb.ActionTs
		}
		out = append(out, p)
	}
	return out
}

// handle applies every paged press of an interaction. It returns once
// each change is on disk; the message edits and any refusal follow in
// the background, so that Slack gets its answer within its three seconds.
func (a *slackActions) handle(ctx context.Context, cb *slack.InteractionCallback) {
	for _, p := range pressesOf(cb) {
		res := a.apply(ctx, p)
		if res.outcome == actApplied {
			a.n.waitGossip(ctx)
		}
		label := p.action
		if actionVerb(label) == "" {
			label = "unknown" // the label's values stay the buttons paged makes
		}
		a.counter.WithLabelValues(label, res.outcome).Inc()
		a.logger.Info("slack action", "action", p.action, "outcome", res.outcome,
			"user", p.userID, "user_name", p.userName, "channel", p.channelID, "message_ts", p.messageTS,
			"receiver", res.ref.Receiver, "group", res.ref.GroupKey)
		if res.outcome == actApplied {
			a.recordAction(ctx, p, res)
		}
		if res.ephemeral == "" && !res.edit {
			continue
		}
		go a.follow(p, res)
	}
}

// follow edits the message and tells the user what they need to know.
func (a *slackActions) follow(p press, res actionResult) {
	ctx, cancel := context.WithTimeout(a.n.baseCtx(), 30*time.Second)
	defer cancel()
	if res.edit {
		if err := a.editMessage(ctx, res.ref, p.channelID, p.messageTS); err != nil {
			a.logger.Warn("slack message not edited after an action; the next notification edits it", "action", p.action, "err", err)
		}
	}
	if res.ephemeral != "" && res.conf != nil {
		api, err := botAPI(res.conf, a.n.opts.Transport)
		if err == nil {
			_, err = api.PostEphemeralContext(ctx, p.channelID, p.userID, slack.MsgOptionText(res.ephemeral, false))
		}
		if err != nil {
			a.logger.Warn("slack ephemeral reply failed", "action", p.action, "user", p.userID, "err", err)
		}
	}
}

// apply checks and applies one press.
func (a *slackActions) apply(ctx context.Context, p press) actionResult {
	ref, err := decodeRef(p.value)
	if err != nil {
		return actionResult{outcome: actInvalid}
	}
	res := actionResult{ref: ref}
	conf, inter := a.n.slackConfig(ref.Receiver, ref.Idx)
	if conf == nil || inter == nil {
		res.outcome = actInvalid
		return res
	}
	res.conf = conf
	verb := actionVerb(p.action)
	if verb == "" {
		res.outcome, res.ephemeral = actInvalid, "paged does not know this button ("+p.action+"); the message may be from a newer version."
		return res
	}
	if ok, why := a.allowed(ctx, conf, inter, p.userID); !ok {
		res.outcome = actRefused
		res.ephemeral = fmt.Sprintf("You are not allowed to %s this alert%s.", verb, why)
		return res
	}
	ts, ok := parseSlackTS(p.actionTS)
	if !ok {
		res.outcome = actInvalid
		return res
	}

	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.n.nflog
	st := loadActions(l, ref.Receiver, ref.Idx, ref.GroupKey)
	if last, ok := parseSlackTS(st.str(actLastTS)); ok && !ts.after(last) {
		// Slack delivered this press again (a retry, a reconnect), or
		// an older one arrived after a newer: what it asked is done.
		res.outcome = actDuplicate
		return res
	}
	now := time.Now()
	group := a.n.liveGroup(ctx, ref.Receiver, ref.GroupKey)
	firing := st.firing
	changed, msg := false, ""
	user := slackUserString(p.userName, p.userID)
	switch p.action {
	case ActionAck:
		switch {
		case st.acked():
			msg = fmt.Sprintf("Already acknowledged by <@%s>.", st.str(actAckUser))
		case group == nil || !groupFiring(group, now):
			msg = "This alert group is not firing: nothing to acknowledge."
		default:
			st.store.SetStr(actAckUser, p.userID)
			st.store.SetStr(actAckName, p.userName)
			st.store.SetInt(actAckAt, now.Unix())
			st.store.Delete(actAckEnd)
			st.store.Delete(actAckEndBy)
			firing = firingHashes(group.Alerts, now)
			changed = true
		}
	case ActionUnack:
		if !st.acked() {
			msg = "This alert group is not acknowledged."
			break
		}
		st.store.SetStr(actAckEnd, ackEndUnack)
		st.store.SetStr(actAckEndBy, p.userID)
		changed = true
	case ActionSilence1h, ActionSilence4h, ActionSilence24h, ActionSilenceUntilResolved:
		if sil := a.n.silenceByID(ctx, st.str(actSilenceID)); sil != nil && silenceActive(sil, now) {
			msg = fmt.Sprintf("Already silenced by <@%s>.", st.str(actSilenceUser))
			break
		}
		if group == nil {
			msg = "This alert group is no longer held by paged (resolved, or paged restarted moments ago): nothing to silence."
			break
		}
		sil, err := groupSilence(group, p, user, now)
		if err != nil {
			msg = "paged cannot silence this group from Slack: " + err.Error() + ". Use the Silence link of one of its alerts."
			break
		}
		if err := a.n.silences.Set(ctx, sil); err != nil {
			res.outcome, res.ephemeral = actFailed, "The silence could not be created: "+err.Error()
			return res
		}
		if err := a.n.silSt.synced(); err != nil {
			// Set waited for the write and logged it; it is kept in
			// memory and written again, as any silence.
			a.logger.Warn("silence from Slack kept in memory only; the write is retried", "err", err)
		}
		a.n.recordSilence(ctx, sil.Id, history.OutcomeCreated)
		st.store.SetStr(actSilenceID, sil.Id)
		st.store.SetStr(actSilenceUser, p.userID)
		st.store.SetStr(actSilenceName, p.userName)
		st.store.Delete(actSilenceEnd)
		changed = true
	case ActionUnsilence:
		id := st.str(actSilenceID)
		sil := a.n.silenceByID(ctx, id)
		if sil == nil || !silenceActive(sil, now) {
			msg = "This alert group has no silence from Slack to lift."
			break
		}
		if err := a.n.silences.Expire(ctx, id); err != nil && !errors.Is(err, silence.ErrNotFound) {
			res.outcome, res.ephemeral = actFailed, "The silence could not be lifted: "+err.Error()
			return res
		}
		a.n.recordSilence(ctx, id, history.OutcomeExpired)
		st.store.SetStr(actSilenceEnd, p.userID)
		changed = true
	}
	// Every press is recorded, changed or not, so its redelivery is
	// recognised; the message is marked as not yet showing it.
	st.store.SetStr(actLastTS, p.actionTS)
	st.store.SetStr(actChannel, p.channelID)
	st.store.SetStr(actMessageTS, p.messageTS)
	if changed {
		st.store.SetInt(actPending, 1)
	}
	if err := a.writeActions(ref, st.store, firing); err != nil {
		res.outcome, res.ephemeral = actFailed, "paged could not record this on disk ("+err.Error()+"); nothing changed. Try again."
		if changed && p.action != ActionAck && p.action != ActionUnack {
			// The silence change itself is on disk already and holds.
			res.ephemeral = "paged applied this but could not record it beside the message (" + err.Error() + ")."
			res.edit = true
		}
		return res
	}
	if !changed {
		res.outcome, res.ephemeral = actUnchanged, msg
		return res
	}
	res.outcome, res.edit = actApplied, true
	return res
}

// maxGossipWait bounds waitGossip, so that Slack hears back within its
// three seconds whatever the cluster's gossip_interval.
const maxGossipWait = time.Second

// waitGossip waits, in a cluster, until a change just written has gone
// out to the peers: two gossip intervals, in each of which memberlist
// sends the changes queued to up to three peers (every peer of a pair),
// each change several times. Answering Slack only then, a member killed
// right after its answer leaves the action with its peer: the
// acknowledgement holds there, the silence is in its API, and its
// notifier edits the message. Without a peer it returns at once.
func (n *Notifier) waitGossip(ctx context.Context) {
	if n.peer == nil || n.peer.ClusterSize() < 2 {
		return
	}
	t := time.NewTimer(min(2*n.opts.Cluster.GossipInterval, maxGossipWait))
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// writeActions writes a group's actions entry and waits until it is on
// disk (and, in a cluster, hands it to the peer's gossip).
func (a *slackActions) writeActions(ref actionRef, store *nflog.Store, firing []uint64) error {
	if err := a.n.nflog.Log(actionsReceiver(ref.Receiver, ref.Idx), ref.GroupKey, firing, nil, nil, store, 0); err != nil {
		return err
	}
	return a.n.nflogSt.synced()
}

// actionVerb is how a refusal names the action.
func actionVerb(action string) string {
	switch action {
	case ActionAck:
		return "acknowledge"
	case ActionUnack:
		return "unacknowledge"
	case ActionSilence1h, ActionSilence4h, ActionSilence24h, ActionSilenceUntilResolved:
		return "silence"
	case ActionUnsilence:
		return "unsilence"
	}
	return ""
}

func slackUserString(name, id string) string {
	if name == "" {
		return id
	}
	return fmt.Sprintf("%s (%s)", name, id)
}

func groupFiring(g *dispatch.AlertGroup, now time.Time) bool {
	for _, a := range g.Alerts {
		if !a.ResolvedAt(now) {
			return true
		}
	}
	return false
}

// groupSilence is the silence a button creates: on the group's labels
// (the route's group_by values), or, for a group that groups by nothing,
// on the labels all its alerts share.
func groupSilence(g *dispatch.AlertGroup, p press, user string, now time.Time) (*silencepb.Silence, error) {
	labels := g.Labels
	if len(labels) == 0 {
		labels = commonLabels(g.Alerts)
	}
	if len(labels) == 0 {
		return nil, errors.New("its alerts share no label to match on")
	}
	names := make([]string, 0, len(labels))
	for n := range labels {
		names = append(names, string(n))
	}
	sort.Strings(names)
	var ms []*silencepb.Matcher
	for _, n := range names {
		ms = append(ms, &silencepb.Matcher{Type: silencepb.Matcher_EQUAL, Name: n, Pattern: string(labels[model.LabelName(n)])})
	}
	sil := &silencepb.Silence{
		MatcherSets: []*silencepb.MatcherSet{{Matchers: ms}},
		StartsAt:    timestamppb.New(now),
		CreatedBy:   user,
		Annotations: map[string]string{silenceAnnotationFrom: "slack", silenceAnnotationGroup: g.GroupKey, silenceAnnotationReceiver: g.Receiver},
	}
	if d, ok := silenceDurations[p.action]; ok {
		sil.EndsAt = timestamppb.New(now.Add(d))
		sil.Comment = fmt.Sprintf("Silenced from Slack by %s for %s (message %s in %s).", user, shortDuration(d), p.messageTS, p.channelID)
	} else {
		sil.EndsAt = timestamppb.New(now.Add(untilResolvedMax))
		sil.Annotations[silenceAnnotationUntilResol] = "true"
		sil.Comment = fmt.Sprintf("Silenced from Slack by %s until the group resolves (at most %s; message %s in %s).", user, shortDuration(untilResolvedMax), p.messageTS, p.channelID)
	}
	// Alertmanager 0.35 keeps the first set in the legacy field too, for
	// peers and tools that read it.
	sil.Matchers = ms
	return sil, nil
}

func commonLabels(alerts []*alert.Alert) model.LabelSet {
	if len(alerts) == 0 {
		return nil
	}
	out := alerts[0].Labels.Clone()
	for _, a := range alerts[1:] {
		for n, v := range out {
			if a.Labels[n] != v {
				delete(out, n)
			}
		}
	}
	return out
}

func shortDuration(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}

func silenceActive(s *silencepb.Silence, now time.Time) bool {
	return s.EndsAt.AsTime().After(now) && !s.StartsAt.AsTime().After(now)
}

// silenceByID returns a silence, or nil.
func (n *Notifier) silenceByID(ctx context.Context, id string) *silencepb.Silence {
	if id == "" {
		return nil
	}
	s, err := n.silences.QueryOne(ctx, silence.QIDs(id))
	if err != nil {
		return nil
	}
	return s
}

// liveGroup returns the dispatcher's group for a receiver and group key,
// or nil.
func (n *Notifier) liveGroup(ctx context.Context, receiver, gkey string) *dispatch.AlertGroup {
	groups, _, err := n.groups(ctx, func(r *dispatch.Route) bool { return r.RouteOpts.Receiver == receiver },
		func(a *alert.Alert, now time.Time) (alert.AlertStatus, bool) { return alert.AlertStatus{}, true })
	if err != nil {
		return nil
	}
	for _, g := range groups {
		if g.GroupKey == gkey && g.Receiver == receiver {
			return g
		}
	}
	return nil
}

// allowed reports whether a user may act on a destination's messages:
// every list configured (the block's and the destination's) must admit
// them; with none, anyone who sees the message may.
func (a *slackActions) allowed(ctx context.Context, conf *SlackConfig, inter *SlackInteractivity, user string) (bool, string) {
	for _, lists := range [][2][]string{{inter.AllowedUsers, inter.AllowedUserGroups}, {conf.AllowedUsers, conf.AllowedUserGroups}} {
		users, groups := lists[0], lists[1]
		if len(users) == 0 && len(groups) == 0 {
			continue
		}
		if slices.Contains(users, user) {
			continue
		}
		member := false
		for _, g := range groups {
			in, err := a.groups.member(ctx, conf, a.n.opts.Transport, g, user)
			if err != nil {
				a.logger.Warn("slack user group not read; its members are refused until it is", "usergroup", g, "err", err)
				continue
			}
			if in {
				member = true
				break
			}
		}
		if !member {
			return false, " (only the users and user groups in allowed_users and allowed_user_groups may)"
		}
	}
	return true, ""
}

// userGroupCache holds user-group memberships for a minute.
type userGroupCache struct {
	mu sync.Mutex
	m  map[string]userGroupEntry
}

type userGroupEntry struct {
	users []string
	at    time.Time
}

func (c *userGroupCache) member(ctx context.Context, conf *SlackConfig, rt http.RoundTripper, group, user string) (bool, error) {
	c.mu.Lock()
	e, ok := c.m[group]
	c.mu.Unlock()
	if !ok || time.Since(e.at) > time.Minute {
		api, err := botAPI(conf, rt)
		if err != nil {
			return false, err
		}
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		users, err := api.GetUserGroupMembersContext(ctx, group)
		if err != nil {
			return false, err
		}
		e = userGroupEntry{users: users, at: time.Now()}
		c.mu.Lock()
		if c.m == nil {
			c.m = map[string]userGroupEntry{}
		}
		c.m[group] = e
		c.mu.Unlock()
	}
	return slices.Contains(e.users, user), nil
}

// slackConfig returns the slack_configs entry of a receiver and the
// interactivity block, from the configuration in effect; nil when either
// is gone or the entry has no bot token.
func (n *Notifier) slackConfig(receiver string, idx int) (*SlackConfig, *SlackInteractivity) {
	n.mu.Lock()
	c := n.conf
	n.mu.Unlock()
	if c == nil || c.SlackInteractivity == nil {
		return nil, nil
	}
	r, ok := c.Receiver(receiver)
	if !ok || idx < 0 || idx >= len(r.SlackConfigs) || !r.SlackConfigs[idx].BotMode() {
		return nil, nil
	}
	return r.SlackConfigs[idx], c.SlackInteractivity
}

// baseCtx is the notifier's run context, or a background one before Run.
func (n *Notifier) baseCtx() context.Context {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.runCtx != nil {
		return n.runCtx
	}
	return context.Background()
}

// botAPI is a Web API client with the destination's bot token.
func botAPI(c *SlackConfig, rt http.RoundTripper) (*slack.Client, error) {
	token, err := secretOrFile(string(c.AppToken), c.AppTokenFile)
	if err != nil {
		return nil, fmt.Errorf("app_token_file: %w", err)
	}
	client, err := httpClient(c.HTTPConfig, "slack", rt)
	if err != nil {
		return nil, err
	}
	appURL := c.AppURL
	if appURL == "" {
		appURL = DefaultSlackAppURL
	}
	return slack.New(token, slack.OptionAPIURL(appURL), slack.OptionHTTPClient(slackClient(client, c))), nil
}
