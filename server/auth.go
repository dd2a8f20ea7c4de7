package server

import (
	"net/http"

	"github.com/pagedhq/paged/internal/httpauth"
)

// requireToken guards every mutating request (anything but GET, HEAD and
// OPTIONS) with the bearer token of web.auth_token_file, when one is set.
func (s *Server) requireToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			next.ServeHTTP(w, r)
			return
		}
		want := s.Config().Web.authToken
		if want == "" {
			next.ServeHTTP(w, r)
			return
		}
		if !httpauth.CheckBearer(r, want) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="paged"`)
			http.Error(w, "unauthorized: this endpoint needs the bearer token of web.auth_token_file", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
