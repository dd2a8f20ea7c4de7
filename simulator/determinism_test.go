package simulator

import (
	"strings"
	"testing"
	"time"
)

// scrapeSequence scrapes at the given offsets (switching scenario at the
// listed ones) and returns every exposition.
func scrapeSequence(t *testing.T, server Server, seed uint64, at []time.Duration, switches map[int]string) []string {
	t.Helper()
	s, clk := newTestSim(t, Options{Server: server, Seed: seed})
	var out []string
	var prev time.Duration
	for i, d := range at {
		clk.advance(d - prev)
		prev = d
		if name, ok := switches[i]; ok {
			if err := s.SetScenario(name); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, scrapeText(t, s))
	}
	return out
}

func TestSameSeedSameOutput(t *testing.T) {
	at := []time.Duration{0, 7 * sec, 30 * sec, 95 * sec, 4 * time.Minute, 9*time.Minute + 500*time.Millisecond}
	for _, server := range Servers() {
		switches := map[int]string{2: "kv-saturation", 4: "error-burst"}
		if server == ServerDCGM {
			switches = map[int]string{2: "gpu-overheating", 4: "xid-error"}
		}
		a := scrapeSequence(t, server, 42, at, switches)
		b := scrapeSequence(t, server, 42, at, switches)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%s: scrape %d differs between two runs with seed 42", server, i)
			}
		}
		c := scrapeSequence(t, server, 43, at, switches)
		if c[len(c)-1] == a[len(a)-1] {
			t.Errorf("%s: seeds 42 and 43 gave identical output; the seed is not used", server)
		}
	}
}

// The model steps on a fixed grid of simulated time, so what a scrape shows
// depends on the time, not on how often the server was scraped before.
func TestOutputIndependentOfScrapeCadence(t *testing.T) {
	once := scrapeSequence(t, ServerVLLM, 9, []time.Duration{5 * time.Minute}, nil)
	var often []time.Duration
	for d := 3 * sec; d < 5*time.Minute; d += 7 * sec {
		often = append(often, d)
	}
	often = append(often, 5*time.Minute)
	many := scrapeSequence(t, ServerVLLM, 9, often, nil)
	if once[0] != many[len(many)-1] {
		t.Error("the output at 5 minutes depends on the earlier scrapes")
	}
}

func TestSpeedCompressesTime(t *testing.T) {
	slow, slowClk := newTestSim(t, Options{Server: ServerVLLM, Scenario: "kv-saturation", Seed: 1})
	fast, fastClk := newTestSim(t, Options{Server: ServerVLLM, Scenario: "kv-saturation", Seed: 1, Speed: 10})
	slowClk.advance(3 * time.Minute)
	fastClk.advance(18 * time.Second)
	kvSlow := value(scrape(t, slow), "vllm:kv_cache_usage_perc", nil)
	kvFast := value(scrape(t, fast), "vllm:kv_cache_usage_perc", nil)
	if kvSlow != kvFast || kvFast < 0.95 {
		t.Errorf("speed 10 for 18 s: kv %.4f, speed 1 for 3 min: %.4f; want equal and saturated", kvFast, kvSlow)
	}
}

// BenchmarkScrape is one 5-second scrape of a simulated vLLM V1 server
// (model steps plus exposition), the unit of work of the 50-server bench.
func BenchmarkScrape(b *testing.B) {
	for _, server := range Servers() {
		b.Run(string(server), func(b *testing.B) {
			clk := &fakeClock{t: testStart}
			s, err := New(Options{Server: server, Now: clk.now, Start: testStart})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				clk.advance(5 * time.Second)
				if err := s.WriteMetrics(discard{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A clock that steps back (NTP, a test) changes nothing: simulated time
// never runs backwards and the output stays that of the latest time.
func TestClockGoingBackwards(t *testing.T) {
	s, _ := newTestSim(t, Options{Server: ServerVLLM, Seed: 4})
	var a, b strings.Builder
	if err := s.WriteMetricsAt(&a, testStart.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteMetricsAt(&b, testStart.Add(30*time.Second)); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Error("an earlier now changed the output")
	}
	if err := s.SetScenarioAt("kv-saturation", testStart.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if name, _ := s.Scenario(); name != "kv-saturation" {
		t.Errorf("scenario %q", name)
	}
}
