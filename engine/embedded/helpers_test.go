package embedded

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"

	"github.com/pagedhq/paged/simulator"
)

// serve starts h on a loopback listener for the test and returns host:port.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// startSim serves a simulator and returns it with its host:port.
func startSim(t *testing.T, opts simulator.Options) (*simulator.Simulator, string) {
	t.Helper()
	s, err := simulator.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s, serve(t, s.Handler())
}

// run starts e.Run for the test; the cleanup cancels it and checks that it
// returned cleanly. The returned stop does the same earlier.
func run(t *testing.T, e *Embedded) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("Run did not return 30s after its context ended")
		}
	}
	t.Cleanup(stop)
	return stop
}

// eventually polls check until it returns nil or the deadline passes. The
// scrapes are real HTTP requests on loopback, driven by Prometheus's own
// timers, so they are waited for rather than run in a synctest bubble.
func eventually(t *testing.T, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %v", timeout, err)
		}
		time.Sleep(100 * time.Millisecond) // waiting on real scrapes
	}
}

// query runs expr now through the Embedded's engine datasource.
func query(e *Embedded, expr string) (promql.Vector, error) {
	ds := e.Datasource(QueryOptions{})
	return ds.Query(context.Background(), expr, time.Now())
}

// errf joins formatted problems into one error, or nil.
func errf(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(problems, "\n"))
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
