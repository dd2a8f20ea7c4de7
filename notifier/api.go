package notifier

import (
	"net/http"
	"net/url"

	"github.com/pagedhq/paged/internal/httpauth"
)

// APIHandler serves Alertmanager's API v2 over the notifier's own state:
// silences (GET/POST /api/v2/silences, GET/DELETE /api/v2/silence/{id}),
// alerts (GET/POST /api/v2/alerts), alert groups, receivers and status, so
// amtool --alertmanager.url works against paged. Paths are absolute: mount
// the handler at /api/v2/ without stripping the prefix. When
// Options.AuthToken is set, every request that changes state needs
// "Authorization: Bearer <token>" (the scheme in any case).
func (n *Notifier) APIHandler() http.Handler {
	h := n.silenceChangesDurable(n.api.Handler)
	token := n.opts.AuthToken
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" && r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions {
			if !httpauth.CheckBearer(r, token) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="paged"`)
				http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

func parseURL(s string) (*url.URL, error) { return url.Parse(s) }
