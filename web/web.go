package web

import (
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/config"
)

// Engine is what the pages and the APIs read from the rule engine. The
// engine's other views (targets, built-in alerts, range queries, the
// embedded TSDB, the datasource's health, rule definitions, staleness)
// are optional interfaces, so that test engines need not implement them.
type Engine interface {
	// RuleGroups returns the loaded groups with their live state.
	RuleGroups() []*promrules.Group
	// Ready reports whether rules are loaded and the datasource answered,
	// and why not.
	Ready() (bool, string)
}

// Notifier is what the pages and /api/v2 read from and change in the
// notifier: its Alertmanager API v2 (alerts, silences, status).
type Notifier interface {
	APIHandler() http.Handler
}

// SlackInteractions is a Notifier that applies the presses of its Slack
// messages' buttons (slack_interactivity, mode http): web serves it at
// POST /slack/interactions. Slack's signature authenticates those
// requests, not web.auth_token.
type SlackInteractions interface {
	SlackInteractionsHandler() http.Handler
}

// slackInteractionsPath is where Slack posts the presses in HTTP mode.
const slackInteractionsPath = "/slack/interactions"

// Options is what the HTTP surface reads and changes.
type Options struct {
	// Config returns the configuration in effect; a reload changes it.
	// Required.
	Config func() *config.Config
	// Engine is the rule engine. Required.
	Engine Engine
	// Notifier is the notifier; nil without a notifier block.
	Notifier Notifier
	// Reload reloads the configuration, for POST /-/reload; a
	// *config.Error in its chain answers 400. Required.
	Reload func() error
	// Registry is served at /metrics; web registers its own metrics on
	// it. Required.
	Registry *prometheus.Registry
	// Runbooks, when set, is served at /runbooks/ instead of
	// web.runbooks_dir. Without either, paged serves the runbooks built
	// into the binary (BuiltinRunbooks).
	Runbooks fs.FS
	// WebConfigFile is the exporter-toolkit web configuration (TLS, basic
	// auth) Serve hands to the toolkit; "" serves plain HTTP.
	WebConfigFile string
	// History is the event history, for GET /api/v1/history, /history
	// and /report; nil when it is off or could not be opened (they then
	// answer 503). A *history.Store.
	History History
	// Logger receives web's logs; nil discards them.
	Logger *slog.Logger
}

// Handler is paged's HTTP surface: health, readiness and reload, the
// Prometheus-compatible rules, alerts, targets, status and query APIs,
// the notifier's /api/v2, /metrics, runbooks and the web UI.
type Handler struct {
	opts     Options
	logger   *slog.Logger
	metrics  *metrics
	router   func() http.Handler // built once, on first use
	notifier Notifier            // nil without a notifier block

	// inFlight holds the request bodies' share of
	// web.max_request_bytes_in_flight; regexps runs the API requests
	// that match regular expressions one at a time.
	inFlight bytesInFlight
	regexps  chan struct{}
	// reports builds one /report at a time.
	reports chan struct{}
	// webConfig is the web configuration file Serve hands to
	// exporter-toolkit; "" serves plain HTTP.
	webConfig string
}

// New builds the HTTP surface over opts.
func New(opts Options) (*Handler, error) {
	if opts.Config == nil || opts.Engine == nil || opts.Reload == nil || opts.Registry == nil {
		return nil, errors.New("web: Config, Engine, Reload and Registry are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{opts: opts, logger: opts.Logger, notifier: opts.Notifier, webConfig: opts.WebConfigFile, regexps: make(chan struct{}, 1), reports: make(chan struct{}, 1)}
	h.metrics = newMetrics(opts.Registry, func() float64 { return float64(h.inFlight.load()) })
	h.router = sync.OnceValue(h.routes)
	return h, nil
}

// Config returns the configuration in effect.
func (h *Handler) Config() *config.Config { return h.opts.Config() }

func (h *Handler) engine() Engine { return h.opts.Engine }

// ServeHTTP serves every route of paged's HTTP surface.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.router().ServeHTTP(w, r) }

func (h *Handler) routes() http.Handler {
	r := chi.NewRouter()
	r.Use(h.bodyDeadline)
	r.Use(h.requireToken)
	r.Use(h.limitRequests)
	r.Get("/-/healthy", h.handleHealthy)
	r.Head("/-/healthy", h.handleHealthy)
	r.Get("/-/ready", h.handleReady)
	r.Head("/-/ready", h.handleReady)
	r.Post("/-/reload", h.handleReload)
	r.Put("/-/reload", h.handleReload)
	r.Get("/api/v1/rules", h.handleRules)
	r.Get("/api/v1/alerts", h.handleAlerts)
	r.Get("/api/v1/status/config", h.handleStatusConfig)
	r.Get("/api/v1/targets", h.handleTargets)
	r.Get("/api/v1/history", h.handleHistory)
	r.Method(http.MethodGet, "/metrics", promhttp.HandlerFor(h.opts.Registry, promhttp.HandlerOpts{Registry: h.opts.Registry}))
	r.Get("/runbooks", http.RedirectHandler("/runbooks/", http.StatusMovedPermanently).ServeHTTP)
	r.Get("/runbooks/*", h.handleRunbook)
	h.mountUI(r) // web UI: / and /ui/app.js
	r.Get("/graph", h.handleGraph)
	r.Get("/history", h.handleHistoryPage)
	r.Get("/report", h.handleReportPage)
	r.Get("/status", h.handleStatus)
	h.mountPromAPI(r) // embedded mode: Prometheus's query API
	if h.notifier != nil {
		r.Mount("/api/v2", h.limitAPI(h.notifier.APIHandler()))
		if si, ok := h.notifier.(SlackInteractions); ok {
			r.Post(slackInteractionsPath, si.SlackInteractionsHandler().ServeHTTP)
		}
		r.Get("/api/v1/acknowledgements", h.handleAcknowledgements)
	}
	return r
}
