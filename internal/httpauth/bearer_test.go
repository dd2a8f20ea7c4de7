package httpauth

import (
	"net/http"
	"testing"
)

func TestBearerToken(t *testing.T) {
	for _, tc := range []struct {
		header string
		token  string
		ok     bool
	}{
		{"Bearer tok-1", "tok-1", true},
		{"bearer tok-1", "tok-1", true},
		{"BEARER tok-1", "tok-1", true},
		{"BeArEr tok-1", "tok-1", true},
		{"Bearer    tok-1", "tok-1", true},
		{"Bearer\ttok-1", "tok-1", true},
		{"Bearer\t  tok-1", "tok-1", true},
		{"  Bearer tok-1  ", "tok-1", true},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"Bearertok-1", "", false},
		{"Basic dTpw", "", false},
		{"tok-1", "", false},
		{"", "", false},
	} {
		h := http.Header{}
		if tc.header != "" {
			h.Set("Authorization", tc.header)
		}
		token, ok := BearerToken(h)
		if token != tc.token || ok != tc.ok {
			t.Errorf("BearerToken(%q) = %q, %v; want %q, %v", tc.header, token, ok, tc.token, tc.ok)
		}
	}
}

func TestCheckBearer(t *testing.T) {
	req := func(h string) *http.Request {
		r, _ := http.NewRequest(http.MethodPost, "http://x/", nil)
		r.Header.Set("Authorization", h)
		return r
	}
	if !CheckBearer(req("bearer s3cret"), "s3cret") {
		t.Error("lower-case scheme refused")
	}
	if CheckBearer(req("Bearer s3cre"), "s3cret") || CheckBearer(req("Bearer s3crett"), "s3cret") {
		t.Error("wrong token accepted")
	}
	if CheckBearer(req("Bearer "), "") {
		t.Error("empty token accepted for an empty want")
	}
}
