// Package httpauth reads the credentials of an Authorization header, for
// the server's and the notifier's token checks.
package httpauth

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// BearerToken returns the token of an "Authorization: Bearer <token>"
// header. The scheme is case-insensitive and may be followed by more than
// one space or tab (RFC 7235, section 2.1); surrounding whitespace is not
// part of the token. ok is false when the header is missing, uses another
// scheme or carries no token.
func BearerToken(h http.Header) (token string, ok bool) {
	v := strings.TrimSpace(h.Get("Authorization"))
	i := strings.IndexAny(v, " \t")
	if i < 0 || !strings.EqualFold(v[:i], "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(v[i:])
	return token, token != ""
}

// CheckBearer reports whether r carries the bearer token want, comparing in
// constant time. An empty want matches nothing.
func CheckBearer(r *http.Request, want string) bool {
	got, ok := BearerToken(r.Header)
	return ok && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
