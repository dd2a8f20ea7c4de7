package notifier

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/nflog"
	"github.com/prometheus/alertmanager/notify"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
)

// RenderOptions are the parts of the daemon's settings that change what a
// receiver sends.
type RenderOptions struct {
	ExternalURL    string // paged's external URL; default http://localhost:9095
	RunbookBaseURL string
	// History: paged run keeps an event history (storage.history), so
	// that its messages link to the alerts' timelines.
	History bool
}

// RenderGroup is one alert group as the dispatcher hands it to a receiver.
type RenderGroup struct {
	Receiver    string
	GroupKey    string         // the dispatcher's "{route key}:{group labels}"
	GroupLabels model.LabelSet // the route's group_by labels of the group
	RouteLabels model.LabelSet // the route's labels, rendered
	Alerts      []*alert.Alert
	// At is the time of the flush: the template data's and the
	// integrations' notion of now.
	At time.Time
}

// Payload is the request one integration of a receiver would send.
type Payload struct {
	Integration string // "slack[0]", "webhook[1]"
	Body        []byte // normalised (NormalisePayload); a bot token is never in it
}

// RenderPayloads renders what every integration of g.Receiver would send
// for the group, through the integrations paged run builds, with the
// network replaced by a recorder: nothing is sent. A Slack incoming
// webhook's body is its Block Kit JSON; a Slack bot's chat.postMessage form
// is given as a JSON object of its fields without the token; a webhook's
// body is Alertmanager's version 4 message. Volatile fields are normalised
// (NormalisePayload).
func RenderPayloads(ctx context.Context, conf *Config, opts RenderOptions, g RenderGroup) ([]Payload, error) {
	if conf.am == nil {
		if err := conf.Validate(); err != nil {
			return nil, err
		}
	}
	r, ok := conf.Receiver(g.Receiver)
	if !ok {
		return nil, fmt.Errorf("receiver %q is not defined", g.Receiver)
	}
	ext := opts.ExternalURL
	if ext == "" {
		ext = "http://localhost:9095"
	}
	external, err := url.Parse(strings.TrimRight(ext, "/"))
	if err != nil {
		return nil, fmt.Errorf("external URL: %w", err)
	}
	tmpl, err := newTemplate(conf.Templates, linkBuilder{external: external, runbookBase: opts.RunbookBaseURL, history: opts.History})
	if err != nil {
		return nil, err
	}
	rec := &recorder{}
	n := &Notifier{
		opts:        Options{Transport: rec, RunbookBaseURL: opts.RunbookBaseURL},
		logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		external:    external,
		linkHistory: opts.History,
		metrics:     newMetrics(prometheus.NewRegistry()),
		stale:       newStaleSet(),
	}
	// With slack_interactivity, a bot's message carries the buttons, as
	// first posted (no press applied yet).
	n.acts = &slackActions{n: n, logger: n.logger}
	// Email speaks SMTP to its smarthost, which no recorder can stand in
	// for: RenderPayloads renders the HTTP integrations only.
	rr := *r
	rr.Upstream.EmailConfigs = nil
	ints, err := n.integrations(rr, tmpl, conf.SlackInteractivity != nil, nil)
	if err != nil {
		return nil, err
	}
	ctx = notify.WithReceiverName(ctx, g.Receiver)
	ctx = notify.WithGroupKey(ctx, g.GroupKey)
	ctx = notify.WithGroupLabels(ctx, g.GroupLabels)
	ctx = notify.WithRouteLabels(ctx, g.RouteLabels)
	ctx = notify.WithNotificationReason(ctx, notify.ReasonFirstNotification)
	ctx = notify.WithNow(ctx, g.At)
	var out []Payload
	counts := map[string]int{}
	for _, integ := range ints {
		name := fmt.Sprintf("%s[%d]", integ.Name(), counts[integ.Name()])
		counts[integ.Name()]++
		rec.reset()
		v := integ.Notify(notify.WithNflogStore(ctx, nflog.NewStore(nil)), g.Alerts...)
		if err := v.Err(); err != nil {
			return nil, fmt.Errorf("receiver %q %s: %w", g.Receiver, name, err)
		}
		for _, body := range rec.taken() {
			out = append(out, Payload{Integration: name, Body: NormalisePayload(body)})
		}
	}
	return out, nil
}

// volatile are the fields of a payload that change from run to run or
// with the time of the test rather than with the configuration: the
// alerts' times (their start is when the rule fired, the end of a firing
// alert Alertmanager's zero time).
var volatile = regexp.MustCompile(`"(startsAt|endsAt)":"[^"]*"`)

// NormalisePayload replaces the volatile fields of a rendered payload with
// fixed text, so that a golden file holds only what the configuration and
// the alerts decide.
func NormalisePayload(b []byte) []byte {
	return volatile.ReplaceAll(b, []byte(`"$1":"<time>"`))
}

// recorder is the network of RenderPayloads: it keeps every request's
// body and answers as the receiving end would on success.
type recorder struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (r *recorder) reset() {
	r.mu.Lock()
	r.bodies = nil
	r.mu.Unlock()
}

func (r *recorder) taken() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bodies
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	answer := "ok"
	if strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		// A Slack Web API call: the form without the token, as JSON.
		b, err := formJSON(lastSegment(req.URL), body)
		if err != nil {
			return nil, err
		}
		body = b
		answer = `{"ok":true,"channel":"C0000000000","ts":"1700000000.000100"}`
	}
	r.mu.Lock()
	r.bodies = append(r.bodies, body)
	r.mu.Unlock()
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": []string{"application/json"}},
		Body:       io.NopCloser(strings.NewReader(answer)),
		Request:    req,
	}, nil
}

func lastSegment(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.Path[strings.LastIndex(u.Path, "/")+1:]
}

// formJSON turns a Slack Web API form into a JSON object with sorted keys:
// "method" (chat.postMessage), then every field but the token; blocks and
// other JSON-valued fields stay JSON.
func formJSON(method string, body []byte) ([]byte, error) {
	vals, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, fmt.Errorf("slack form: %w", err)
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		if k != "token" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var b bytes.Buffer
	b.WriteString(`{"method":`)
	m, _ := json.Marshal(method)
	b.Write(m)
	for _, k := range keys {
		kk, _ := json.Marshal(k)
		b.WriteByte(',')
		b.Write(kk)
		b.WriteByte(':')
		v := vals.Get(k)
		if json.Valid([]byte(v)) && (strings.HasPrefix(v, "[") || strings.HasPrefix(v, "{")) {
			b.WriteString(v)
			continue
		}
		vv, _ := json.Marshal(v)
		b.Write(vv)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
