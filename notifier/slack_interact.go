package notifier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// Slack delivers the presses of the message buttons in one of two ways
// (slack_interactivity.mode):
//
//   - Socket Mode: paged opens a WebSocket to Slack with the app-level
//     token (apps.connections.open) and receives them over it. Nothing
//     listens for Slack: it works behind NAT and on a laptop.
//   - HTTP: Slack posts them, signed with the app's signing secret, to
//     POST /slack/interactions on paged's listener.
//
// Either way a press is applied (and on disk) before Slack hears back:
// a Socket Mode envelope is acknowledged, an HTTP request answered 200,
// only then. A press Slack delivers again is recognised by its
// action_ts (slack_actions.go).

// interactivity runs the Socket Mode connection of the configuration in
// effect, and restarts it when a reload changes the block.
type interactivity struct {
	acts *slackActions

	mu     sync.Mutex
	conf   *SlackInteractivity // the block the connection runs with
	cancel context.CancelFunc
	done   chan struct{}

	// HTTP mode: the signatures seen in the last five minutes, so that
	// a request replayed within Slack's timestamp window is refused too.
	seenMu sync.Mutex
	seen   map[string]time.Time
}

// apply starts, restarts or stops the Socket Mode connection for c.
func (in *interactivity) apply(ctx context.Context, c *SlackInteractivity) {
	in.mu.Lock()
	defer in.mu.Unlock()
	same := in.conf != nil && c != nil && sameInteractivity(in.conf, c)
	if same && in.cancel != nil {
		return
	}
	in.stopLocked()
	in.conf = c
	if c == nil || c.ModeOrDefault() != InteractSocket || ctx == nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	in.cancel, in.done = cancel, done
	go func() {
		defer close(done)
		in.runSocket(ctx, c)
	}()
}

func (in *interactivity) stop() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.stopLocked()
}

func (in *interactivity) stopLocked() {
	if in.cancel != nil {
		in.cancel()
		<-in.done
		in.cancel, in.done = nil, nil
	}
}

func sameInteractivity(a, b *SlackInteractivity) bool {
	return a.ModeOrDefault() == b.ModeOrDefault() && a.AppLevelToken == b.AppLevelToken &&
		a.AppLevelTokenFile == b.AppLevelTokenFile && a.AppURL == b.AppURL
}

// runSocket keeps a Socket Mode connection open until ctx ends.
func (in *interactivity) runSocket(ctx context.Context, c *SlackInteractivity) {
	logger := in.acts.logger.With("mode", InteractSocket)
	backoff := time.Second
	for ctx.Err() == nil {
		err := in.socketOnce(ctx, c)
		if ctx.Err() != nil {
			return
		}
		logger.Warn("slack socket mode connection failed; retrying", "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}

// socketOnce runs one Socket Mode client until it fails or ctx ends. The
// client reconnects by itself when Slack asks it to (a refresh) or a
// connection drops; it returns when it cannot open one.
func (in *interactivity) socketOnce(ctx context.Context, c *SlackInteractivity) error {
	token, err := secretOrFile(string(c.AppLevelToken), c.AppLevelTokenFile)
	if err != nil {
		return fmt.Errorf("app_level_token_file: %w", err)
	}
	appURL := c.AppURL
	if appURL == "" {
		appURL = DefaultSlackAppURL
	}
	opts := []slack.Option{slack.OptionAppLevelToken(token), slack.OptionAPIURL(appURL)}
	if rt := in.acts.n.opts.Transport; rt != nil {
		opts = append(opts, slack.OptionHTTPClient(&http.Client{Transport: rt}))
	}
	client := socketmode.New(slack.New("", opts...))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	logger := in.acts.logger.With("mode", InteractSocket)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case evt := <-client.Events:
				switch evt.Type {
				case socketmode.EventTypeConnected:
					in.acts.socketUp.Set(1)
					logger.Info("slack socket mode connected")
				case socketmode.EventTypeConnectionError, socketmode.EventTypeDisconnect:
					in.acts.socketUp.Set(0)
				case socketmode.EventTypeInvalidAuth:
					logger.Error("slack refused the app-level token (invalid_auth): check slack_interactivity.app_level_token")
				case socketmode.EventTypeInteractive:
					cb, ok := evt.Data.(slack.InteractionCallback)
					if ok {
						in.acts.handle(ctx, &cb)
					}
					if evt.Request != nil {
						// After the press is applied and on disk: a crash
						// before this leaves the envelope for Slack to
						// deliver again.
						if err := client.AckCtx(ctx, evt.Request.EnvelopeID, nil); err != nil {
							logger.Warn("slack envelope not acknowledged", "envelope_id", evt.Request.EnvelopeID, "err", err)
						}
					}
				default:
					if evt.Request != nil && evt.Request.EnvelopeID != "" {
						_ = client.AckCtx(ctx, evt.Request.EnvelopeID, nil) // events paged does not use
					}
				}
			}
		}
	})
	err = client.RunContext(ctx)
	cancel()
	wg.Wait()
	in.acts.socketUp.Set(0)
	return err
}

// maxInteractionBody bounds a Slack interaction request; Slack's are a
// few kilobytes (the message's blocks included).
const maxInteractionBody = 1 << 20

// SlackInteractionsHandler serves POST /slack/interactions: the presses
// Slack delivers in HTTP mode, each signed with the app's signing secret.
// An unsigned, forged, stale (over five minutes) or replayed request gets
// 401 and changes nothing.
func (n *Notifier) SlackInteractionsHandler() http.Handler {
	return http.HandlerFunc(n.inter.serveHTTP)
}

func (in *interactivity) serveHTTP(w http.ResponseWriter, r *http.Request) {
	n := in.acts.n
	n.mu.Lock()
	c := n.conf
	n.mu.Unlock()
	if c == nil || c.SlackInteractivity == nil || c.SlackInteractivity.ModeOrDefault() != InteractHTTP {
		http.Error(w, "slack_interactivity is not configured with mode: http", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	si := c.SlackInteractivity
	secret, err := secretOrFile(string(si.SigningSecret), si.SigningSecretFile)
	if err != nil || secret == "" {
		in.acts.logger.Error("slack signing secret unreadable; every interaction is refused", "err", err)
		http.Error(w, "signing secret unavailable", http.StatusServiceUnavailable)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxInteractionBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if reason := in.verify(r.Header, body, secret); reason != "" {
		in.acts.counter.WithLabelValues("unknown", "unauthorized").Inc()
		in.acts.logger.Warn("slack interaction refused", "reason", reason, "remote", r.RemoteAddr)
		http.Error(w, reason, http.StatusUnauthorized)
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("payload") == "" {
		http.Error(w, "the body is not a Slack interaction (form field payload)", http.StatusBadRequest)
		return
	}
	var cb slack.InteractionCallback
	if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
		http.Error(w, "payload: "+err.Error(), http.StatusBadRequest)
		return
	}
	in.acts.handle(r.Context(), &cb)
	w.WriteHeader(http.StatusOK)
}

// verify checks a request's signature and freshness; "" when it holds,
// else why not.
func (in *interactivity) verify(h http.Header, body []byte, secret string) string {
	sv, err := slack.NewSecretsVerifier(h, secret)
	switch {
	case errors.Is(err, slack.ErrExpiredTimestamp):
		return "request timestamp is more than five minutes away from now"
	case errors.Is(err, slack.ErrMissingHeaders):
		return "X-Slack-Signature and X-Slack-Request-Timestamp are required"
	case err != nil:
		return "bad signature headers"
	}
	if _, err := sv.Write(body); err != nil {
		return "bad signature"
	}
	if err := sv.Ensure(); err != nil {
		return "signature does not match"
	}
	sig := h.Get("X-Slack-Signature")
	now := time.Now()
	in.seenMu.Lock()
	defer in.seenMu.Unlock()
	if in.seen == nil {
		in.seen = map[string]time.Time{}
	}
	if at, ok := in.seen[sig]; ok && now.Sub(at) < 6*time.Minute {
		return "request replayed"
	}
	if len(in.seen) > 10000 {
		for k, at := range in.seen {
			if now.Sub(at) >= 6*time.Minute {
				delete(in.seen, k)
			}
		}
	}
	in.seen[sig] = now
	return ""
}
