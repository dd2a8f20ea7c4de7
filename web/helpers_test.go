package web

import (
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/internal/testbin"
)

// idleEngine is an engine with no rules that is ready.
type idleEngine struct{}

func (idleEngine) RuleGroups() []*promrules.Group { return nil }
func (idleEngine) Ready() (bool, string)          { return true, "" }

// newTestHandler is the HTTP surface over the configuration extra (added
// to a remote datasource and an empty rule file), an engine with no rules and no notifier.
func newTestHandler(t testing.TB, extra string) *Handler {
	t.Helper()
	dir := t.TempDir()
	testbin.WriteFile(t, dir, "empty.rules.yaml", "groups: []\n")
	text := "datasource: {prometheus: {url: 'http://127.0.0.1:9090'}}\nrule_files: [empty.rules.yaml]\n" + extra
	cfg, err := config.Parse([]byte(text), filepath.Join(dir, "paged.yaml"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{
		Config:   func() *config.Config { return cfg },
		Engine:   idleEngine{},
		Reload:   func() error { return nil },
		Registry: prometheus.NewRegistry(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}
