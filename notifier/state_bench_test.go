package notifier

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/alertmanager/nflog"
	"github.com/prometheus/alertmanager/nflog/nflogpb"
)

// BenchmarkNflogDurable logs group notifications as the notify pipeline
// does, from many group flushes at once, each returning once its entry is
// fsynced, and reports the fsyncs per notification: concurrent flushes
// share them (group commit).
func BenchmarkNflogDurable(b *testing.B) {
	for _, flushes := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("flushes=%d", flushes), func(b *testing.B) {
			n, err := New(Options{Config: mustConfig(b, fmt.Sprintf(tinyRoute, "x")+"receivers: [{name: x}]\n"), StoragePath: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer n.alerts.Close()
			defer n.closeState()
			nfl := durableNflog{log: n.nflog, state: n.nflogSt, logger: n.logger}
			recv := &nflogpb.Receiver{GroupName: "oncall", Integration: "slack"}
			before := n.nflogSt.disk.Stats()
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for range flushes {
				wg.Go(func() {
					for {
						i := next.Add(1)
						if i > int64(b.N) {
							return
						}
						store := nflog.NewStore(nil)
						store.SetStr(storeTS, "1700000000.000100")
						store.SetStr(storeChannel, "CALERTS")
						gkey := fmt.Sprintf(`{}:{alertname="Group%d"}`, i%5000)
						if err := nfl.Log(recv, gkey, []uint64{uint64(i)}, nil, nil, store, 0); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			st := n.nflogSt.disk.Stats()
			b.ReportMetric(float64(st.Fsyncs-before.Fsyncs)/float64(b.N), "fsyncs/notification")
			b.ReportMetric(float64(st.Bytes-before.Bytes)/float64(b.N), "bytes/notification")
		})
	}
}
