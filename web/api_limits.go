package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp/syntax"
	"strings"

	"github.com/prometheus/alertmanager/matcher/compat"
	amlabels "github.com/prometheus/alertmanager/pkg/labels"

	"github.com/pagedhq/paged/config"
)

// limitAPI guards the Alertmanager API v2 (mounted at /api/v2) with the
// web.max_* limits on labels and regular expressions, answering 400 with
// the reason before the API sees the request:
//
//   - POST /api/v2/alerts: at most web.max_labels_per_alert labels per
//     alert, names of at most web.max_label_name_bytes and values of at
//     most web.max_label_value_bytes.
//   - POST /api/v2/silences: as many matchers as an alert may have
//     labels, names and values within the same limits, regular
//     expressions within web.max_regexp_size.
//   - GET filters (filter, receiver, receiver_matchers on alerts, alert
//     groups and silences): names and values within the limits, and the
//     regular expressions of one request together within
//     web.max_regexp_size.
//
// A GET that matches regular expressions (or a page of the web UI:
// limitUIFilter) runs one at a time with the others, for at most web.regexp_query_timeout, and stops when its client
// leaves (serveRegexpQuery).
func (h *Handler) limitAPI(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		web := h.Config().Web
		path := strings.TrimSuffix(r.URL.Path, "/")
		switch r.Method {
		case http.MethodPost:
			hb, ok := r.Body.(*heldBody)
			if !ok {
				break
			}
			var msg string
			switch path {
			case "/api/v2/alerts":
				msg = checkPostedAlerts(hb.b, web)
			case "/api/v2/silences":
				msg = checkPostedSilence(hb.b, web)
			}
			if msg != "" {
				h.refuse(w, r, http.StatusBadRequest, limitReason(msg), msg)
				return
			}
		case http.MethodGet, http.MethodHead:
			regexps, msg := checkQuery(r, web)
			if msg != "" {
				h.refuse(w, r, http.StatusBadRequest, limitReason(msg), msg)
				return
			}
			if regexps {
				h.serveRegexpQuery(w, r, next, web)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// limitReason is the metric's reason for a message of the checks below.
func limitReason(msg string) string {
	if strings.Contains(msg, "web.max_regexp_size") {
		return "regexp"
	}
	return "labels"
}

// checkPostedAlerts checks the labels of a POST /api/v2/alerts body. A
// body that does not decode is left to the API to refuse.
func checkPostedAlerts(body []byte, web config.WebConfig) string {
	var alerts []struct {
		Labels map[string]string `json:"labels"`
	}
	if json.Unmarshal(body, &alerts) != nil {
		return ""
	}
	for i, a := range alerts {
		what := fmt.Sprintf("alert %d", i+1)
		if name, ok := a.Labels["alertname"]; ok && len(name) <= 128 {
			what = fmt.Sprintf("alert %d (alertname %q)", i+1, name)
		}
		if len(a.Labels) > web.MaxLabelsPerAlert {
			return fmt.Sprintf("%s has %d labels, more than web.max_labels_per_alert (%d)", what, len(a.Labels), web.MaxLabelsPerAlert)
		}
		for name, value := range a.Labels {
			if msg := checkLabel(name, value, web); msg != "" {
				return what + ": " + msg
			}
		}
	}
	return ""
}

// checkPostedSilence checks the matchers of a POST /api/v2/silences body.
func checkPostedSilence(body []byte, web config.WebConfig) string {
	var sil struct {
		Matchers []struct {
			Name    string `json:"name"`
			Value   string `json:"value"`
			IsRegex bool   `json:"isRegex"`
		} `json:"matchers"`
	}
	if json.Unmarshal(body, &sil) != nil {
		return ""
	}
	if len(sil.Matchers) > web.MaxLabelsPerAlert {
		return fmt.Sprintf("the silence has %d matchers, more than web.max_labels_per_alert (%d)", len(sil.Matchers), web.MaxLabelsPerAlert)
	}
	var rb regexpBudget
	for i, m := range sil.Matchers {
		var msg string
		if m.IsRegex {
			msg = checkName(m.Name, web)
			if msg == "" {
				msg = rb.add(m.Value, web)
			}
		} else {
			msg = checkLabel(m.Name, m.Value, web)
		}
		if msg != "" {
			return fmt.Sprintf("matcher %d of the silence: %s", i+1, msg)
		}
	}
	return ""
}

// checkQuery checks the filters of an API GET; regexps reports whether
// any of them is a regular expression.
func checkQuery(r *http.Request, web config.WebConfig) (regexps bool, msg string) {
	q := r.URL.Query()
	var rb regexpBudget
	longest := longestMatcher(web)
	for _, param := range []string{"filter", "receiver_matchers"} {
		for _, raw := range q[param] {
			if int64(len(raw)) > longest {
				return false, fmt.Sprintf("%s matcher of %d bytes is longer than web.max_label_name_bytes (%d) and web.max_label_value_bytes (%d) or web.max_regexp_size (%d) allow",
					param, len(raw), web.MaxLabelNameBytes, web.MaxLabelValueBytes, web.MaxRegexpSize)
			}
			m, err := compat.Matcher(raw, "api")
			if err != nil {
				continue // the API answers 400 with the parse error
			}
			re, msg := checkMatcher(m, &rb, web)
			if msg != "" {
				return false, param + ": " + msg
			}
			regexps = regexps || re
		}
	}
	if v := q.Get("receiver"); q.Has("receiver") {
		regexps = true
		if msg := rb.add(v, web); msg != "" {
			return false, "receiver: " + msg
		}
	}
	return regexps, ""
}

// longestMatcher is the longest a matcher can be within the limits: a
// name, an operator and a value, quoted with escapes. A longer one is not
// parsed (parsing compiles its regular expression).
func longestMatcher(web config.WebConfig) int64 {
	return web.MaxLabelNameBytes + 2*max(web.MaxLabelValueBytes, web.MaxRegexpSize) + 16
}

// checkMatcher holds a filter's matcher to the label limits, or, for a
// regular expression, to what is left of the request's budget.
func checkMatcher(m *amlabels.Matcher, rb *regexpBudget, web config.WebConfig) (regexp bool, msg string) {
	switch m.Type {
	case amlabels.MatchRegexp, amlabels.MatchNotRegexp:
		if msg := checkName(m.Name, web); msg != "" {
			return true, msg
		}
		return true, rb.add(m.Value, web)
	}
	return false, checkLabel(m.Name, m.Value, web)
}

// limitUIFilter holds the web UI's filter (a matcher list, ?filter={…})
// to the same limits as the API's, and runs a page that matches regular
// expressions as serveRegexpQuery runs an API GET.
func (h *Handler) limitUIFilter(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		web := h.Config().Web
		f := r.URL.Query().Get("filter")
		if f == "" {
			next.ServeHTTP(w, r)
			return
		}
		if int64(len(f)) > longestMatcher(web) {
			h.refuse(w, r, http.StatusBadRequest, "regexp", fmt.Sprintf("filter of %d bytes is longer than web.max_label_name_bytes (%d) and web.max_label_value_bytes (%d) or web.max_regexp_size (%d) allow",
				len(f), web.MaxLabelNameBytes, web.MaxLabelValueBytes, web.MaxRegexpSize))
			return
		}
		ms, err := amlabels.ParseMatchers(f)
		if err != nil {
			next.ServeHTTP(w, r) // the page shows the parse error
			return
		}
		var rb regexpBudget
		regexps := false
		for _, m := range ms {
			re, msg := checkMatcher(m, &rb, web)
			if msg != "" {
				h.refuse(w, r, http.StatusBadRequest, limitReason(msg), "filter: "+msg)
				return
			}
			regexps = regexps || re
		}
		if regexps {
			h.serveRegexpQuery(w, r, next, web)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func checkName(name string, web config.WebConfig) string {
	if int64(len(name)) > web.MaxLabelNameBytes {
		return fmt.Sprintf("a label name of %d bytes (%s) is longer than web.max_label_name_bytes (%d)", len(name), clip(name), web.MaxLabelNameBytes)
	}
	return ""
}

func checkLabel(name, value string, web config.WebConfig) string {
	if msg := checkName(name, web); msg != "" {
		return msg
	}
	if int64(len(value)) > web.MaxLabelValueBytes {
		return fmt.Sprintf("label %s has a value of %d bytes, longer than web.max_label_value_bytes (%d)", clip(name), len(value), web.MaxLabelValueBytes)
	}
	return ""
}

// clip quotes s, cut to 64 bytes, for a message.
func clip(s string) string {
	if len(s) > 64 {
		return fmt.Sprintf("%q…", s[:64])
	}
	return fmt.Sprintf("%q", s)
}

// regexpBudget adds up the regular expressions of one request against
// web.max_regexp_size: their patterns' bytes, and the instructions of
// their compiled programs, which may be twice as many (a{1000} is 7 bytes
// and a thousand instructions). Matching costs a program's size times the
// length of the text, so this bounds each label value's share.
type regexpBudget struct {
	bytes, insts int64
}

func (b *regexpBudget) add(pattern string, web config.WebConfig) string {
	b.bytes += int64(len(pattern))
	if b.bytes > web.MaxRegexpSize {
		return fmt.Sprintf("regular expressions of %d bytes in one request, more than web.max_regexp_size (%d)", b.bytes, web.MaxRegexpSize)
	}
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "" // the API answers with the parse error
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return ""
	}
	b.insts += int64(len(prog.Inst))
	if b.insts > 2*web.MaxRegexpSize {
		return fmt.Sprintf("regular expressions of %d instructions once compiled in one request, more than twice web.max_regexp_size (%d): write fewer or smaller repetitions", b.insts, 2*web.MaxRegexpSize)
	}
	return ""
}

// serveRegexpQuery runs an API GET that matches regular expressions: one
// at a time, within web.regexp_query_timeout, on a context that ends when
// the client leaves. The API checks the context between alerts (and
// between groups' alerts: Notifier.groups), so an abandoned or overlong
// query stops using the CPU. Its answer is held until it is complete, so
// that one cut short is answered with the reason instead.
func (h *Handler) serveRegexpQuery(w http.ResponseWriter, r *http.Request, next http.Handler, web config.WebConfig) {
	ctx, cancel := context.WithTimeout(r.Context(), web.RegexpQueryTimeout)
	defer cancel()
	select {
	case h.regexps <- struct{}{}:
		defer func() { <-h.regexps }()
	case <-ctx.Done():
		if r.Context().Err() != nil {
			return // the client left
		}
		w.Header().Set("Retry-After", "1")
		h.refuse(w, r, http.StatusServiceUnavailable, "regexp_timeout",
			fmt.Sprintf("other requests matching regular expressions ran for all of web.regexp_query_timeout (%v): retry later", web.RegexpQueryTimeout))
		return
	}
	rec := &heldResponse{header: http.Header{}, status: http.StatusOK}
	next.ServeHTTP(rec, r.WithContext(ctx))
	if ctx.Err() != nil {
		if r.Context().Err() != nil {
			return // the client left: no one to answer
		}
		h.refuse(w, r, http.StatusUnprocessableEntity, "regexp_timeout",
			fmt.Sprintf("matching the regular expressions took longer than web.regexp_query_timeout (%v): narrow the filter", web.RegexpQueryTimeout))
		return
	}
	rec.writeTo(w)
}

// heldResponse keeps a handler's answer until it is known to be complete.
type heldResponse struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (h *heldResponse) Header() http.Header { return h.header }

func (h *heldResponse) WriteHeader(code int) {
	if !h.wrote {
		h.status, h.wrote = code, true
	}
}

func (h *heldResponse) Write(p []byte) (int, error) {
	h.wrote = true
	return h.body.Write(p)
}

func (h *heldResponse) writeTo(w http.ResponseWriter) {
	for k, v := range h.header {
		w.Header()[k] = v
	}
	w.WriteHeader(h.status)
	_, _ = w.Write(h.body.Bytes())
}
