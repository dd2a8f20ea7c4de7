package backtest_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/config"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/backtest"
)

// TestRemoteErrorsLeakNoSecret: credentials in the URL or http_config
// never appear in errors, whether the server refuses, fails or is absent.
func TestRemoteErrorsLeakNoSecret(t *testing.T) {
	const secret = "s3cr3t-t0ken"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		// A server that echoes the request's credentials back.
		_, _ = w.Write([]byte(`{"status":"error","errorType":"unavailable","error":"` + r.Header.Get("Authorization") + `"}`))
	}))
	defer srv.Close()
	for _, o := range []engine.RemoteOptions{
		{URL: strings.Replace(srv.URL, "http://", "http://user:"+secret+"@", 1)},
		{URL: "http://user:" + secret + "@127.0.0.1:1"},
		{URL: srv.URL + "?token=" + secret},
		{URL: srv.URL, HTTPConfig: config.HTTPClientConfig{BasicAuth: &config.BasicAuth{Username: "u", Password: config.Secret(secret)}}},
	} {
		r, err := backtest.NewRemote(o)
		if err != nil {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("NewRemote error leaks the secret: %v", err)
			}
			continue
		}
		if strings.Contains(r.String(), secret) {
			t.Errorf("String() leaks the secret: %s", r)
		}
		_, err = r.QueryRange(context.Background(), "up", time.Unix(0, 0), time.Unix(60, 0), 15*time.Second)
		if err == nil {
			t.Fatalf("%s: query succeeded against a failing server", r)
		}
		t.Logf("%s: %v", r, err)
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), base64.StdEncoding.EncodeToString([]byte("u:"+secret))) {
			t.Errorf("error leaks the secret: %v", err)
		}
		if !strings.Contains(err.Error(), "503") && !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("error does not say what happened: %v", err)
		}
	}
	if _, err := backtest.NewRemote(engine.RemoteOptions{URL: "ftp://user:" + secret + "@host"}); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("bad scheme: err %v", err)
	}
}
