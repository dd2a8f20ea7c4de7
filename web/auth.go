package web

import (
	"net/http"

	"github.com/pagedhq/paged/internal/httpauth"
)

// requireToken guards every mutating request (anything but GET, HEAD and
// OPTIONS) with the bearer token of web.auth_token_file, when one is set,
// before any of the request's body is read.
// With basic_auth_users in the web configuration file, a request that
// passed basic auth needs no token.
func (h *Handler) requireToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			next.ServeHTTP(w, r)
			return
		}
		if r.URL.Path == slackInteractionsPath {
			next.ServeHTTP(w, r) // signed by Slack; checked by the notifier
			return
		}
		want := h.Config().Web.AuthToken()
		if want == "" {
			next.ServeHTTP(w, r)
			return
		}
		// A request carries one Authorization header: one that passed
		// the web configuration's basic auth cannot also carry the
		// token, and is trusted to change state.
		if !httpauth.CheckBearer(r, want) && !h.passedBasicAuth(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="paged"`)
			leaveBody(w, r) // unread
			http.Error(w, "unauthorized: this endpoint needs the bearer token of web.auth_token_file", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
