package notifier

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/alertmanager/notify"

	"github.com/pagedhq/paged/rules"
)

// forwarders send every alert to external Alertmanagers over API v2
// (POST /api/v2/alerts), as Prometheus does: one bounded queue per
// Alertmanager, batches, retries with backoff until delivered or shut
// down; when a queue is full the oldest alerts are dropped and counted.
type forwarders struct {
	targets []*forwardTarget
	wg      sync.WaitGroup
	cancel  context.CancelFunc
}

type forwardTarget struct {
	url      string // .../api/v2/alerts
	name     string // scheme://host for metrics and logs, without credentials or path
	client   *http.Client
	timeout  time.Duration
	capacity int
	logger   *slog.Logger
	metrics  *metrics

	mu    sync.Mutex
	queue []apiAlert
	more  chan struct{}
}

// apiAlert is Alertmanager's postable alert.
type apiAlert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	StartsAt     time.Time         `json:"startsAt,omitzero"`
	EndsAt       time.Time         `json:"endsAt,omitzero"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
}

const forwardBatch = 64

func newForwarders(cs []AlertmanagerConfig, capacity int, rt http.RoundTripper, logger *slog.Logger, m *metrics) (*forwarders, error) {
	f := &forwarders{}
	for i, c := range cs {
		client, err := httpClient(c.HTTPConfig, "alertmanager", rt)
		if err != nil {
			return nil, fmt.Errorf("alertmanagers[%d]: %w", i, err)
		}
		base := strings.TrimRight(c.URL, "/")
		name := base
		if u, err := parseURL(base); err == nil {
			name = u.Scheme + "://" + u.Host
		}
		timeout := time.Duration(c.Timeout)
		if timeout <= 0 {
			timeout = 10 * time.Second
		}
		for _, o := range []string{outcomeSuccess, outcomeRetry} {
			m.forwarded.WithLabelValues(name, o)
		}
		f.targets = append(f.targets, &forwardTarget{
			url: base + "/api/v2/alerts", name: name, client: client, timeout: timeout, capacity: capacity,
			logger: logger.With("alertmanager", name), metrics: m, more: make(chan struct{}, 1),
		})
	}
	return f, nil
}

// adopt takes over the queued alerts of old for the same Alertmanagers;
// old must be stopped. Either may be nil.
func (f *forwarders) adopt(old *forwarders) {
	if f == nil || old == nil {
		return
	}
	for _, t := range f.targets {
		for _, o := range old.targets {
			if o.url != t.url {
				continue
			}
			o.mu.Lock()
			q := o.queue
			o.queue = nil
			o.mu.Unlock()
			if len(q) > 0 {
				t.push(q)
			}
		}
	}
}

func (f *forwarders) start(ctx context.Context) {
	ctx, f.cancel = context.WithCancel(ctx)
	for _, t := range f.targets {
		f.wg.Go(func() { t.run(ctx) })
	}
}

func (f *forwarders) stop() {
	if f == nil {
		return
	}
	if f.cancel != nil {
		f.cancel()
	}
	f.wg.Wait()
}

func (f *forwarders) enqueue(in []*rules.Alert) {
	if f == nil {
		return
	}
	batch := make([]apiAlert, 0, len(in))
	for _, a := range in {
		pa := apiAlert{Labels: a.Labels.Map(), StartsAt: a.StartsAt, EndsAt: a.EndsAt, GeneratorURL: a.GeneratorURL}
		if a.Annotations.Len() > 0 {
			pa.Annotations = a.Annotations.Map()
		}
		batch = append(batch, pa)
	}
	for _, t := range f.targets {
		t.push(batch)
	}
}

func (t *forwardTarget) push(batch []apiAlert) {
	t.mu.Lock()
	t.queue = append(t.queue, batch...)
	if over := len(t.queue) - t.capacity; over > 0 {
		t.queue = t.queue[over:]
		t.metrics.dropped.WithLabelValues("forward_queue_full").Add(float64(over))
		t.logger.Warn("forward queue full, dropped oldest alerts", "dropped", over)
	}
	t.mu.Unlock()
	select {
	case t.more <- struct{}{}:
	default:
	}
}

func (t *forwardTarget) next() []apiAlert {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := min(len(t.queue), forwardBatch)
	b := t.queue[:n:n]
	t.queue = t.queue[n:]
	return b
}

func (t *forwardTarget) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.more:
		}
		for {
			b := t.next()
			if len(b) == 0 {
				break
			}
			backoff := 100 * time.Millisecond
			for !t.send(ctx, b) {
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				backoff = min(backoff*2, 10*time.Second)
			}
		}
	}
}

func (t *forwardTarget) send(ctx context.Context, b []apiAlert) bool {
	body, err := json.Marshal(b)
	if err != nil {
		t.logger.Error("encoding alerts failed", "err", err)
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		return true
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "paged")
	resp, err := t.client.Do(req)
	if err != nil {
		t.metrics.forwarded.WithLabelValues(t.name, outcomeRetry).Add(float64(len(b)))
		t.logger.Warn("forwarding alerts failed, will retry", "err", notify.RedactURL(err))
		return false
	}
	defer notify.Drain(resp)
	if resp.StatusCode/100 == 2 {
		t.metrics.forwarded.WithLabelValues(t.name, outcomeSuccess).Add(float64(len(b)))
		return true
	}
	if resp.StatusCode/100 == 5 || resp.StatusCode == http.StatusTooManyRequests {
		t.metrics.forwarded.WithLabelValues(t.name, outcomeRetry).Add(float64(len(b)))
		t.logger.Warn("alertmanager refused alerts, will retry", "status", resp.StatusCode)
		return false
	}
	// A 4xx will not get better: count the batch as dropped.
	t.metrics.dropped.WithLabelValues("forward_rejected").Add(float64(len(b)))
	t.logger.Error("alertmanager rejected alerts", "status", resp.StatusCode, "alerts", len(b))
	return true
}
