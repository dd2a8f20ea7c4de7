package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/pagedhq/paged/engine"
)

func TestQueryableClassifiesErrors(t *testing.T) {
	db, err := tsdb.Open(t.TempDir(), nil, nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	kind := func(err error) engine.ErrorKind {
		t.Helper()
		var de *engine.DatasourceError
		if !errors.As(err, &de) {
			// Not wrapped by the datasource: the engine takes it as a
			// query error.
			return engine.KindQuery
		}
		return de.Kind
	}

	ok := engine.NewQueryable(promql.NewEngine(promql.EngineOpts{MaxSamples: 1000, Timeout: time.Minute}), db)
	v, err := ok.Query(context.Background(), "vector(3) * 2", time.Now())
	if err != nil || len(v) != 1 || v[0].F != 6 {
		t.Fatalf("vector(3)*2 = %v, %v", v, err)
	}
	if _, err := ok.Query(context.Background(), "sum(", time.Now()); err == nil || kind(err) != engine.KindQuery {
		t.Errorf("parse error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ok.Query(ctx, "vector(1)", time.Now()); err == nil || kind(err) != engine.KindUnavailable {
		t.Errorf("canceled query: %v", err)
	}
}

func TestUnavailableWrapping(t *testing.T) {
	if engine.Unavailable(nil) != nil {
		t.Fatal("Unavailable(nil) != nil")
	}
	base := errors.New("dial tcp: connection refused")
	err := engine.Unavailable(&engine.DatasourceError{Kind: engine.KindQuery, Err: base})
	var de *engine.DatasourceError
	if !errors.As(err, &de) || de.Kind != engine.KindUnavailable || !errors.Is(err, base) {
		t.Fatalf("re-wrapping: %#v", err)
	}
	if err.Error() != "datasource unavailable: dial tcp: connection refused" {
		t.Errorf("message = %q", err.Error())
	}
}
