package notifier

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pagedhq/paged/rules"
)

// BenchmarkFlush hands alerts to the notifier in batches of 100, each
// alert its own group, with a durable notification log, and waits for
// every notification to reach a webhook in this process: one op is one
// notification, from Notify through dispatch, the pipeline and the
// request. Allocations per op are the steadier figure; the time includes
// the receiving server's.
func BenchmarkFlush(b *testing.B) {
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got.Add(1)
	}))
	defer srv.Close()
	conf := fmt.Sprintf(`
route:
  receiver: hook
  group_by: [alertname, id]
  group_wait: 1ms
  group_interval: 1h
  repeat_interval: 1h
receivers:
  - name: hook
    webhook_configs:
      - url: %s/hook
`, srv.URL)
	n := start(b, conf, Options{StoragePath: b.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	const batch = 100
	id := 0
	before := n.nflogSt.disk.Stats()
	b.ReportAllocs()
	b.ResetTimer()
	for sent := 0; sent < b.N; {
		k := min(batch, b.N-sent)
		alerts := make([]*rules.Alert, k)
		for i := range alerts {
			alerts[i] = firing("KVCacheHigh", "id", fmt.Sprint(id), "severity", "warning")
			id++
		}
		n.Notify(context.Background(), alerts)
		sent += k
	}
	deadline := time.Now().Add(time.Minute + time.Duration(b.N)*time.Millisecond)
	for got.Load() < int64(b.N) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d notifications arrived", got.Load(), b.N)
		}
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	// The last flushes log their notifications after the requests.
	for n.nflogSt.disk.Stats().Records-before.Records < int64(b.N) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d notifications logged", n.nflogSt.disk.Stats().Records-before.Records, b.N)
		}
		time.Sleep(time.Millisecond)
	}
	b.ReportMetric(float64(n.nflogSt.disk.Stats().Fsyncs-before.Fsyncs)/float64(b.N), "fsyncs/op")
	started, _ := n.flushers.size()
	b.ReportMetric(float64(started)/float64(b.N), "goroutines/op")
}
