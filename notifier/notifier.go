// Package notifier routes alerts to Slack, webhooks and external
// Alertmanagers. It embeds Alertmanager's own parts, as Grafana's alerting
// does: provider/mem holds the alerts, dispatch groups them along the
// route tree, inhibit and silence mute them, nflog deduplicates and keeps
// per-group state (the Slack message a group edits), and the notify
// pipeline's stages do the rest. paged adds the integrations.
package notifier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/alertmanager/alert"
	apiv2 "github.com/prometheus/alertmanager/api/v2"
	"github.com/prometheus/alertmanager/cluster"
	"github.com/prometheus/alertmanager/dispatch"
	"github.com/prometheus/alertmanager/eventrecorder"
	"github.com/prometheus/alertmanager/featurecontrol"
	"github.com/prometheus/alertmanager/inhibit"
	"github.com/prometheus/alertmanager/labelset"
	"github.com/prometheus/alertmanager/nflog"
	"github.com/prometheus/alertmanager/notify"
	"github.com/prometheus/alertmanager/provider/mem"
	"github.com/prometheus/alertmanager/silence"
	"github.com/prometheus/alertmanager/template"
	"github.com/prometheus/alertmanager/timeinterval"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/history"
	"github.com/pagedhq/paged/internal/durable"
	"github.com/pagedhq/paged/rules"
)

// Options configures a Notifier. Zero values get the documented defaults.
type Options struct {
	Config *Config
	// StoragePath holds the notifier's state: "nflog" (the notification
	// log) and "silences" in Alertmanager's snapshot format, and
	// "slack-messages" (the Slack message journal), each with segments
	// "<file>.wal.NNNNNNNN" of the changes since the snapshot. Every change
	// is on disk before paged acts on it. Empty keeps state in memory only.
	StoragePath string
	// Reporter reports state files that are corrupt (moved aside) or
	// cannot be written. Nil: such problems are logged, not counted.
	Reporter *durable.Reporter
	// History records every notification with its outcome, silences
	// created and expired, and acknowledgements. Nil records nothing.
	History *history.Store
	// ExternalURL is paged's public base URL: silence links and the
	// default runbook base ({ExternalURL}/runbooks/).
	ExternalURL string
	// RunbookBaseURL resolves relative runbook_url annotations.
	RunbookBaseURL string
	// AuthToken, when set, is the bearer token required by the API's
	// mutating requests.
	AuthToken  string
	Logger     *slog.Logger
	Registerer prometheus.Registerer

	// Retention of silences and notification log entries (default 120h).
	Retention time.Duration
	// MaintenanceInterval is how often expired silences and notification
	// log entries are garbage-collected (default 15m). Writing the state
	// does not wait for it: every change is appended as it happens.
	MaintenanceInterval time.Duration
	// ResolveTimeout is the end given to alerts posted to the API without
	// one (default 5m, Alertmanager's).
	ResolveTimeout time.Duration
	// ForwardQueueCapacity bounds the queue of each external Alertmanager
	// (default 10000); when full, the oldest alerts are dropped and counted.
	ForwardQueueCapacity int
	// Transport, when set, carries every outgoing request instead of the
	// clients built from http_config (tests: an in-process Slack or sink).
	Transport http.RoundTripper
	// Cluster, when set, makes this notifier a peer of an HA cluster
	// (see ClusterOptions). Nil: a single instance. The peer registers
	// Alertmanager's alertmanager_cluster_* metrics on Registerer, which
	// therefore cannot serve two peers.
	Cluster *ClusterOptions

	// wrapState, in tests, wraps each state file's log (to make writes fail).
	wrapState func(name string, l stateLog) stateLog
	// actionsInterval, in tests, replaces actionsInterval.
	actionsInterval time.Duration
}

// Notifier is paged's embedded Alertmanager.
type Notifier struct {
	opts     Options
	logger   *slog.Logger
	external *url.URL
	metrics  *metrics
	// linkHistory: the messages link to the alerts' timelines (paged
	// keeps a history).
	linkHistory bool

	alerts   *mem.Alerts
	silences *silence.Silences
	silencer *silence.Silencer
	nflog    *nflog.Log
	reporter *durable.Reporter
	nflogSt  *gossipState  // the notification log's files
	silSt    *gossipState  // the silences' files
	journal  *slackJournal // the Slack message journal
	logs     []stateLog    // the state files open, closed when Run returns
	api      *apiv2.API
	pipeline pipeline
	flushers *stackPool // the goroutines the pipeline runs on (see stackPool)
	idle     *idleCollector
	dmetrics *dispatch.DispatcherMetrics
	stale    *staleSet
	peer     *cluster.Peer // nil without Options.Cluster

	// HeldAlerts' cache: each held alert's labels and route, for the
	// configuration (and its routing tree) in heldConf.
	heldMu    sync.Mutex
	heldConf  *Config
	heldRoute *dispatch.Route
	heldCache map[model.Fingerprint]*heldStatic

	acts   *slackActions  // applies the Slack buttons' presses
	charts *charts        // draws the charts in the messages' threads
	inter  *interactivity // receives them (Socket Mode, HTTP)

	mu      sync.Mutex
	conf    *Config
	slacks  map[slackKey]*slackNotifier
	running bool
	disp    *dispatch.Dispatcher
	inhib   *inhibit.Inhibitor
	fwd     *forwarders
	runCtx  context.Context
}

// New builds a Notifier and loads its state from StoragePath. Call Run to
// start delivering.
func New(opts Options) (*Notifier, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	opts.Logger = slog.New(deferAttrs(opts.Logger.Handler()))
	if opts.Registerer == nil {
		opts.Registerer = prometheus.NewRegistry()
	}
	if opts.Config == nil {
		opts.Config = &Config{}
	}
	if opts.Config.am == nil {
		if err := opts.Config.Validate(); err != nil {
			return nil, err
		}
	}
	if opts.Retention <= 0 {
		opts.Retention = 120 * time.Hour
	}
	if opts.MaintenanceInterval <= 0 {
		opts.MaintenanceInterval = 15 * time.Minute
	}
	if opts.ResolveTimeout <= 0 {
		opts.ResolveTimeout = 5 * time.Minute
	}
	if opts.ForwardQueueCapacity <= 0 {
		opts.ForwardQueueCapacity = 10000
	}
	ext := opts.ExternalURL
	if ext == "" {
		ext = "http://localhost:9095"
	}
	external, err := url.Parse(strings.TrimRight(ext, "/"))
	if err != nil {
		return nil, fmt.Errorf("external URL: %w", err)
	}
	if opts.Cluster != nil {
		c := *opts.Cluster
		if err := c.Validate(); err != nil {
			return nil, err
		}
		opts.Cluster = &c
	}
	if opts.StoragePath != "" {
		if err := durable.MakeStorageDir(opts.StoragePath); err != nil {
			return nil, err
		}
	}

	n := &Notifier{opts: opts, logger: opts.Logger, external: external, linkHistory: opts.History != nil, stale: newStaleSet(), reporter: opts.Reporter,
		flushers: newStackPool(30*time.Second, 4096)}
	if n.reporter == nil {
		n.reporter = durable.NewReporter(opts.StoragePath, n.logger, nil)
	}
	reg := opts.Registerer
	n.metrics = newMetrics(reg)
	n.idle = newIdleCollector(n.metrics.idleCollections.Inc)
	var rec eventrecorder.Recorder
	ff := featurecontrol.NoopFlags{}

	// The snapshots are loaded by the durable logs below, not by
	// Alertmanager: a damaged file keeps what it could read.
	n.nflog, err = nflog.New(nflog.Options{
		Retention: opts.Retention,
		Logger:    n.logger.With("component", "nflog"),
		Metrics:   reg,
	})
	if err != nil {
		return nil, fmt.Errorf("notification log: %w", err)
	}
	n.silences, err = silence.New(silence.Options{
		Retention:     opts.Retention,
		Logger:        n.logger.With("component", "silences"),
		Metrics:       reg,
		EventRecorder: rec,
	})
	if err != nil {
		return nil, fmt.Errorf("silences: %w", err)
	}
	fail := func(err error) (*Notifier, error) {
		if n.alerts != nil {
			n.alerts.Close()
		}
		if n.peer != nil {
			n.leaveCluster()
		}
		n.closeState()
		return nil, err
	}
	n.nflogSt = newNflogState(n.nflog, n.logger.With("component", "nflog"))
	n.silSt = newSilencesState(n.silences, n.logger.With("component", "silences"))
	for _, g := range []*gossipState{n.nflogSt, n.silSt} {
		if err := g.open(n); err != nil {
			return fail(err)
		}
	}
	if err := n.openSlackJournal(n.journalLogged); err != nil {
		return fail(err)
	}
	var nflPeer, silPeer func([]byte)
	if opts.Cluster != nil {
		// The peer binds its port now, so a port in use fails New. Run
		// joins the other peers and leaves the cluster when it returns.
		n.peer, err = newPeer(opts.Cluster, n.logger.With("component", "cluster"), reg)
		if err != nil {
			return fail(err)
		}
		nflPeer = n.peer.AddState("nfl", gossiped{n.nflogSt}, reg).Broadcast
		silPeer = n.peer.AddState("sil", gossiped{n.silSt}, reg).Broadcast
	}
	n.nflogSt.start(nflPeer)
	n.silSt.start(silPeer)
	n.silencer = silence.NewSilencer(n.silences, n.logger, rec)
	n.alerts, err = mem.NewAlerts(context.Background(), 30*time.Minute, 0, n.silencer, n.logger, rec, reg, ff)
	if err != nil {
		return fail(fmt.Errorf("alert store: %w", err))
	}
	tuneDateTimes()
	n.api, err = apiv2.NewAPI(receivedAlerts{n.alerts, n.idle}, n.groups, n.silences, n.apiPeer(), n.logger.With("component", "api"), reg)
	if err != nil {
		return fail(fmt.Errorf("api: %w", err))
	}
	n.pipeline = pipeline{metrics: notify.NewMetrics(reg, ff), ff: ff, recorder: rec, pool: n.flushers,
		history: opts.History, logger: n.logger.With("component", "history")}
	n.dmetrics = dispatch.NewDispatcherMetrics(false, reg, ff)
	n.acts = newSlackActions(n, reg)
	n.charts = newCharts(reg)
	n.inter = &interactivity{acts: n.acts}
	n.conf = opts.Config
	// Forwarding queues exist before Run, so alerts notified early are
	// kept (bounded) and sent once Run starts.
	b, err := n.build(opts.Config)
	if err != nil {
		return fail(err)
	}
	n.fwd, n.slacks = b.fwd, b.slacks
	n.updateAPI(opts.Config)
	return n, nil
}

// journalLogged is when the notification log last logged the journal's
// group.
func (n *Notifier) journalLogged(k journalKey) (time.Time, bool) {
	return lastLogged(n.nflog, k.Receiver, "slack", k.Integration, k.Group)
}

func (n *Notifier) statePath(name string) string {
	if n.opts.StoragePath == "" {
		return ""
	}
	return filepath.Join(n.opts.StoragePath, name)
}

// Notify hands alerts to the notifier; it matches rules.NotifyFunc.
// Alerts are stored and routed asynchronously.
func (n *Notifier) Notify(ctx context.Context, in []*rules.Alert) {
	now := time.Now()
	out := make([]*alert.Alert, 0, len(in))
	for _, a := range in {
		ma := model.Alert{
			Labels:       toLabelSet(a.Labels),
			Annotations:  toLabelSet(a.Annotations),
			StartsAt:     a.StartsAt,
			EndsAt:       a.EndsAt,
			GeneratorURL: a.GeneratorURL,
		}
		if ma.StartsAt.IsZero() {
			ma.StartsAt = now
		}
		timeout := false
		if ma.EndsAt.IsZero() {
			timeout = true
			ma.EndsAt = now.Add(n.opts.ResolveTimeout)
		}
		if err := alert.Validate(&ma); err != nil {
			n.metrics.dropped.WithLabelValues("invalid").Inc()
			n.logger.Warn("invalid alert dropped", "alert", ma.Labels.String(), "err", err)
			continue
		}
		n.stale.set(ma.Labels.Fingerprint(), a.Stale && !a.Resolved(now))
		out = append(out, alert.New(ma, now, timeout))
	}
	if len(out) == 0 {
		return
	}
	if err := (receivedAlerts{n.alerts, n.idle}).Put(ctx, out...); err != nil {
		n.metrics.dropped.WithLabelValues("store").Add(float64(len(out)))
		n.logger.Error("storing alerts failed", "err", err)
	}
	n.mu.Lock()
	fwd := n.fwd
	n.mu.Unlock()
	if fwd != nil {
		fwd.enqueue(in)
	}
}

func toLabelSet(ls labels.Labels) model.LabelSet {
	m := make(model.LabelSet, ls.Len())
	ls.Range(func(l labels.Label) {
		if l.Value != "" {
			m[model.LabelName(l.Name)] = model.LabelValue(l.Value)
		}
	})
	return m
}

// Run starts routing and delivery and blocks until ctx ends; then it stops
// the dispatcher, closes the state files (every change is already in
// them) and returns. With a cluster, Run first joins the peers
// (without waiting for them) and leaves the cluster before returning.
func (n *Notifier) Run(ctx context.Context) error {
	n.mu.Lock()
	if n.running {
		n.mu.Unlock()
		return errors.New("notifier: already running")
	}
	n.running = true
	n.runCtx = ctx
	conf := n.conf
	n.mu.Unlock()

	waitSettle := func() {}
	if n.peer != nil {
		waitSettle = n.joinCluster(ctx)
	}
	stopc := make(chan struct{})
	var wg sync.WaitGroup
	// Alertmanager's maintenance only garbage-collects: the durable logs
	// write the state as it changes and compact it themselves.
	wg.Go(func() {
		n.nflog.Maintenance(n.opts.MaintenanceInterval, "", stopc, func() (int64, error) {
			_, err := n.nflog.GC()
			n.journal.gc(time.Now(), n.opts.Retention)
			return n.stateSize("nflog"), err
		})
	})
	wg.Go(func() {
		n.silences.Maintenance(n.opts.MaintenanceInterval, "", stopc, func() (int64, error) {
			_, err := n.silences.GC()
			return n.stateSize("silences"), err
		})
	})

	err := n.start(conf)
	if err != nil {
		n.logger.Error("starting notifier failed", "err", err)
	} else {
		n.inter.apply(ctx, conf.SlackInteractivity)
		wg.Go(func() { n.acts.run(ctx) })
		<-ctx.Done()
	}
	n.inter.stop()

	n.mu.Lock()
	n.stopLocked()
	n.running = false
	n.mu.Unlock()
	n.flushers.close()
	n.idle.close()
	close(stopc)
	wg.Wait()
	if n.peer != nil {
		waitSettle()
		n.leaveCluster()
	}
	n.alerts.Close()
	n.closeState()
	return err
}

// ApplyConfig replaces the configuration. On error the running one is kept.
// Alerts, silences and the notification log carry over.
func (n *Notifier) ApplyConfig(c *Config) error {
	if c == nil {
		return errors.New("notifier: nil config")
	}
	if c.am == nil {
		if err := c.Validate(); err != nil {
			return err
		}
	}
	n.mu.Lock()
	running := n.running
	n.mu.Unlock()
	if !running {
		b, err := n.build(c)
		if err != nil {
			return err
		}
		n.mu.Lock()
		n.conf, n.slacks = c, b.slacks
		b.fwd.adopt(n.fwd)
		n.fwd = b.fwd
		n.mu.Unlock()
		n.updateAPI(c)
		return nil
	}
	if err := n.start(c); err != nil {
		return err
	}
	// Outside n.mu: a press being applied reads the configuration.
	n.inter.apply(n.baseCtx(), c.SlackInteractivity)
	return nil
}

// built is the config-scoped part of the notifier.
type built struct {
	routes     *dispatch.Route
	receivers  map[string][]notify.Integration
	intervener *timeinterval.Intervener
	tmpl       *template.Template
	fwd        *forwarders
	// staleEdits: the slack_configs, by receiver and index, that edit
	// their group's message on a datasource state change.
	staleEdits map[string]map[int]bool
	// slacks are the Slack integrations, by receiver and index, for
	// the edits that follow a button press.
	slacks map[slackKey]*slackNotifier
	// interactive: the slack_configs whose messages have action buttons.
	interactive map[string]map[int]bool
}

type slackKey struct {
	receiver string
	idx      int
}

// build makes everything that can fail, without touching the running parts.
func (n *Notifier) build(c *Config) (*built, error) {
	tmpl, err := newTemplate(c.Templates, n.links())
	if err != nil {
		return nil, err
	}
	b := &built{tmpl: tmpl, routes: dispatch.NewRoute(c.am.Route, nil), receivers: map[string][]notify.Integration{}, staleEdits: map[string]map[int]bool{}, slacks: map[slackKey]*slackNotifier{}, interactive: map[string]map[int]bool{}}
	active := map[string]bool{}
	b.routes.Walk(func(r *dispatch.Route) { active[r.RouteOpts.Receiver] = true })
	for name := range active {
		b.receivers[name] = nil
	}
	for _, r := range c.Receivers {
		if !active[r.Name] {
			continue
		}
		ints, err := n.integrations(r, tmpl, c.SlackInteractivity != nil, b.slacks)
		if err != nil {
			return nil, err
		}
		b.receivers[r.Name] = ints
		for i, sc := range r.SlackConfigs {
			if sc.BotMode() && boolOr(sc.UpdateMessage, true) {
				if b.staleEdits[r.Name] == nil {
					b.staleEdits[r.Name] = map[int]bool{}
				}
				b.staleEdits[r.Name][i] = true
			}
			if sc.BotMode() && c.SlackInteractivity != nil {
				if b.interactive[r.Name] == nil {
					b.interactive[r.Name] = map[int]bool{}
				}
				b.interactive[r.Name][i] = true
			}
		}
	}
	intervals := map[string][]timeinterval.TimeInterval{}
	for _, ti := range c.am.MuteTimeIntervals {
		intervals[ti.Name] = ti.TimeIntervals
	}
	for _, ti := range c.am.TimeIntervals {
		intervals[ti.Name] = ti.TimeIntervals
	}
	b.intervener = timeinterval.NewIntervener(intervals)
	if len(c.Alertmanagers) > 0 {
		b.fwd, err = newForwarders(c.Alertmanagers, n.opts.ForwardQueueCapacity, n.opts.Transport, n.logger.With("component", "forwarder"), n.metrics)
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// integrations builds the integrations of one receiver.
// interactive: the slack_interactivity block is set, and bot-token
// messages get the action buttons; slacks collects the Slack integrations.
func (n *Notifier) integrations(r Receiver, tmpl *template.Template, interactive bool, slacks map[slackKey]*slackNotifier) ([]notify.Integration, error) {
	var ints []notify.Integration
	for i, sc := range r.SlackConfigs {
		s, err := newSlack(sc, i, tmpl, n.links(), n.stale, n.journal, n.opts.Transport, n.logger.With("integration", "slack", "receiver", r.Name), n.metrics)
		if err != nil {
			return nil, fmt.Errorf("receiver %q slack_configs[%d]: %w", r.Name, i, err)
		}
		if interactive && sc.BotMode() {
			s.actions = n.acts
		}
		if sc.BotMode() {
			s.charts = n.charts
		}
		if slacks != nil {
			slacks[slackKey{r.Name, i}] = s
		}
		ints = append(ints, notify.NewIntegration(n.metrics.wrap(s, r.Name, "slack"), s, "slack", i, r.Name))
	}
	for i, wc := range r.WebhookConfigs {
		w, err := newWebhook(wc, tmpl, n.opts.Transport, n.logger.With("integration", "webhook", "receiver", r.Name))
		if err != nil {
			return nil, fmt.Errorf("receiver %q webhook_configs[%d]: %w", r.Name, i, err)
		}
		ints = append(ints, notify.NewIntegration(n.metrics.wrap(w, r.Name, "webhook"), w, "webhook", i, r.Name))
	}
	up, err := n.upstreamIntegrations(r, tmpl)
	if err != nil {
		return nil, err
	}
	return append(ints, up...), nil
}

func (n *Notifier) links() linkBuilder {
	return linkBuilder{external: n.external, runbookBase: n.opts.RunbookBaseURL, history: n.linkHistory}
}

// start builds c and swaps it in for the running dispatcher and inhibitor.
func (n *Notifier) start(c *Config) error {
	b, err := n.build(c)
	if err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.running {
		return errors.New("notifier: not running")
	}
	oldFwd := n.fwd
	// The new dispatcher routes every held alert again: no quiet for the
	// idle collector while it does.
	n.idle.received()
	defer n.idle.received()
	n.stopLocked()
	b.fwd.adopt(oldFwd)

	// Without inhibit rules there is no inhibitor: it would read every
	// alert to find none of them inhibiting, and the pipeline and the API
	// would ask it about every alert to hear that nothing inhibits it.
	// With time intervals it stays, for the pipeline (see pipeline).
	timed := len(c.am.TimeIntervals)+len(c.am.MuteTimeIntervals) > 0
	var inhib *inhibit.Inhibitor
	if len(c.am.InhibitRules) > 0 || timed {
		inhib = inhibit.NewInhibitor(n.alerts, c.am.InhibitRules, n.logger, eventrecorder.Recorder{})
	}
	nfl := durableNflog{log: n.nflog, state: n.nflogSt, logger: n.logger.With("component", "nflog")}
	var intervener *timeinterval.Intervener
	if timed {
		intervener = b.intervener
	}
	stages := n.pipeline.stages(b.receivers, n.clusterWait, inhib, n.silencer, intervener, nfl, n.notifyPeer(), staleEdits{stale: n.stale, slack: b.staleEdits, acts: n.acts, interactive: b.interactive})
	// A peer's flush waits its turn before sending; its deadline grows by
	// that wait, as in Alertmanager.
	timeout := func(d time.Duration) time.Duration { return max(d, notify.MinTimeout) + n.clusterWait() }
	disp := dispatch.NewDispatcher(n.alerts, b.routes, countFlushes{next: stages, m: n.metrics, pool: n.flushers, idle: n.idle}, b.intervener, timeout, 30*time.Second, nil,
		n.logger, eventrecorder.Recorder{}, n.dmetrics, b.tmpl)

	if inhib != nil {
		go inhib.Run()
		inhib.WaitForLoading()
	}
	go disp.Run(time.Now())
	disp.WaitForLoading()
	if b.fwd != nil {
		b.fwd.start(n.runCtx)
	}
	n.inhib, n.disp, n.fwd, n.conf, n.slacks = inhib, disp, b.fwd, c, b.slacks
	n.updateAPILocked(c)
	return nil
}

func (n *Notifier) stopLocked() {
	if n.inhib != nil {
		n.inhib.Stop()
		n.inhib = nil
	}
	if n.disp != nil {
		n.disp.Stop()
		n.disp = nil
	}
	if n.fwd != nil {
		n.fwd.stop()
		n.fwd = nil
	}
}

func (n *Notifier) updateAPI(c *Config) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.updateAPILocked(c)
}

func (n *Notifier) updateAPILocked(c *Config) {
	silencer := n.silencer
	inhib := n.inhib
	n.api.Update(c.am, func(ctx context.Context, ls labelset.LabelSet) {
		if inhib != nil {
			inhib.Mutes(ctx, ls)
		}
		silencer.Mutes(ctx, ls)
	})
}

// slackNotifierFor returns the Slack integration of a receiver's
// slack_configs entry in the configuration in effect, or nil.
func (n *Notifier) slackNotifierFor(receiver string, idx int) *slackNotifier {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.slacks[slackKey{receiver, idx}]
}

// groups serves the API's alert groups from the running dispatcher.
func (n *Notifier) groups(ctx context.Context, rf func(*dispatch.Route) bool, af dispatch.AlertFilter) (dispatch.AlertGroups, map[model.Fingerprint][]string, error) {
	n.mu.Lock()
	d := n.disp
	n.mu.Unlock()
	if d == nil {
		return dispatch.AlertGroups{}, map[model.Fingerprint][]string{}, nil
	}
	// Groups checks ctx only before it starts: stop matching (regular
	// expressions of a filter can be costly) once the request is over.
	filter := func(a *alert.Alert, now time.Time) (alert.AlertStatus, bool) {
		if ctx.Err() != nil {
			return alert.AlertStatus{}, false
		}
		return af(a, now)
	}
	groups, receivers, err := d.Groups(ctx, rf, filter)
	if err == nil {
		err = ctx.Err()
	}
	return groups, receivers, err
}

// staleSet remembers which alerts were last sent with Stale set.
type staleSet struct {
	mu sync.Mutex
	m  map[model.Fingerprint]bool
}

func newStaleSet() *staleSet { return &staleSet{m: map[model.Fingerprint]bool{}} }

func (s *staleSet) set(fp model.Fingerprint, stale bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stale {
		s.m[fp] = true
	} else {
		delete(s.m, fp)
	}
}

func (s *staleSet) get(fp model.Fingerprint) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[fp]
}
