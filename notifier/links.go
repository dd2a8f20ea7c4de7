package notifier

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/alertmanager/template"

	"github.com/pagedhq/paged/rules"
)

// linkBuilder makes the links of a message: runbooks, silences and
// timelines.
type linkBuilder struct {
	external    *url.URL // paged's external URL, without a trailing slash
	runbookBase string   // runbook_base_url; empty means {external}/runbooks/
	// history: paged keeps an event history, so that /history has the
	// alert's timeline. Without one a History link would lead to a page
	// that says so: the messages go without.
	history bool
}

// Runbook resolves a runbook_url annotation: absolute URLs are kept,
// relative ones resolve against runbook_base_url, or paged's own
// /runbooks/ when that is empty. It returns "" for no or a broken link.
func (l linkBuilder) Runbook(ref string) string {
	baseStr := l.runbookBase
	if baseStr == "" {
		baseStr = l.external.String() + "/runbooks/"
	}
	base, err := url.Parse(baseStr)
	if err != nil {
		return ""
	}
	return rules.ResolveRunbook(ref, base)
}

// Silence links to paged's silence form with the alert's matchers filled
// in, in Alertmanager's UI format: /#/silences/new?filter={a="b",...}.
func (l linkBuilder) Silence(ls template.KV) string {
	names := make([]string, 0, len(ls))
	for k := range ls {
		names = append(names, k)
	}
	slices.Sort(names)
	parts := make([]string, 0, len(names))
	for _, k := range names {
		parts = append(parts, k+"="+strconv.Quote(ls[k]))
	}
	filter := "{" + strings.Join(parts, ",") + "}"
	return l.external.String() + "/#/silences/new?filter=" + url.QueryEscape(filter)
}

// History links to the alert's timeline in paged's UI:
// /history?alertname=…&fingerprint=… (the fingerprint is Alertmanager's,
// which the history's is); "" when paged keeps no history.
func (l linkBuilder) History(alertname, fingerprint string) string {
	if !l.history || alertname == "" || fingerprint == "" {
		return ""
	}
	return l.external.String() + "/history?alertname=" + url.QueryEscape(alertname) + "&fingerprint=" + url.QueryEscape(fingerprint)
}
