package server

import (
	"crypto/subtle"
	"net/http"
	"strings"
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
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(want)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="paged"`)
			http.Error(w, "unauthorized: this endpoint needs the bearer token of web.auth_token_file", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
