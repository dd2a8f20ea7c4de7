package rules

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// LiveAPI is what the live checks ask beyond SeriesExist. The client
// NewPrometheusAPI returns has it; a PrometheusAPI without it gets the
// plain "no series" check only.
type LiveAPI interface {
	PrometheusAPI
	SeriesWithin(selector string, d time.Duration) (bool, error)
	LabelValues(label, selector string, d time.Duration) ([]string, error)
	MetricType(family string) (string, error)
	QueryRange(expr string, window, step time.Duration) (model.Matrix, error)
	CountSeries(selector string) (int, error)
	ExternalLabels() (map[string]string, error)
}

// liveState is what the live checks learn during one run: whether the
// server answers at all, and which endpoints it lacks, so that an
// unreachable or partial server gives one finding, not one per selector.
type liveState struct {
	down     error // the server could not be reached: every live check stops
	reported bool  // the down finding was given
	missing  map[string]bool
	types    map[string]string
	external map[string]string // nil until asked
}

func (p *Pass) live() *liveState {
	if p.Config.live == nil {
		p.Config.live = &liveState{missing: map[string]bool{}, types: map[string]string{}}
	}
	return p.Config.live
}

// liveDown reports whether live checks should stop.
func (p *Pass) liveDown() bool { return p.live().down != nil }

// liveError handles an error from the server: when it could not be
// reached, one finding for the whole run and every live check stops;
// when it answered with an error for one endpoint (Thanos, Mimir and
// VictoriaMetrics lack some), one info finding per endpoint and the
// checks that need it stop. It returns false when the caller may go on
// with other questions.
func (p *Pass) liveError(r *Rule, endpoint string, err error) {
	st := p.live()
	if Unreachable(err) {
		st.down = err
		if !st.reported {
			st.reported = true
			p.reportOnRule(r, Error, "could not reach the Prometheus server (%v): the live checks were skipped for every rule", err)
		}
		return
	}
	if !st.missing[endpoint] {
		st.missing[endpoint] = true
		p.reportOnRule(r, Info, "the server answered %s with an error (%v): the checks that need it were skipped; "+
			"Thanos, Mimir and VictoriaMetrics lack some Prometheus endpoints", endpoint, err)
	}
}

func (p *Pass) reportOnRule(r *Rule, sev Severity, format string, args ...any) {
	n := r.Node
	if r.Expr != nil && r.Expr.Node != nil {
		n = r.Expr.Node
	}
	p.ReportSeverity(sev, p.File.NodeRange(n), format, args...)
}

// diagnoseSelector explains why a selector that has no series in the last
// hour matches nothing: the name never had series, it disappeared, or
// which matcher excludes every series of the name.
func diagnoseSelector(p *Pass, r *Rule, api LiveAPI, vs *parser.VectorSelector, sel string) string {
	name, ok := selectorName(vs)
	if !ok {
		return fmt.Sprintf("no series matches %s on the Prometheus server", sel)
	}
	lookback := p.Config.LiveLookback
	ever, err := api.SeriesWithin(name, lookback)
	if err != nil {
		p.liveError(r, "/api/v1/series", err)
		return ""
	}
	if !ever {
		return fmt.Sprintf("%s has no series on the server in the last %s: nothing by that name was scraped "+
			"(a typo, a renamed metric, or a job this server does not scrape)", name, model.Duration(lookback))
	}
	now, err := api.SeriesWithin(name, time.Hour)
	if err != nil {
		p.liveError(r, "/api/v1/series", err)
		return ""
	}
	if !now {
		return fmt.Sprintf("%s had series in the last %s but has none in the last hour: its target is gone or the metric was renamed",
			name, model.Duration(lookback))
	}
	for _, m := range vs.LabelMatchers {
		if m == nil || m.Name == labels.MetricName {
			continue
		}
		one := name + "{" + m.String() + "}"
		ok, err := api.SeriesWithin(one, time.Hour)
		if err != nil {
			p.liveError(r, "/api/v1/series", err)
			return ""
		}
		if ok {
			continue
		}
		vals, err := api.LabelValues(m.Name, name, time.Hour)
		if err != nil {
			p.liveError(r, "/api/v1/label/"+m.Name+"/values", err)
			return fmt.Sprintf("%s has series, but none with %s", name, m)
		}
		if len(vals) == 0 {
			return fmt.Sprintf("%s has series, but none of them has a %s label, so %s matches nothing", name, m.Name, m)
		}
		shown := vals
		more := ""
		if len(shown) > 5 {
			shown, more = shown[:5], fmt.Sprintf(" and %d more", len(vals)-5)
		}
		return fmt.Sprintf("%s matches no %s series: %s is %s%s on them (last hour)", m, name, m.Name, quoteAll(shown), more)
	}
	return fmt.Sprintf("each matcher of %s matches %s series, but no series has them all together", sel, name)
}

func quoteAll(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}
