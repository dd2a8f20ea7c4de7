package discover

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
)

// Target is one host:port given to FromTargets and what it answered.
type Target struct {
	Addr string
	// Packs are the packs its metrics fit; none when it serves no LLM
	// server's metrics or could not be scraped.
	Packs []string
	// Job is the scrape job it gets in the written configuration: the
	// first of its packs.
	Job string
	// Names is the number of metric names it exposes.
	Names int
	// Err is why it could not be scraped.
	Err error
}

// seriesLabels is one scraped series with the target labels the embedded
// scraper adds (job, instance).
type seriesLabels = labels.Labels

// ScrapeOptions tune FromTargets.
type ScrapeOptions struct {
	// Client does the requests. Default: a client with Timeout.
	Client *http.Client
	// Timeout of one scrape. Default 10s.
	Timeout time.Duration
	// MetricsPath is the path scraped on every target. Default /metrics.
	MetricsPath string
}

// maxScrapeBytes bounds what is read from one target.
const maxScrapeBytes = 64 << 20

// FromTargets scrapes each host:port's /metrics once (the text or
// protobuf exposition format, decoded by prometheus/common/expfmt), tells
// from the names which server each one is, and keeps the series so that
// the packs' selectors can be checked against them as the embedded
// datasource would see them: with job (the pack the target fits) and
// instance labels, and an up series. Targets that cannot be scraped or
// expose no LLM server's metrics are listed with the reason and left out.
func FromTargets(ctx context.Context, addrs []string, o ScrapeOptions) *Inventory {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.MetricsPath == "" {
		o.MetricsPath = "/metrics"
	}
	client := o.Client
	if client == nil {
		client = &http.Client{Timeout: o.Timeout}
	}
	inv := &Inventory{Source: "the scraped targets"}
	jobs := map[string]*jobNames{}
	names := map[string]bool{}
	for _, addr := range addrs {
		t := &Target{Addr: addr}
		inv.Targets = append(inv.Targets, t)
		fams, err := scrape(ctx, client, "http://"+addr+o.MetricsPath, o.Timeout)
		if err != nil {
			t.Err = err
			continue
		}
		var series []labels.Labels
		var tnames []string
		for _, mf := range fams {
			if len(mf.GetMetric()) == 0 {
				continue // declared, no series yet
			}
			series = append(series, familySeries(mf)...)
			for _, n := range familyNames(mf) {
				tnames = append(tnames, n)
				names[n] = true
			}
		}
		t.Names = len(tnames)
		t.Packs = classify(tnames)
		if len(t.Packs) == 0 {
			continue
		}
		t.Job = t.Packs[0]
		jn := jobs[t.Job]
		if jn == nil {
			jn = &jobNames{}
			jobs[t.Job] = jn
		}
		jn.names = append(jn.names, tnames...)
		jn.targets++
		for _, s := range series {
			b := labels.NewBuilder(s)
			b.Set("job", t.Job)
			b.Set("instance", addr)
			inv.series = append(inv.series, b.Labels())
		}
		inv.series = append(inv.series, labels.FromStrings(model.MetricNameLabel, "up", "job", t.Job, "instance", addr))
	}
	inv.Names = len(names)
	inv.fit(jobs)
	return inv
}

// scrape GETs url and decodes the metric families.
func scrape(ctx context.Context, client *http.Client, url string, timeout time.Duration) ([]*dto.MetricFamily, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	// The text format, as Prometheus asks for it last: prometheus_client
	// answers OpenMetrics only when asked.
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1")
	resp, err := client.Do(req)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("no answer within %s", timeout)
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	format := expfmt.ResponseFormat(resp.Header)
	if format.FormatType() == expfmt.TypeUnknown {
		format = expfmt.NewFormat(expfmt.TypeTextPlain)
	}
	dec := expfmt.NewDecoder(io.LimitReader(resp.Body, maxScrapeBytes), format)
	var out []*dto.MetricFamily
	for {
		mf := &dto.MetricFamily{}
		if err := dec.Decode(mf); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: not a Prometheus exposition: %w", url, err)
		}
		out = append(out, mf)
	}
}

// familyNames are the series names of a family: name_bucket, _sum and
// _count for a histogram; name, _sum and _count for a summary.
func familyNames(mf *dto.MetricFamily) []string {
	n := mf.GetName()
	switch mf.GetType() {
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		return []string{n + "_bucket", n + "_sum", n + "_count"}
	case dto.MetricType_SUMMARY:
		return []string{n, n + "_sum", n + "_count"}
	}
	return []string{n}
}

// familySeries returns the series of a family as Prometheus stores them.
func familySeries(mf *dto.MetricFamily) []labels.Labels {
	var out []labels.Labels
	base := mf.GetName()
	for _, m := range mf.GetMetric() {
		b := labels.NewScratchBuilder(len(m.GetLabel()) + 2)
		add := func(name string, extra ...string) {
			b.Reset()
			b.Add(model.MetricNameLabel, name)
			for _, lp := range m.GetLabel() {
				b.Add(lp.GetName(), lp.GetValue())
			}
			for i := 0; i+1 < len(extra); i += 2 {
				b.Add(extra[i], extra[i+1])
			}
			b.Sort()
			out = append(out, b.Labels())
		}
		switch mf.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			inf := false
			for _, bk := range m.GetHistogram().GetBucket() {
				inf = inf || math.IsInf(bk.GetUpperBound(), 1)
				add(base+"_bucket", "le", strconv.FormatFloat(bk.GetUpperBound(), 'g', -1, 64))
			}
			if !inf {
				add(base+"_bucket", "le", "+Inf")
			}
			add(base + "_sum")
			add(base + "_count")
		case dto.MetricType_SUMMARY:
			for _, q := range m.GetSummary().GetQuantile() {
				add(base, "quantile", strconv.FormatFloat(q.GetQuantile(), 'g', -1, 64))
			}
			add(base + "_sum")
			add(base + "_count")
		default:
			add(base)
		}
	}
	return out
}
