// Package webtest is the harness that web's tests and server's tests share:
// a temp dir holding paged.yaml and the files it names (Site), a rule
// engine on Prometheus's own rule manager (Engine), a request helper
// (Call), the files of a server with a web configuration file (WebFiles)
// and the rule files and paged.yaml the tests start from.
//
// It is for tests only: no production package imports it. It does not
// import server (server's tests import it) and does not need web: a Site
// serves any http.Handler.
package webtest

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

// Site is a test server's configuration and surface: the temp dir with
// paged.yaml and the files it names, the engine the server built, the
// logs, and the handler requests go to. Test servers embed it and set
// Engine and HTTP once they are built.
type Site struct {
	Dir    string              // paged.yaml and the files it names
	Logs   *testbin.SyncBuffer // what Logger wrote
	Logger *slog.Logger        // debug level, into Logs
	Engine *Engine
	HTTP   http.Handler
}

// NewSite writes config as paged.yaml, and files, into a new temp dir.
func NewSite(t testing.TB, config string, files map[string]string) *Site {
	t.Helper()
	logs := &testbin.SyncBuffer{}
	return &Site{
		Dir:    ConfigDir(t, config, files),
		Logs:   logs,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
}

// ConfigDir writes config as paged.yaml, and files (by path relative to
// it), into a new temp dir and returns the dir.
func ConfigDir(t testing.TB, config string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		testbin.WriteFile(t, dir, name, content)
	}
	testbin.WriteFile(t, dir, "paged.yaml", config)
	return dir
}

// ConfigFile is the path of paged.yaml.
func (s *Site) ConfigFile() string { return filepath.Join(s.Dir, "paged.yaml") }

// Rewrite replaces the configuration file.
func (s *Site) Rewrite(t testing.TB, config string) {
	t.Helper()
	testbin.WriteFile(t, s.Dir, "paged.yaml", config)
}

// EvalAll evaluates every group once at now, as the engine's loop would.
func (s *Site) EvalAll(now time.Time) {
	for _, g := range s.Engine.RuleGroups() {
		g.Eval(context.Background(), now)
	}
}

// Do serves one request and returns the status and body.
func (s *Site) Do(t testing.TB, method, path string, header http.Header) (int, string) {
	t.Helper()
	rec := s.Record(t, method, path, header)
	return rec.Code, rec.Body.String()
}

// Record serves one request and returns the whole response.
func (s *Site) Record(t testing.TB, method, path string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	s.HTTP.ServeHTTP(rec, req)
	return rec
}
