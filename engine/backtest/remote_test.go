package backtest_test

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/backtest"
	"github.com/pagedhq/paged/internal/testbin"
)

// writeOpenMetrics dumps every sample of db in [mint, maxt] as OpenMetrics
// text, series after series, for promtool's block importer.
func writeOpenMetrics(t *testing.T, db *tsdb.DB, mint, maxt int64, path string) {
	t.Helper()
	q, err := db.Querier(mint, maxt)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	ss := q.Select(context.Background(), true, nil, labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+"))
	lastName := ""
	for ss.Next() {
		s := ss.At()
		name := s.Labels().Get("__name__")
		if name != lastName {
			fmt.Fprintf(w, "# TYPE %s unknown\n", name)
			lastName = name
		}
		var parts []string
		s.Labels().Range(func(l labels.Label) {
			if l.Name != "__name__" {
				parts = append(parts, fmt.Sprintf("%s=%q", l.Name, l.Value))
			}
		})
		sort.Strings(parts)
		it := s.Iterator(nil)
		for it.Next() == chunkenc.ValFloat {
			ts, v := it.At()
			if math.IsNaN(v) {
				continue
			}
			fmt.Fprintf(w, "%s{%s} %v %.3f\n", name, strings.Join(parts, ","), v, float64(ts)/1000)
		}
	}
	if err := ss.Err(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(w, "# EOF")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRemoteMatchesLocal imports the recording into Debian's Prometheus
// (promtool tsdb create-blocks-from openmetrics), backtests through its
// query_range API with ranges split into chunks of 40 points, and
// requires the same firing periods as the local PromQL engine over the
// same samples, with the number of range queries the chunking implies.
//
// The rules compared are over gauges: Prometheus 2.42 (Debian) selects
// ranges closed on the left where Prometheus 3 (our library) selects them
// open, so rate() over samples exactly on the range boundary may differ
// between the two; gauges read the same.
func TestRemoteMatchesLocal(t *testing.T) {
	promtool := testbin.Require(t, "promtool")
	prom := testbin.Require(t, "prometheus")
	start := time.Now().Add(-2 * time.Hour).Truncate(time.Minute)
	span := 50 * time.Minute
	db := record(t, t.TempDir(), start, span, 5*time.Second, kvTimeline)
	defer db.Close()

	dir := t.TempDir()
	om := filepath.Join(dir, "data.om")
	writeOpenMetrics(t, db, start.UnixMilli(), start.Add(span).UnixMilli(), om)
	data := filepath.Join(dir, "data")
	if out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", om, data).CombinedOutput(); err != nil {
		t.Fatalf("promtool: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte("global: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := testbin.FreeAddr(t)
	p := testbin.Start(t, prom, dir, addr, "/-/ready",
		"--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+data,
		"--storage.tsdb.retention.time=100y", "--web.listen-address="+addr, "--log.level=warn")

	remote, err := backtest.NewRemote(engine.RemoteOptions{URL: p.URL})
	if err != nil {
		t.Fatal(err)
	}
	pack := filepath.Join(testbin.RepoRoot(t), "examples", "packs", "vllm", "vllm.rules.yaml")
	opts := backtest.Options{
		RuleFiles:          []string{writeFile(t, t.TempDir(), "fast.rules.yaml", fastRules), pack},
		From:               start,
		To:                 start.Add(span),
		EvaluationInterval: 30 * time.Second,
		Rules:              regexp.MustCompile(`^(KVCacheHigh|QueueWaiting|VLLMKVCacheSaturated|VLLMQueueBacklog)$`),
		MaxPoints:          40,
	}
	opts.Source = remote
	got, err := backtest.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Source = backtest.NewQueryable(newPromQL(), db)
	want, err := backtest.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got.Rules {
		if r.Error != "" {
			t.Errorf("%s: %s", r.Name, r.Error)
		}
	}
	g, w := backtestSpans(got), backtestSpans(want)
	if len(w) < 4 {
		t.Fatalf("local backtest fired only %v", w)
	}
	if fmt.Sprint(g) != fmt.Sprint(w) {
		t.Errorf("remote:\n%v\nlocal:\n%v", g, w)
	}
	// One range query per rule and 40 steps: 15s over 50m is 200 or 201
	// steps (5 or 6 queries), 30s 100 or 101 (3).
	wantQ := 0
	for _, r := range got.Rules {
		if r.Evaluations < 100 {
			t.Errorf("%s: %d evaluations over 50m", r.Name, r.Evaluations)
		}
		wantQ += (r.Evaluations + 39) / 40
	}
	if got.Queries != wantQ || wantQ < 16 {
		t.Errorf("remote backtest sent %d queries, want %d", got.Queries, wantQ)
	}
	t.Logf("%d firing periods agree over %d queries", len(g), got.Queries)
}
