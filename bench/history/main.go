// Command history measures the event history (package history) at the
// size the issue sets: 1,000,000 events over 7 days in one history.db.
//
//	go run ./bench/history                       (1,000,000 events, 7 rounds of each query)
//	go run ./bench/history -events 200000 -rounds 3
//	go run ./bench/history -keep /tmp/h           (keep the file, to open it with sqlite3)
//	go run ./bench/history -now 2026-12-04T15:37:00Z -json r.json   (the same events and report, to compare builds)
//
// It writes the events through history.Store as paged does (batched
// commits, WAL, no fsync per event), then times, one at a time:
//
//   - the query of one alert (one fingerprint) over 7 days, as the UI's
//     timeline and GET /api/v1/history?match[]= ask it: the first page of
//     1,000 events (the API's default limit) and every page through the
//     cursor, for a typical alert (the median fingerprint) and for the
//     noisiest one;
//   - the 7-day report (report.Build), what paged report --from -7d does
//     against the storage directory;
//   - the write of one evaluation in which 10,000 alerts change state (a
//     storm: 10,000 events and their commit), and of one in which 100 and
//     10 do: CPU time (getrusage, the writer goroutine and the garbage
//     collector included) and bytes written (write system calls: the WAL,
//     and the checkpoints that copy it into the file); an evaluation of
//     10,000 alerts that stay firing writes no event at all.
//
// The durable alert state's cost for the same 10,000 alerts is measured
// by the engine's BenchmarkStateCommit10k, and the engine's share of the
// history's (turning transitions into events) by BenchmarkHistoryEvents10k
// (see RESULTS.md for the commands); the table puts them side by side.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pagedhq/paged/history"
	"github.com/pagedhq/paged/report"
)

func main() {
	var (
		events = flag.Int("events", 1_000_000, "events to write")
		rounds = flag.Int("rounds", 7, "rounds of each query")
		keep   = flag.String("keep", "", "write the history in this directory and keep it")
		prof   = flag.String("cpuprofile", "", "write a CPU profile of each phase to this prefix: .write, .report, .storm")
		at     = flag.String("now", "", "the end of the 7 days (RFC 3339; default now): the same time writes the same events")
		out    = flag.String("json", "", "write the 7-day report to this file as JSON, to compare builds")
	)
	flag.Parse()
	dir := *keep
	if dir == "" {
		d, err := os.MkdirTemp("", "paged-history-bench")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	path := filepath.Join(dir, history.FileName)
	now := time.Now().UTC().Truncate(time.Second)
	if *at != "" {
		t, err := time.Parse(time.RFC3339, *at)
		if err != nil {
			log.Fatal(err)
		}
		now = t.UTC()
	}
	from := now.Add(-7 * 24 * time.Hour)
	s, err := history.Open(history.Options{Path: path, MaxBytes: 1 << 40, PruneInterval: 1000 * time.Hour})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	fmt.Printf("# history: %d events over 7 days, %s, %d CPUs, %s\n\n", *events, runtime.Version(), runtime.NumCPU(), now.Format(time.RFC3339))
	// Write.
	stop := profile(*prof, "write")
	cpu0, t0 := cpuTime(), time.Now()
	fps, written := generate(s, *events, from, now)
	if err := s.Flush(ctx); err != nil {
		log.Fatal(err)
	}
	cpuW, wallW := cpuTime()-cpu0, time.Since(t0)
	stop()
	size := fileSize(path)
	fmt.Printf("| what | figure |\n|---|---:|\n")
	fmt.Printf("| events written | %d in %.1f s wall, %.1f s CPU: %.0f events/s, %.1f µs CPU per event |\n", written, wallW.Seconds(), cpuW.Seconds(),
		float64(written)/wallW.Seconds(), cpuW.Seconds()*1e6/float64(written))
	fmt.Printf("| file with WAL | %.1f MiB, %.0f bytes per event |\n", float64(size)/(1<<20), float64(size)/float64(written))

	// One alert over 7 days.
	type fpCount struct {
		fp string
		n  int
	}
	var counts []fpCount
	for fp, n := range fps {
		counts = append(counts, fpCount{fp, n})
	}
	slices.SortFunc(counts, func(a, b fpCount) int { return b.n - a.n })
	for _, c := range []struct {
		name string
		fc   fpCount
	}{{"typical alert (median fingerprint)", counts[len(counts)/2]}, {"noisiest alert", counts[0]}} {
		var first, all []time.Duration
		var n, pages int
		for range *rounds {
			t := time.Now()
			p, err := s.Query(ctx, history.Query{Fingerprint: c.fc.fp, Start: from, End: now, Limit: 1000})
			if err != nil {
				log.Fatal(err)
			}
			first = append(first, time.Since(t))
			t = time.Now()
			q := history.Query{Fingerprint: c.fc.fp, Start: from, End: now, Limit: history.MaxLimit}
			n, pages = 0, 0
			for {
				p, err = s.Query(ctx, q)
				if err != nil {
					log.Fatal(err)
				}
				n += len(p.Events)
				pages++
				if p.Next == "" {
					break
				}
				q.Cursor = p.Next
			}
			all = append(all, time.Since(t))
		}
		fmt.Printf("| one alert over 7 days, %s: first 1,000 events | median %s (range %s–%s) |\n", c.name, ms(median(first)), ms(slices.Min(first)), ms(slices.Max(first)))
		fmt.Printf("| same, all its %d events (%d pages of ≤ 10,000) | median %s (range %s–%s) |\n", n, pages, ms(median(all)), ms(slices.Min(all)), ms(slices.Max(all)))
	}

	// The 7-day report, as paged report --storage.path reads it: a
	// read-only handle beside the writer.
	ro, err := history.OpenReadOnly(path)
	if err != nil {
		log.Fatal(err)
	}
	defer ro.Close()
	var reps []time.Duration
	var cpus []time.Duration
	var r *report.Report
	stop = profile(*prof, "report")
	for range *rounds {
		c, t := cpuTime(), time.Now()
		r, err = report.Build(ctx, report.Options{From: from, To: now}, ro)
		if err != nil {
			log.Fatal(err)
		}
		reps, cpus = append(reps, time.Since(t)), append(cpus, cpuTime()-c)
	}
	stop()
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			log.Fatal(err)
		}
		if err := errors.Join(r.WriteJSON(f), f.Close()); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("| 7-day report (%d events read, %d pages, %d flapping) | median %s wall (range %s–%s), %s CPU |\n", r.Events, r.Pages, len(r.Flapping),
		ms(median(reps)), ms(slices.Min(reps)), ms(slices.Max(reps)), ms(median(cpus)))

	// Evaluations in which alerts change state: a storm of 10,000, and
	// the few of most evaluations that change anything.
	stop = profile(*prof, "storm")
	for _, n := range []int{10_000, 100, 10} {
		cpu, written := evaluations(ctx, s, n, *rounds, now)
		fmt.Printf("| one evaluation where %s alerts change state: %s events, one commit | median %s CPU (range %s–%s); %.0f KiB written (mean; median %.0f KiB) |\n",
			thousands(n), thousands(n), ms(median(cpu)), ms(slices.Min(cpu)), ms(slices.Max(cpu)), mean(written)/1024, float64(median(written))/1024)
	}
	stop()
	fmt.Printf("| one evaluation where 10,000 alerts stay firing | no event, no write |\n")
	if err := s.Close(); err != nil {
		log.Fatal(err)
	}
}

// evaluations records rounds evaluations' events of n alerts changing
// state (firing, then resolved, and so on), each committed as the engine
// does before its notifications, and returns the CPU each took
// (getrusage: the writer's goroutine and the garbage collector included)
// and the bytes paged wrote for it (write system calls: the WAL, and the
// checkpoints that copy it into the file when one falls in the round).
func evaluations(ctx context.Context, s *history.Store, n, rounds int, now time.Time) ([]time.Duration, []int64) {
	var (
		cpu     []time.Duration
		written []int64
	)
	for i := range rounds {
		evs := make([]history.Event, n)
		at := now.Add(time.Duration(i) * time.Second)
		typ := history.TypeFiring
		if i%2 == 1 {
			typ = history.TypeResolved
		}
		for j := range evs {
			evs[j] = history.Event{Time: at, Type: typ,
				Labels:  map[string]string{"alertname": "Many", "server": fmt.Sprintf("s%05d", j), "model_name": "llama", "severity": "warning"},
				Details: history.Details(map[string]any{"value": j%100 + 1, "active_at": at.Format(time.RFC3339Nano), "group": "many"})}
		}
		c, w := cpuTime(), bytesWritten()
		s.Record(evs...)
		if err := s.Flush(ctx); err != nil {
			log.Fatal(err)
		}
		cpu, written = append(cpu, cpuTime()-c), append(written, bytesWritten()-w)
	}
	return cpu, written
}

// bytesWritten is what the process handed to write system calls
// (/proc/self/io wchar).
func bytesWritten() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		log.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				log.Fatal(err)
			}
			return n
		}
	}
	log.Fatal("no wchar in /proc/self/io")
	return 0
}

// generate writes about n events over [from, to): alert cycles of 2,000
// label sets of 200 alert names, the noisier ones more often (Zipf):
// pending, firing, a notification, half the time an acknowledgement,
// resolved and the resolved notification; and a silence now and then.
func generate(s *history.Store, n int, from, to time.Time) (map[string]int, int) {
	rng := rand.New(rand.NewPCG(1, 2))
	const sets = 2000
	type alert struct {
		labels map[string]string
		fp     string
		group  string
	}
	alerts := make([]alert, sets)
	for i := range alerts {
		ls := map[string]string{"alertname": fmt.Sprintf("Alert%03d", i%200), "instance": fmt.Sprintf("gpu-%04d:8000", i),
			"job": "vllm", "severity": []string{"warning", "critical"}[i%2], "model_name": "meta-llama/Llama-3.1-8B-Instruct"}
		alerts[i] = alert{labels: ls, fp: history.Fingerprint(ls), group: fmt.Sprintf(`{}:{alertname=%q, instance=%q}`, ls["alertname"], ls["instance"])}
	}
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.1, 20, sets-1)
	counts := map[string]int{}
	// Hour by hour, the events in time order as paged records them.
	const slices = 7 * 24
	perSlice := n/slices/5 + 1 // about 5.6 events a cycle: a little over n
	written := 0
	for h := 0; h < slices && written < n; h++ {
		var evs []history.Event
		for range perSlice {
			a := alerts[zipf.Uint64()]
			at := from.Add(time.Duration(h)*time.Hour + time.Duration(rng.Int64N(int64(time.Hour))))
			details := history.Details(map[string]any{"value": rng.Float64(), "active_at": at.Format(time.RFC3339Nano), "group": "vllm"})
			notif := func(t time.Time, firing int) history.Event {
				return history.Event{Time: t, Type: history.TypeNotification, Labels: a.labels, Fingerprint: a.fp, GroupKey: a.group,
					Receiver: "oncall", Integration: "slack", Outcome: history.OutcomeSent,
					Details: history.Details(map[string]any{"firing": firing, "resolved": 1 - firing, "slack_channel": "C0123", "slack_ts": "1772366702.000100",
						"alerts": []map[string]string{{"fingerprint": a.fp, "alertname": a.labels["alertname"], "status": map[int]string{1: "firing", 0: "resolved"}[firing]}}})}
			}
			fire := at.Add(time.Minute)
			end := fire.Add(time.Duration(rng.IntN(30)+1) * time.Minute)
			cycle := []history.Event{
				{Time: at, Type: history.TypePending, Labels: a.labels, Details: details},
				{Time: fire, Type: history.TypeFiring, Labels: a.labels, Details: details},
				notif(fire.Add(time.Second), 1),
			}
			if rng.IntN(2) == 0 {
				cycle = append(cycle, history.Event{Time: fire.Add(time.Duration(rng.IntN(600)) * time.Second), Type: history.TypeAck, GroupKey: a.group,
					Receiver: "oncall", Integration: "slack", Outcome: history.OutcomeAcknowledged, User: "ana"})
			}
			cycle = append(cycle, history.Event{Time: end, Type: history.TypeResolved, Labels: a.labels, Details: details}, notif(end.Add(time.Second), 0))
			if rng.IntN(50) == 0 {
				cycle = append(cycle, history.Event{Time: at, Type: history.TypeSilence, Alertname: a.labels["alertname"], Outcome: history.OutcomeCreated, User: "bob",
					Details: []byte(fmt.Sprintf(`{"silenceCreated":{"silence":{"id":"s%d-%d","startsAt":%q,"endsAt":%q,"createdBy":"bob","comment":"maintenance"}}}`,
						h, len(evs), at.Format(time.RFC3339), at.Add(2*time.Hour).Format(time.RFC3339)))})
			}
			for _, e := range cycle {
				if e.Type != history.TypeAck && e.Type != history.TypeSilence {
					counts[a.fp]++
				}
			}
			evs = append(evs, cycle...)
		}
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].Time.Before(evs[j].Time) })
		s.Record(evs...)
		written += len(evs)
		// Let the writer keep up: the queue is bounded.
		if err := s.Flush(context.Background()); err != nil {
			log.Fatal(err)
		}
	}
	return counts, written
}

// profile starts a CPU profile of one phase in prefix.phase; the function
// it returns stops it. No prefix, no profile.
func profile(prefix, phase string) func() {
	if prefix == "" {
		return func() {}
	}
	f, err := os.Create(prefix + "." + phase)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		log.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func fileSize(path string) int64 {
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

func median[T time.Duration | int64](ds []T) T {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// thousands writes n with a comma between thousands, as the tables do.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func mean(ns []int64) float64 {
	var sum int64
	for _, n := range ns {
		sum += n
	}
	return float64(sum) / float64(len(ns))
}

func ms(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.0f ms", math.Round(float64(d)/1e6))
}
