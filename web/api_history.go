package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/history"
)

// History is the event history GET /api/v1/history reads; a
// *history.Store.
type History interface {
	Query(ctx context.Context, q history.Query) (history.Page, error)
}

// DefaultHistoryLimit is the number of events GET /api/v1/history
// returns when the request sets no limit.
const DefaultHistoryLimit = 1000

// apiHistory is the data of GET /api/v1/history.
type apiHistory struct {
	Events []history.Event `json:"events"`
	// Next is the cursor of the events that did not fit in limit.
	Next string `json:"next,omitempty"`
}

// parseHistoryQuery reads the parameters of GET /api/v1/history: match[]
// (label matchers, any of them), alertname, type (repeated or comma
// separated), start and end (RFC 3339 or Unix seconds), limit and
// cursor. Every problem is an error naming the parameter.
func parseHistoryQuery(r *http.Request, web config.WebConfig) (history.Query, error) {
	var q history.Query
	if err := r.ParseForm(); err != nil {
		return q, fmt.Errorf("error parsing form values: %w", err)
	}
	for k := range r.Form {
		switch k {
		case "match[]", "alertname", "type", "start", "end", "limit", "cursor":
		default:
			return q, fmt.Errorf("unknown parameter %q (known: match[], alertname, type, start, end, limit, cursor)", k)
		}
	}
	var budget regexpBudget
	p := parser.NewParser(parser.Options{})
	for _, s := range r.Form["match[]"] {
		ms, err := p.ParseMetricSelector(s)
		if err != nil {
			return q, fmt.Errorf("invalid parameter \"match[]\": %w", err)
		}
		for _, m := range ms {
			msg := checkLabel(m.Name, m.Value, web)
			if msg == "" && (m.Type == labels.MatchRegexp || m.Type == labels.MatchNotRegexp) {
				msg = budget.add(m.Value, web)
			}
			if msg != "" {
				return q, fmt.Errorf("invalid parameter \"match[]\": %s", msg)
			}
		}
		q.Matchers = append(q.Matchers, ms)
	}
	if v := r.Form.Get("alertname"); v != "" {
		if msg := checkLabel(labels.AlertName, v, web); msg != "" {
			return q, fmt.Errorf("invalid parameter \"alertname\": %s", msg)
		}
		q.Alertname = v
	}
	for _, v := range r.Form["type"] {
		for _, t := range strings.Split(v, ",") {
			t = strings.TrimSpace(t)
			if !slices.Contains(history.Types, t) {
				return q, fmt.Errorf("invalid parameter \"type\": %s is not an event type (%s)", clip(t), strings.Join(history.Types, ", "))
			}
			q.Types = append(q.Types, t)
		}
	}
	var err error
	if q.Start, err = parseAPITime(r.Form.Get("start")); err != nil {
		return q, fmt.Errorf("invalid parameter \"start\": %w", err)
	}
	if q.End, err = parseAPITime(r.Form.Get("end")); err != nil {
		return q, fmt.Errorf("invalid parameter \"end\": %w", err)
	}
	if !q.Start.IsZero() && !q.End.IsZero() && q.End.Before(q.Start) {
		return q, errors.New("invalid parameter \"end\": end timestamp must not be before start time")
	}
	q.Limit = DefaultHistoryLimit
	if v := r.Form.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > history.MaxLimit {
			return q, fmt.Errorf("invalid parameter \"limit\": %s is not a whole number from 1 to %d", clip(v), history.MaxLimit)
		}
		q.Limit = n
	}
	if v := r.Form.Get("cursor"); v != "" {
		if err := history.ParseCursor(v); err != nil {
			return q, fmt.Errorf("invalid parameter \"cursor\": %w", err)
		}
		q.Cursor = v
	}
	return q, nil
}

// parseAPITime reads a time as Prometheus's API does: RFC 3339 or Unix
// seconds with an optional fraction. "" is the zero time.
func parseAPITime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1<<34 {
			return time.Time{}, fmt.Errorf("%s is out of range", clip(s))
		}
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(math.Round(frac*1e9))).UTC(), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("cannot parse %s to a valid timestamp (RFC 3339 or Unix seconds)", clip(s))
}

func (h *Handler) handleHistory(w http.ResponseWriter, r *http.Request) {
	if h.opts.History == nil {
		writeAPIError(w, http.StatusServiceUnavailable, errorUnavailable, errors.New("there is no event history: it is turned off (storage.history.enabled: false), or it could not be opened at start (paged's log says why)"))
		return
	}
	q, err := parseHistoryQuery(r, h.Config().Web)
	if err != nil {
		writeAPIError(w, http.StatusBadRequest, errorBadData, err)
		return
	}
	p, err := h.opts.History.Query(r.Context(), q)
	if err != nil {
		h.logger.Error("history query failed", "err", err)
		writeAPIError(w, http.StatusInternalServerError, errorInternal, errors.New("the history could not be read; paged's log says why"))
		return
	}
	out := apiHistory{Events: p.Events, Next: p.Next}
	if out.Events == nil {
		out.Events = []history.Event{}
	}
	writeAPIData(w, out)
}
