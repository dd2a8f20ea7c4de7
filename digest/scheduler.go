package digest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/internal/durable"
	"github.com/pagedhq/paged/notifier"
	"github.com/pagedhq/paged/report"
)

// SendFunc delivers a digest to a receiver; (*notifier.Notifier).SendDigest.
type SendFunc func(ctx context.Context, receiver string, d notifier.Digest) (notifier.DigestResult, error)

// Retries of a digest that failed: the first after minRetry, each after
// twice as long as the one before, at most maxRetry.
const (
	minRetry = time.Minute
	maxRetry = time.Hour
)

// Options configure a Scheduler.
type Options struct {
	// Config returns the configuration in effect (a reload changes it):
	// report.digest, report's working hours, global.external_url.
	// Required.
	Config func() *config.Config
	// Send delivers the digest. Required.
	Send SendFunc
	// History is what the report is built from; nil: there is no history
	// (each digest fails and says so).
	History report.Source
	// StoragePath holds the state file (StateFile); "" keeps the state in
	// memory only.
	StoragePath string
	// Reporter reports a state file that is corrupt or cannot be written.
	Reporter   *durable.Reporter
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// Scheduler sends the digest of each scheduled time once.
type Scheduler struct {
	opts    Options
	logger  *slog.Logger
	metrics *metrics
	file    *stateFile
	wake    chan struct{}

	mu sync.Mutex // one Run at a time
}

// New checks opts and builds a Scheduler; Run starts it.
func New(opts Options) (*Scheduler, error) {
	if opts.Config == nil || opts.Send == nil {
		return nil, errors.New("digest: Config and Send are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	f := &stateFile{reporter: opts.Reporter}
	if opts.StoragePath != "" {
		f.path = filepath.Join(opts.StoragePath, StateFile)
	}
	return &Scheduler{opts: opts, logger: opts.Logger, metrics: newMetrics(opts.Registerer), file: f, wake: make(chan struct{}, 1)}, nil
}

// Wake makes Run read the configuration again (after a reload).
func (s *Scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run sends each digest when it is due, and one that is due when it
// starts (paged was down at the scheduled time) unless the next is due
// first, until ctx ends.
func (s *Scheduler) Run(ctx context.Context) error {
	if !s.mu.TryLock() {
		return errors.New("digest: already running")
	}
	defer s.mu.Unlock()
	var (
		st       state
		loaded   bool
		unsaved  bool      // st is not on disk yet
		failed   time.Time // the digest whose last attempt failed
		failures int
		retryAt  time.Time
	)
	for {
		cfg := s.opts.Config()
		dc := cfg.Report.Digest
		var wakeAt time.Time
		if dc == nil {
			s.metrics.next.Set(0)
		} else {
			now := time.Now()
			if !loaded {
				var err error
				if st, err = s.file.load(now); err != nil {
					s.logger.Error("the digest's state is kept in memory and written again in a minute", "err", err)
					unsaved = true
				}
				loaded = true
				if !st.Last.IsZero() {
					s.metrics.last.Set(float64(st.Last.Unix()))
				}
			}
			sched := Schedule{Weekday: dc.Weekday, At: dc.At, Location: cfg.Report.TimeZone}
			due := sched.Prev(now)
			wakeAt = sched.Next(now)
			if due.After(st.Last) && due.After(st.Since) {
				if !due.Equal(failed) {
					failures, retryAt = 0, time.Time{}
				}
				if !now.Before(retryAt) {
					if s.send(ctx, cfg, dc, due) {
						st.Last, failures, failed, retryAt = due, 0, time.Time{}, time.Time{}
						unsaved = true
					} else if ctx.Err() == nil {
						failed, failures = due, failures+1
						retryAt = now.Add(backoff(failures))
					}
				}
				if !retryAt.IsZero() && retryAt.Before(wakeAt) {
					wakeAt = retryAt
				}
			}
			if unsaved && s.file.save(st, now) == nil {
				unsaved = false
				if !st.Last.IsZero() {
					s.metrics.last.Set(float64(st.Last.Unix()))
				}
			}
			if unsaved && now.Add(minRetry).Before(wakeAt) {
				wakeAt = now.Add(minRetry) // write it again
			}
			s.metrics.next.Set(float64(sched.Next(now).Unix()))
		}
		if !s.sleep(ctx, wakeAt) {
			return nil
		}
	}
}

// sleep waits until at (for ever when zero) or a Wake; false when ctx
// ended.
func (s *Scheduler) sleep(ctx context.Context, at time.Time) bool {
	var timer <-chan time.Time
	if !at.IsZero() {
		t := time.NewTimer(time.Until(at))
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-s.wake:
	case <-timer:
	}
	return true
}

// backoff is the wait after the n-th failed attempt (n >= 1).
func backoff(n int) time.Duration {
	d := minRetry
	for i := 1; i < n && d < maxRetry; i++ {
		d *= 2
	}
	return min(d, maxRetry)
}

// send builds the digest of the span before due and sends it; it tells
// whether that digest is done with (sent, found sent, or too late).
func (s *Scheduler) send(ctx context.Context, cfg *config.Config, dc *config.DigestConfig, due time.Time) bool {
	key := due.UTC().Format(time.RFC3339)
	logger := s.logger.With("receiver", dc.Receiver, "digest", key)
	fail := func(msg string, err error) bool {
		if ctx.Err() != nil {
			return false // shutting down: tried again at the next start
		}
		s.metrics.digests.WithLabelValues(OutcomeFailed).Inc()
		logger.Error(msg, "err", err)
		return false
	}
	if s.opts.History == nil {
		return fail("digest not sent", errors.New("there is no event history: it could not be opened at start (paged's log says why)"))
	}
	// What the history holds up to due, committed before it is read.
	if f, ok := s.opts.History.(interface{ Flush(context.Context) error }); ok {
		if err := f.Flush(ctx); err != nil {
			return fail("digest not sent: the history could not be written", err)
		}
	}
	from := due.Add(-dc.Span)
	r, err := report.Build(ctx, report.ConfigOptions(cfg.Report, from, due), s.opts.History)
	if err != nil {
		return fail("digest not sent: the report could not be built", err)
	}
	msg, err := Message(r, dc.Receiver, key, ReportLink(cfg.Global.ExternalURL, from, due), due)
	if err != nil {
		return fail("digest not sent", err)
	}
	res, err := s.opts.Send(ctx, dc.Receiver, msg)
	switch {
	case errors.Is(err, notifier.ErrDigestTooLate):
		s.metrics.digests.WithLabelValues(OutcomeSkipped).Inc()
		logger.Warn("digest not sent", "reason", err)
		return true
	case err != nil:
		return fail(fmt.Sprintf("digest not delivered to every integration (%d delivered now, %d before); retrying", res.Sent, res.Already), err)
	case res.Sent > 0:
		s.metrics.digests.WithLabelValues(OutcomeSent).Inc()
		logger.Info("digest sent", "integrations", res.Sent, "already", res.Already, "pages", r.Pages)
	default:
		s.metrics.digests.WithLabelValues(OutcomeAlreadySent).Inc()
		logger.Info("digest already sent, by the other member of the cluster or before a restart", "integrations", res.Already)
	}
	return true
}
