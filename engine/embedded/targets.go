package embedded

import (
	"cmp"
	"slices"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/scrape"
)

// Health of a target, as on Prometheus's /targets page.
const (
	HealthUnknown = string(scrape.HealthUnknown) // not scraped yet
	HealthUp      = string(scrape.HealthGood)
	HealthDown    = string(scrape.HealthBad)
)

// Target is the scrape status of one target, for the UI, the API and tests.
type Target struct {
	Job    string
	URL    string        // scrape URL, e.g. http://10.0.0.5:8000/metrics
	Labels labels.Labels // target labels (job, instance and static labels)
	Health string        // HealthUp, HealthDown or HealthUnknown
	// LastError is why the last scrape failed; empty when it succeeded.
	LastError          string
	LastScrape         time.Time
	LastScrapeDuration time.Duration
}

// Targets returns every active target, sorted by job and URL.
func (e *Embedded) Targets() []Target {
	var out []Target
	for job, ts := range e.scraper.TargetsActive() {
		for _, t := range ts {
			tt := Target{
				Job:                job,
				URL:                t.URL().String(),
				Labels:             t.Labels(labels.NewBuilder(labels.EmptyLabels())),
				Health:             string(t.Health()),
				LastScrape:         t.LastScrape(),
				LastScrapeDuration: t.LastScrapeDuration(),
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
