package discover

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/pagedhq/paged/engine"
)

// PrometheusOptions say which Prometheus-compatible API to ask.
type PrometheusOptions struct {
	// Remote is the URL, timeout and HTTP client settings, as paged's
	// datasource uses them.
	Remote engine.RemoteOptions
	// Lookback is how far back metric names are listed. Default 1h.
	Lookback time.Duration
	// Now is the time of the questions. Default time.Now().
	Now time.Time
}

// FromPrometheus asks a Prometheus-compatible API which LLM servers it
// scrapes: the metric names of the last Lookback
// (/api/v1/label/__name__/values), then, per server kind found, the jobs
// and metric names it has now (count by (job, __name__)) and the targets
// per job. The returned Inventory's Source is the URL without
// credentials.
func FromPrometheus(ctx context.Context, o PrometheusOptions) (*Inventory, *engine.Remote, error) {
	if o.Lookback <= 0 {
		o.Lookback = time.Hour
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	api, err := engine.NewPrometheusAPI(o.Remote, "paged_init")
	if err != nil {
		return nil, nil, err
	}
	ds, err := engine.NewRemote(o.Remote)
	if err != nil {
		return nil, nil, err
	}
	inv := &Inventory{Source: ds.String()}
	timeout := o.Remote.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	lctx, cancel := context.WithTimeout(ctx, timeout)
	values, _, _, err := api.LabelValues(lctx, model.MetricNameLabel, nil, o.Now.Add(-o.Lookback), o.Now)
	cancel()
	if err != nil {
		return nil, nil, fmt.Errorf("list metric names on %s: %w", ds, redact(err, o.Remote.URL, ds.String()))
	}
	inv.Names = len(values)
	seen := map[*family]bool{}
	for _, v := range values {
		if f := familyOf(string(v)); f != nil {
			seen[f] = true
		}
	}
	jobs := map[string]*jobNames{}
	for i := range families {
		f := &families[i]
		if !seen[f] {
			continue
		}
		sel := fmt.Sprintf(`{__name__=~"%s.+"}`, regexp.QuoteMeta(f.prefix))
		byName, err := ds.Query(ctx, "count by (job, __name__) ("+sel+")", o.Now)
		if err != nil {
			return nil, nil, fmt.Errorf("ask %s about %s metrics: %w", ds, f.title, err)
		}
		targets, err := ds.Query(ctx, "count by (job) (count by (job, instance) ("+sel+"))", o.Now)
		if err != nil {
			return nil, nil, fmt.Errorf("ask %s about %s targets: %w", ds, f.title, err)
		}
		if len(byName) == 0 {
			inv.Notes = append(inv.Notes, fmt.Sprintf("%s metrics were scraped in the last %s but none are now: the servers are down or gone", f.title, model.Duration(o.Lookback)))
			continue
		}
		perJob := map[string]*jobNames{}
		for _, s := range byName {
			job := s.Metric.Get("job")
			jn := perJob[job]
			if jn == nil {
				jn = &jobNames{}
				perJob[job] = jn
			}
			jn.names = append(jn.names, s.Metric.Get(model.MetricNameLabel))
		}
		for _, s := range targets {
			if jn := perJob[s.Metric.Get("job")]; jn != nil {
				jn.targets = int(s.F)
			}
		}
		for job, jn := range perJob {
			if all := jobs[job]; all != nil {
				all.names = append(all.names, jn.names...)
				all.targets = max(all.targets, jn.targets)
			} else {
				jobs[job] = jn
			}
		}
	}
	inv.fit(jobs)
	return inv, ds, nil
}

// redact removes the raw URL from an error of the API client.
func redact(err error, raw, safe string) error {
	if raw == "" || raw == safe || !strings.Contains(err.Error(), raw) {
		return err
	}
	return fmt.Errorf("%s", strings.ReplaceAll(err.Error(), raw, safe))
}
