package embedded

import (
	"cmp"
	"slices"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/scrape"
)

// Health of a target, as on Prometheus's /targets page.
const (
	HealthUnknown = string(scrape.HealthUnknown) // not scraped yet
	HealthUp      = string(scrape.HealthGood)
	HealthDown    = string(scrape.HealthBad)
)

// Target is the scrape status of one active target, for the UI, the API
// (Prometheus's /api/v1/targets fields) and tests.
type Target struct {
	Job string // the scrape pool: the job_name of its scrape config
	URL string // scrape URL, e.g. http://10.0.0.5:8000/metrics
	// DiscoveredLabels are the labels service discovery gave the target,
	// before relabel_configs (__address__, __meta_*, __scrape_interval__...).
	DiscoveredLabels labels.Labels
	// Labels are the target labels after relabelling (job, instance...).
	Labels labels.Labels
	Health string // HealthUp, HealthDown or HealthUnknown
	// LastError is why the last scrape failed; empty when it succeeded.
	LastError          string
	LastScrape         time.Time
	LastScrapeDuration time.Duration
	// ScrapeInterval and ScrapeTimeout as Prometheus shows them ("5s").
	ScrapeInterval string
	ScrapeTimeout  string
}

// DroppedTarget is a discovered target that relabel_configs dropped.
type DroppedTarget struct {
	Job              string
	DiscoveredLabels labels.Labels
}

// Targets returns every active target, sorted by job and URL.
func (e *Embedded) Targets() []Target {
	var out []Target
	b := labels.NewBuilder(labels.EmptyLabels())
	for job, ts := range e.scraper.TargetsActive() {
		for _, t := range ts {
			tt := Target{
				Job:                job,
				URL:                t.URL().String(),
				DiscoveredLabels:   t.DiscoveredLabels(b),
				Labels:             t.Labels(b),
				Health:             string(t.Health()),
				LastScrape:         t.LastScrape(),
				LastScrapeDuration: t.LastScrapeDuration(),
				ScrapeInterval:     t.GetValue(model.ScrapeIntervalLabel),
				ScrapeTimeout:      t.GetValue(model.ScrapeTimeoutLabel),
			}
			if err := t.LastError(); err != nil {
				tt.LastError = err.Error()
			}
			out = append(out, tt)
		}
	}
	slices.SortFunc(out, func(a, b Target) int {
		return cmp.Or(cmp.Compare(a.Job, b.Job), cmp.Compare(a.URL, b.URL))
	})
	return out
}

// DroppedTargets returns the targets relabelling dropped that the scrape
// manager keeps (keep_dropped_targets), sorted by job and labels, and the
// number dropped per job.
func (e *Embedded) DroppedTargets() ([]DroppedTarget, map[string]int) {
	var out []DroppedTarget
	b := labels.NewBuilder(labels.EmptyLabels())
	for job, ts := range e.scraper.TargetsDropped() {
		for _, t := range ts {
			out = append(out, DroppedTarget{Job: job, DiscoveredLabels: t.DiscoveredLabels(b)})
		}
	}
	slices.SortFunc(out, func(a, b DroppedTarget) int {
		return cmp.Or(cmp.Compare(a.Job, b.Job), labels.Compare(a.DiscoveredLabels, b.DiscoveredLabels))
	})
	return out, e.scraper.TargetsDroppedCounts()
}
