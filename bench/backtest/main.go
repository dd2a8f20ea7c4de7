// Command backtest benchmarks `paged backtest` on the vLLM pack over days of
// 15-second data held by Debian's Prometheus:
//
//	go run ./bench/backtest            # 7 days, evaluation intervals 30s and 15s
//	go run ./bench/backtest -days 1 -evals 30s
//
// It records simulated vLLM servers (package simulator, a scenario
// timeline that saturates the KV cache, spikes TTFT, bursts errors and goes
// down now and then) every -scrape into TSDB blocks, one per day, starts
// Debian's prometheus on them, builds paged, and times the real command
// line `paged backtest --config paged.yaml --from ... --to ... --json
// --report report.html`, reading the queries sent from the JSON report.
// For comparison it times what the live engine's approach would cost over
// the same range, one instant query per rule and evaluation, on a sample
// of -instant-sample steps, and extrapolates.
//
// The data is cached in -dir between runs (delete it to regenerate).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/pagedhq/paged/rules"
	"github.com/pagedhq/paged/simulator"
)

func main() {
	var (
		days    = flag.Int("days", 7, "days of data")
		scrape  = flag.Duration("scrape", 15*time.Second, "scrape interval of the recorded data")
		servers = flag.Int("servers", 2, "simulated vLLM servers")
		evals   = flag.String("evals", "30s,15s", "evaluation intervals to backtest with, comma-separated")
		dir     = flag.String("dir", filepath.Join(os.TempDir(), "paged-backtest-bench"), "cache directory for the data and binaries")
		promBin = flag.String("prometheus", "/usr/bin/prometheus", "Prometheus binary")
		sample  = flag.Int("instant-sample", 240, "evaluation steps timed with instant queries for the comparison")
	)
	flag.Parse()
	log.SetFlags(0)
	root, err := repoRoot()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	data := filepath.Join(*dir, fmt.Sprintf("data-%dd-%s-%d", *days, *scrape, *servers))
	meta := filepath.Join(data, "range.json")
	var rng struct{ From, To time.Time }
	if b, err := os.ReadFile(meta); err == nil {
		if err := json.Unmarshal(b, &rng); err != nil {
			log.Fatal(err)
		}
		log.Printf("using cached data in %s", data)
	} else {
		rng.To = time.Now().UTC().Truncate(time.Hour)
		rng.From = rng.To.Add(-time.Duration(*days) * 24 * time.Hour)
		t0 := time.Now()
		n, err := generate(data, rng.From, rng.To, *scrape, *servers)
		if err != nil {
			log.Fatal(err)
		}
		log.Printf("generated %d samples in %s", n, time.Since(t0).Round(time.Second))
		b, _ := json.Marshal(rng)
		if err := os.WriteFile(meta, b, 0o644); err != nil {
			log.Fatal(err)
		}
	}

	paged := filepath.Join(*dir, "paged")
	build := exec.Command("go", "build", "-o", paged, "./cmd/paged")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		log.Fatal(err)
	}

	addr, err := freeAddr()
	if err != nil {
		log.Fatal(err)
	}
	promCfg := filepath.Join(*dir, "prometheus.yml")
	if err := os.WriteFile(promCfg, []byte("global: {}\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	prom := exec.Command(*promBin, "--config.file="+promCfg, "--storage.tsdb.path="+data,
		"--storage.tsdb.retention.time=100y", "--storage.tsdb.max-block-duration=1d",
		"--web.listen-address="+addr, "--log.level=warn")
	prom.Stderr = os.Stderr
	if err := prom.Start(); err != nil {
		log.Fatal(err)
	}
	defer func() { _ = prom.Process.Kill(); _ = prom.Wait() }()
	url := "http://" + addr
	if err := waitReady(url+"/-/ready", time.Minute); err != nil {
		log.Fatal(err)
	}
	pack := filepath.Join(root, "examples", "packs", "vllm", "vllm.rules.yaml")
	nrules, err := countAlerts(pack)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("Data: %d days of %s samples from %d simulated vLLM servers, %s .. %s, in Debian's %s.\n\n",
		*days, *scrape, *servers, rng.From.Format(time.RFC3339), rng.To.Format(time.RFC3339), promVersion(*promBin))
	// The embedded mode reads the same blocks: storage.path/metrics.
	emb := filepath.Join(*dir, "embedded")
	if err := os.MkdirAll(emb, 0o755); err != nil {
		log.Fatal(err)
	}
	_ = os.Remove(filepath.Join(emb, "metrics"))
	if err := os.Symlink(data, filepath.Join(emb, "metrics")); err != nil {
		log.Fatal(err)
	}
	fmt.Println("| evaluation interval | rules | evaluations | range queries | wall time (Prometheus 2.42) | instant queries the live engine's way | their time (extrapolated) | ratio | wall time (embedded TSDB, read-only) |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, ev := range strings.Split(*evals, ",") {
		interval, err := time.ParseDuration(strings.TrimSpace(ev))
		if err != nil {
			log.Fatal(err)
		}
		cfg := filepath.Join(*dir, "paged-"+ev+".yaml")
		if err := os.WriteFile(cfg, fmt.Appendf(nil, "global:\n  evaluation_interval: %s\ndatasource:\n  type: prometheus\n  prometheus:\n    url: %s\nrule_files: [%q]\n", ev, url, pack), 0o644); err != nil {
			log.Fatal(err)
		}
		report := filepath.Join(*dir, "report-"+ev+".html")
		rep, wall := runBacktest(paged, cfg, rng.From, rng.To, report)
		embCfg := filepath.Join(*dir, "paged-embedded-"+ev+".yaml")
		if err := os.WriteFile(embCfg, fmt.Appendf(nil, "global:\n  evaluation_interval: %s\ndatasource:\n  type: embedded\n  embedded:\n    scrape_configs: [{job_name: vllm, static_configs: [{targets: [\"127.0.0.1:8000\"]}]}]\nrule_files: [%q]\nstorage:\n  path: %s\n", ev, pack, emb), 0o644); err != nil {
			log.Fatal(err)
		}
		embRep, embWall := runBacktest(paged, embCfg, rng.From, rng.To, filepath.Join(*dir, "report-embedded-"+ev+".html"))
		if fmt.Sprint(embRep.Rules) != fmt.Sprint(rep.Rules) {
			log.Printf("note: embedded and Prometheus 2.42 reports differ (range selection changed in Prometheus 3):\n%v\n%v", embRep.Rules, rep.Rules)
		}
		instant, perStep := timeInstant(url, pack, rng.From, interval, *sample)
		steps := int(rng.To.Sub(rng.From)/interval) + 1
		est := time.Duration(float64(perStep) * float64(steps))
		fmt.Printf("| %s | %d | %d | %d | %s | %d | %s | %.0fx | %s |\n", ev, nrules, rep.Evaluations, rep.Queries,
			wall.Round(10*time.Millisecond), steps*nrules, est.Round(time.Second), est.Seconds()/wall.Seconds(), embWall.Round(10*time.Millisecond))
		var fired []string
		for _, r := range rep.Rules {
			if r.Error != "" {
				log.Fatalf("%s: %s", r.Name, r.Error)
			}
			if r.Fired > 0 {
				fired = append(fired, fmt.Sprintf("%s %d (%d notifications)", r.Name, r.Fired, r.Notifications))
			}
		}
		log.Printf("eval %s: report %s; instant sample: %d queries; fired: %s", ev, report, instant, strings.Join(fired, ", "))
	}
}

type report struct {
	Queries, Evaluations int
	Rules                []struct {
		Name          string
		Fired         int
		Notifications int
		Error         string
	}
}

// runBacktest times `paged backtest` with the HTML report and returns its
// JSON report.
func runBacktest(paged, cfg string, from, to time.Time, html string) (report, time.Duration) {
	cmd := exec.Command(paged, "backtest", "--config", cfg,
		"--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339), "--json", "--report", html)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		log.Fatalf("paged backtest --config %s: %v", cfg, err)
	}
	wall := time.Since(t0)
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		log.Fatalf("paged backtest output: %v", err)
	}
	return rep, wall
}

// generate records servers simulated vLLM servers every scrape over
// [from, to] into one TSDB block per day under dir.
func generate(dir string, from, to time.Time, scrape time.Duration, servers int) (int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	logger := slog.New(slog.DiscardHandler)
	type server struct {
		sim      *simulator.Simulator
		instance string
	}
	var sims []server
	for i := range servers {
		s, err := simulator.New(simulator.Options{Server: simulator.ServerVLLM, Seed: uint64(i + 1), Start: from, Now: func() time.Time { return from }})
		if err != nil {
			return 0, err
		}
		sims = append(sims, server{s, fmt.Sprintf("vllm-%d:8000", i)})
	}
	// Every six hours (shifted per server) one incident of 30 to 90
	// minutes; the rest of the time the server is healthy.
	incidents := []string{"kv-saturation", "ttft-spike", "error-burst", "preemption-storm", "fragmentation", "down", "overprovisioned", "ramp"}
	scenarioAt := func(i int, t time.Time) string {
		off := t.Sub(from) + time.Duration(i)*95*time.Minute
		slot := int(off / (6 * time.Hour))
		within := off % (6 * time.Hour)
		length := time.Duration(30+(slot*7+i*3)%4*20) * time.Minute
		if within >= 3*time.Hour && within < 3*time.Hour+length {
			return incidents[(slot+i)%len(incidents)]
		}
		return "steady"
	}
	current := make([]string, servers)
	st := labels.NewSymbolTable()
	total := 0
	for day := from; day.Before(to); day = day.Add(24 * time.Hour) {
		end := day.Add(24 * time.Hour)
		if end.After(to) {
			end = to.Add(time.Millisecond)
		}
		w, err := tsdb.NewBlockWriter(logger, dir, (24 * time.Hour).Milliseconds())
		if err != nil {
			return 0, err
		}
		for ts := day; ts.Before(end); ts = ts.Add(scrape) {
			app := w.AppenderV2(context.Background())
			add := func(l labels.Labels, v float64) error {
				total++
				_, err := app.Append(0, l, 0, ts.UnixMilli(), v, nil, nil, storage.AOptions{})
				return err
			}
			for i, s := range sims {
				if sc := scenarioAt(i, ts); sc != current[i] {
					if err := s.sim.SetScenarioAt(sc, ts); err != nil {
						return 0, err
					}
					current[i] = sc
				}
				var buf bytes.Buffer
				err := s.sim.WriteMetricsAt(&buf, ts)
				up := 1.0
				if errors.Is(err, simulator.ErrDown) {
					up = 0
				} else if err != nil {
					return 0, err
				}
				if err := add(labels.FromStrings("__name__", "up", "instance", s.instance, "job", "vllm"), up); err != nil {
					return 0, err
				}
				if up == 0 {
					continue
				}
				p, err := textparse.New(buf.Bytes(), "text/plain; version=0.0.4", st, textparse.ParserOptions{})
				if err != nil {
					return 0, err
				}
				for {
					et, err := p.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						return 0, err
					}
					if et != textparse.EntrySeries {
						continue
					}
					_, _, v := p.Series()
					var l labels.Labels
					p.Labels(&l)
					b := labels.NewBuilder(l)
					b.Set("instance", s.instance)
					b.Set("job", "vllm")
					if err := add(b.Labels(), v); err != nil {
						return 0, err
					}
				}
			}
			if err := app.Commit(); err != nil {
				return 0, err
			}
		}
		if _, err := w.Flush(context.Background()); err != nil {
			return 0, err
		}
		if err := w.Close(); err != nil {
			return 0, err
		}
	}
	return total, nil
}

// timeInstant times the live engine's way over sample steps from from:
// one instant query per alerting rule per step. It returns the queries
// sent and the time per step.
func timeInstant(url, pack string, from time.Time, interval time.Duration, sample int) (int, time.Duration) {
	f, err := rules.ReadFile(pack, rules.ParseOptions{})
	if err != nil {
		log.Fatal(err)
	}
	var exprs []string
	for _, g := range f.RuleGroups().Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				exprs = append(exprs, r.Expr)
			}
		}
	}
	c, err := api.NewClient(api.Config{Address: url})
	if err != nil {
		log.Fatal(err)
	}
	a := v1.NewAPI(c)
	n := 0
	t0 := time.Now()
	for k := range sample {
		ts := from.Add(time.Duration(k) * interval)
		for _, e := range exprs {
			if _, _, _, err := a.Query(context.Background(), e, ts); err != nil {
				log.Fatalf("instant query: %v", err)
			}
			n++
		}
	}
	return n, time.Since(t0) / time.Duration(sample)
}

func countAlerts(pack string) (int, error) {
	f, err := rules.ReadFile(pack, rules.ParseOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, g := range f.RuleGroups().Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				n++
			}
		}
	}
	return n, nil
}

func promVersion(bin string) string {
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		return "prometheus"
	}
	first, _, _ := strings.Cut(string(out), "\n")
	if i := strings.Index(first, " ("); i > 0 {
		first = first[:i]
	}
	return first
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func waitReady(url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %s", url, timeout)
}
