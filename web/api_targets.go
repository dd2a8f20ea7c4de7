package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/engine/embedded"
)

// TargetLister is what an Engine that scrapes (embedded mode) offers for
// /api/v1/targets and the UI. ok is false when the engine does not scrape.
type TargetLister interface {
	Targets() (active []embedded.Target, dropped []embedded.DroppedTarget, droppedCounts map[string]int, ok bool)
}

// apiTarget and the types below are Prometheus's /api/v1/targets answer,
// field for field (web/api/v1's Target, DroppedTarget, TargetDiscovery).
type apiTarget struct {
	DiscoveredLabels   labels.Labels `json:"discoveredLabels"`
	Labels             labels.Labels `json:"labels"`
	ScrapePool         string        `json:"scrapePool"`
	ScrapeURL          string        `json:"scrapeUrl"`
	GlobalURL          string        `json:"globalUrl"`
	LastError          string        `json:"lastError"`
	LastScrape         time.Time     `json:"lastScrape"`
	LastScrapeDuration float64       `json:"lastScrapeDuration"`
	Health             string        `json:"health"`
	ScrapeInterval     string        `json:"scrapeInterval"`
	ScrapeTimeout      string        `json:"scrapeTimeout"`
}

type apiDroppedTarget struct {
	DiscoveredLabels labels.Labels `json:"discoveredLabels"`
	ScrapePool       string        `json:"scrapePool"`
}

type apiTargetDiscovery struct {
	ActiveTargets       []*apiTarget        `json:"activeTargets"`
	DroppedTargets      []*apiDroppedTarget `json:"droppedTargets"`
	DroppedTargetCounts map[string]int      `json:"droppedTargetCounts"`
}

// targets returns the engine's scrape targets; ok false when paged does
// not scrape (datasource.type: prometheus).
func (h *Handler) targets() ([]embedded.Target, []embedded.DroppedTarget, map[string]int, bool) {
	tl, ok := h.engine().(TargetLister)
	if !ok {
		return nil, nil, nil, false
	}
	return tl.Targets()
}

// handleTargets answers GET /api/v1/targets as Prometheus does, with its
// state (active, dropped, any) and scrapePool parameters. With a remote
// datasource paged scrapes nothing and both lists are empty.
func (h *Handler) handleTargets(w http.ResponseWriter, r *http.Request) {
	pool := r.URL.Query().Get("scrapePool")
	state := strings.ToLower(r.URL.Query().Get("state"))
	showActive := state == "" || state == "any" || state == "active"
	showDropped := state == "" || state == "any" || state == "dropped"
	active, dropped, counts, _ := h.targets()
	res := &apiTargetDiscovery{ActiveTargets: []*apiTarget{}, DroppedTargets: []*apiDroppedTarget{}}
	if showActive {
		for _, t := range active {
			if pool != "" && t.Job != pool {
				continue
			}
			res.ActiveTargets = append(res.ActiveTargets, &apiTarget{
				DiscoveredLabels:   t.DiscoveredLabels,
				Labels:             t.Labels,
				ScrapePool:         t.Job,
				ScrapeURL:          t.URL,
				GlobalURL:          t.URL,
				LastError:          t.LastError,
				LastScrape:         t.LastScrape,
				LastScrapeDuration: t.LastScrapeDuration.Seconds(),
				Health:             t.Health,
				ScrapeInterval:     t.ScrapeInterval,
				ScrapeTimeout:      t.ScrapeTimeout,
			})
		}
	}
	if showDropped {
		res.DroppedTargetCounts = counts
		if res.DroppedTargetCounts == nil {
			res.DroppedTargetCounts = map[string]int{}
		}
		for _, t := range dropped {
			if pool != "" && t.Job != pool {
				continue
			}
			res.DroppedTargets = append(res.DroppedTargets, &apiDroppedTarget{DiscoveredLabels: t.DiscoveredLabels, ScrapePool: t.Job})
		}
	}
	writeAPIData(w, res)
}
