package web

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/notifier"
)

// Prometheus's error types, as its API reports them.
const (
	errorBadData  = "bad_data"
	errorInternal = "internal"
	// errorUnavailable is Prometheus's for a part that cannot answer.
	errorUnavailable = "unavailable"
)

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeAPIData(w http.ResponseWriter, data any) {
	writeJSON(w, http.StatusOK, apiResponse{Status: "success", Data: data})
}

func writeAPIError(w http.ResponseWriter, code int, typ string, err error) {
	writeJSON(w, code, apiResponse{Status: "error", ErrorType: typ, Error: err.Error()})
}

// rulesQuery holds the filters /api/v1/rules accepts (Prometheus's names).
type rulesQuery struct {
	typ           string // "", "alert" or "record"
	ruleNames     map[string]bool
	groupNames    map[string]bool
	files         map[string]bool
	matchers      [][]*labels.Matcher
	excludeAlerts bool
}

func parseRulesQuery(r *http.Request) (*rulesQuery, error) {
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("error parsing form values: %w", err)
	}
	set := func(vs []string) map[string]bool {
		m := make(map[string]bool, len(vs))
		for _, v := range vs {
			m[v] = true
		}
		return m
	}
	q := &rulesQuery{
		typ:        strings.ToLower(r.Form.Get("type")),
		ruleNames:  set(r.Form["rule_name[]"]),
		groupNames: set(r.Form["rule_group[]"]),
		files:      set(r.Form["file[]"]),
	}
	if q.typ != "" && q.typ != "alert" && q.typ != "record" {
		return nil, fmt.Errorf("invalid parameter \"type\": not supported value %q", q.typ)
	}
	if v := r.Form.Get("exclude_alerts"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("invalid parameter \"exclude_alerts\": %q is not a boolean", v)
		}
		q.excludeAlerts = b
	}
	p := parser.NewParser(parser.Options{})
	for _, s := range r.Form["match[]"] {
		ms, err := p.ParseMetricSelector(s)
		if err != nil {
			return nil, fmt.Errorf("invalid parameter \"match[]\": %w", err)
		}
		q.matchers = append(q.matchers, ms)
	}
	return q, nil
}

func (h *Handler) handleRules(w http.ResponseWriter, r *http.Request) {
	q, err := parseRulesQuery(r)
	if err != nil {
		writeAPIError(w, http.StatusBadRequest, errorBadData, err)
		return
	}
	out := &apiRuleDiscovery{Groups: []*apiRuleGroup{}}
	for _, g := range h.engine().RuleGroups() {
		if len(q.groupNames) > 0 && !q.groupNames[g.Name()] {
			continue
		}
		if len(q.files) > 0 && !q.files[g.File()] {
			continue
		}
		ag := &apiRuleGroup{
			Name:           g.Name(),
			File:           g.File(),
			Rules:          []any{},
			Interval:       g.Interval().Seconds(),
			Limit:          g.Limit(),
			EvaluationTime: g.GetEvaluationTime().Seconds(),
			LastEvaluation: g.GetLastEvaluation(),
		}
		for _, rule := range g.Rules() {
			if len(q.ruleNames) > 0 && !q.ruleNames[rule.Name()] {
				continue
			}
			ruleLabels, ruleAnnotations := h.ruleDefinition(g, rule)
			if !matchesAny(q.matchers, ruleLabels) {
				continue
			}
			lastError := ""
			if e := rule.LastError(); e != nil {
				lastError = e.Error()
			}
			switch rule := rule.(type) {
			case *promrules.AlertingRule:
				if q.typ == "record" {
					continue
				}
				var alerts []*apiAlert
				if !q.excludeAlerts {
					alerts = h.apiAlerts(r.Context(), g, rule)
				}
				ag.Rules = append(ag.Rules, apiAlertingRule{
					State:          rule.State().String(),
					Name:           rule.Name(),
					Query:          rule.Query().String(),
					Duration:       rule.HoldDuration().Seconds(),
					KeepFiringFor:  rule.KeepFiringFor().Seconds(),
					Labels:         ruleLabels,
					Annotations:    ruleAnnotations,
					Alerts:         alerts,
					Health:         rule.Health(),
					LastError:      lastError,
					EvaluationTime: rule.GetEvaluationDuration().Seconds(),
					LastEvaluation: rule.GetEvaluationTimestamp(),
					Type:           "alerting",
				})
			case *promrules.RecordingRule:
				if q.typ == "alert" {
					continue
				}
				ag.Rules = append(ag.Rules, apiRecordingRule{
					Name:           rule.Name(),
					Query:          rule.Query().String(),
					Labels:         ruleLabels,
					Health:         rule.Health(),
					LastError:      lastError,
					EvaluationTime: rule.GetEvaluationDuration().Seconds(),
					LastEvaluation: rule.GetEvaluationTimestamp(),
					Type:           "recording",
				})
			default:
				writeAPIError(w, http.StatusInternalServerError, errorInternal, fmt.Errorf("rule %q has an unknown type", rule.Name()))
				return
			}
		}
		// As in Prometheus, a group whose rules were all filtered out is left out.
		if len(ag.Rules) > 0 {
			out.Groups = append(out.Groups, ag)
		}
	}
	writeAPIData(w, out)
}

func (h *Handler) handleAlerts(w http.ResponseWriter, r *http.Request) {
	out := &apiAlertDiscovery{Alerts: []*apiAlert{}}
	for _, g := range h.engine().RuleGroups() {
		for _, rule := range g.AlertingRules() {
			out.Alerts = append(out.Alerts, h.apiAlerts(r.Context(), g, rule)...)
		}
	}
	// paged's built-in alerts (PagedDatasourceDown and the others) are
	// alerts like any other: tools that read this list see them too.
	out.Alerts = append(out.Alerts, h.builtinAPIAlerts()...)
	writeAPIData(w, out)
}

// staleReporter is implemented by engines that track which rules' queries
// fail (the engine's adapter does).
type staleReporter interface {
	IsStale(promrules.Rule) bool
}

// isStale reports whether a rule's alerts are stale: its query failed and
// the engine kept their last state instead of resolving them. Engines that
// do not say fall back to the rule's last evaluation error.
func (h *Handler) isStale(rule *promrules.AlertingRule) bool {
	if sr, ok := h.engine().(staleReporter); ok {
		return sr.IsStale(rule)
	}
	return rule.LastError() != nil
}

// ruleViewer is implemented by engines that hand Prometheus's rules
// manager rules without their labels and annotations and keep them
// themselves (the engine's adapter does).
type ruleViewer interface {
	RuleDefinition(g *promrules.Group, r promrules.Rule) (lbls, annotations labels.Labels)
	ActiveAlerts(ctx context.Context, g *promrules.Group, r *promrules.AlertingRule) []*promrules.Alert
}

// ruleDefinition returns a rule's labels and annotations as written.
func (h *Handler) ruleDefinition(g *promrules.Group, r promrules.Rule) (lbls, annotations labels.Labels) {
	if v, ok := h.engine().(ruleViewer); ok {
		return v.RuleDefinition(g, r)
	}
	if ar, ok := r.(*promrules.AlertingRule); ok {
		return ar.Labels(), ar.Annotations()
	}
	return r.Labels(), labels.EmptyLabels()
}

// matchesAny is the API's match[] filter: a rule matches when every
// matcher of one of the sets does.
func matchesAny(sets [][]*labels.Matcher, lbls labels.Labels) bool {
	if len(sets) == 0 {
		return true
	}
	for _, ms := range sets {
		ok := true
		for _, m := range ms {
			if !m.Matches(lbls.Get(m.Name)) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// apiAlerts converts a rule's active alerts.
func (h *Handler) apiAlerts(ctx context.Context, g *promrules.Group, rule *promrules.AlertingRule) []*apiAlert {
	stale := h.isStale(rule)
	var active []*promrules.Alert
	if v, ok := h.engine().(ruleViewer); ok {
		active = v.ActiveAlerts(ctx, g, rule)
	} else {
		active = rule.ActiveAlerts()
	}
	out := make([]*apiAlert, len(active))
	for i, a := range active {
		activeAt := a.ActiveAt
		out[i] = &apiAlert{
			Labels:      a.Labels,
			Annotations: a.Annotations,
			State:       a.State.String(),
			ActiveAt:    &activeAt,
			Value:       strconv.FormatFloat(a.Value, 'e', -1, 64),
			Stale:       stale,
		}
		if !a.KeepFiringSince.IsZero() {
			kfs := a.KeepFiringSince
			out[i].KeepFiringSince = &kfs
		}
	}
	return out
}

// acknowledger is implemented by notifiers whose Slack messages can be
// acknowledged (paged's, with slack_interactivity).
type acknowledger interface {
	Acknowledgements() []notifier.Acknowledgement
}

// handleAcknowledgements serves GET /api/v1/acknowledgements: the alert
// groups acknowledged from Slack whose acknowledgement holds, on this
// instance or its HA peer, in Prometheus's API envelope.
func (h *Handler) handleAcknowledgements(w http.ResponseWriter, r *http.Request) {
	acks := []notifier.Acknowledgement{}
	if a, ok := h.notifier.(acknowledger); ok {
		acks = a.Acknowledgements()
	}
	slices.SortFunc(acks, func(a, b notifier.Acknowledgement) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.Receiver, b.Receiver), cmp.Compare(a.GroupKey, b.GroupKey))
	})
	writeAPIData(w, map[string]any{"acknowledgements": acks})
}
