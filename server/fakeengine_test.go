package server

import (
	"testing"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/web/webtest"
)

// managerFactory returns an EngineFactory that builds a webtest.Engine
// (Prometheus's own rule manager over a local TSDB) and records it.
func managerFactory(t testing.TB, built **webtest.Engine) EngineFactory {
	return func(cfg *config.Config, deps Deps) (Engine, error) {
		e := webtest.NewEngine(t, deps.Logger)
		*built = e
		return e, nil
	}
}
