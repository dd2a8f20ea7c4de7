package simulator

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"go.yaml.in/yaml/v3"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/rules/catalog"
)

// dcgmCatalog is the dcgm_exporter entry of catalog.yaml: the fields of
// dcgm-exporter's etc/default-counters.csv and the ones it comments out.
type dcgmCatalog struct {
	Default  []catalogMetric `yaml:"default_metrics"`
	Optional []string        `yaml:"optional_commented_out"`
}

func loadDCGMCatalog(t *testing.T) dcgmCatalog {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testbin.SharedDir(t), "fixtures", "metrics", "catalog.yaml"))
	if err != nil {
		t.Fatalf("catalog missing: %v", err)
	}
	var doc struct {
		Servers struct {
			DCGM dcgmCatalog `yaml:"dcgm_exporter"`
		} `yaml:"servers"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("catalog.yaml: %v", err)
	}
	if len(doc.Servers.DCGM.Default) < 20 {
		t.Fatalf("catalog has %d dcgm-exporter default metrics; its layout may have changed", len(doc.Servers.DCGM.Default))
	}
	return doc.Servers.DCGM
}

// The dcgm mode serves exactly dcgm-exporter's default counters with the
// catalogue's types, for four GPUs, with the exporter's labels; the opt-in
// counters only with DCGMOptIn.
func TestDCGMDefaultCounters(t *testing.T) {
	cat := loadDCGMCatalog(t)
	for _, optIn := range []bool{false, true} {
		s, clk := newTestSim(t, Options{Server: ServerDCGM, Seed: 3, DCGMOptIn: optIn})
		clk.advance(10 * time.Minute)
		mfs := scrape(t, s)
		for _, m := range cat.Default {
			mf := mfs[m.Name]
			if mf == nil {
				t.Errorf("opt-in %v: %s is a default counter, not served", optIn, m.Name)
				continue
			}
			if got := strings.ToLower(mf.GetType().String()); got != m.Type {
				t.Errorf("%s: type %s, catalog says %s", m.Name, got, m.Type)
			}
			if n := len(mf.GetMetric()); n != dcgmGPUs {
				t.Errorf("%s: %d series, want one per GPU (%d)", m.Name, n, dcgmGPUs)
			}
			for _, sm := range mf.GetMetric() {
				var names []string
				for _, lp := range sm.GetLabel() {
					names = append(names, lp.GetName())
				}
				// The template's order: fixed labels, label fields, attributes.
				want := []string{"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "DCGM_FI_DRIVER_VERSION"}
				// (default counters only: the opt-in DCGM_EXP_* fields add their attributes)
				if m.Name == "DCGM_FI_DEV_XID_ERRORS" {
					want = append(want, "err_code", "err_msg")
				}
				if !slices.Equal(names, want) {
					t.Errorf("%s: labels %v, want %v", m.Name, names, want)
				}
			}
		}
		served := 0
		for name := range mfs {
			if !slices.ContainsFunc(cat.Default, func(m catalogMetric) bool { return m.Name == name }) {
				served++
				if !optIn {
					t.Errorf("%s served on default counters, but it is not one", name)
				} else if m := catalog.Default().Metric(name); !slices.Contains(cat.Optional, name) && (m == nil || m.Status != catalog.Conditional) {
					// The research catalogue's list of commented-out fields,
					// or an opt-in entry of rules/catalog/additions.yaml.
					t.Errorf("%s served with the opt-in counters, but the catalogue lists it nowhere", name)
				}
			}
		}
		if optIn {
			for _, name := range []string{"DCGM_FI_DEV_THERMAL_VIOLATION", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"} {
				if mf := mfs[name]; mf == nil || mf.GetType() != dto.MetricType_COUNTER {
					t.Errorf("opt-in: %s missing or not a counter", name)
				}
			}
			if served < 6 {
				t.Errorf("opt-in: only %d extra families", served)
			}
		}
	}
}

// The text is dcgm-exporter's: the template's label order, no _total, no
// blank lines, INT64 fields as integers and DOUBLE fields with %f.
func TestDCGMTextShape(t *testing.T) {
	s, clk := newTestSim(t, Options{Server: ServerDCGM, Seed: 3})
	clk.advance(time.Minute)
	text := scrapeText(t, s)
	for _, re := range []string{
		`(?m)^# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature \(in C\)\.\n# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n`,
		`(?m)^DCGM_FI_DEV_GPU_TEMP\{gpu="0",UUID="GPU-[0-9a-f-]{36}",pci_bus_id="00000000:18:00\.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="gpu-node-1",DCGM_FI_DRIVER_VERSION="550\.90\.07"\} [0-9]+$`,
		`(?m)^DCGM_FI_DEV_POWER_USAGE\{gpu="3",.*\} [0-9]+\.[0-9]{6}$`,
		`(?m)^DCGM_FI_DEV_XID_ERRORS\{gpu="2",.*,err_code="0",err_msg="No Error"\} 0$`,
		`(?m)^# TYPE DCGM_FI_DEV_PCIE_REPLAY_COUNTER counter$`,
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("no match for %s", re)
		}
	}
	if strings.Contains(text, "\n\n") || strings.Contains(text, "_total") || strings.Contains(text, "_created") {
		t.Error("blank line, _total or _created in the dcgm output")
	}
}

// Each GPU scenario breaks GPU 2 and leaves the others healthy.
func TestDCGMScenarios(t *testing.T) {
	gpu := func(i string) map[string]string { return map[string]string{"gpu": i} }
	end := 5 * time.Minute
	for _, c := range []struct {
		scenario string
		check    func(tl *timeline) (bad, good float64, ok bool)
		want     string
	}{
		{"gpu-overheating", func(tl *timeline) (float64, float64, bool) {
			b, g := tl.gauge(end, "DCGM_FI_DEV_GPU_TEMP", gpu("2")), tl.gauge(end, "DCGM_FI_DEV_GPU_TEMP", gpu("0"))
			return b, g, b > 85 && g < 70
		}, "GPU 2 above 85 °C, GPU 0 under 70"},
		{"thermal-throttling", func(tl *timeline) (float64, float64, bool) {
			b := tl.rate(3*time.Minute, end, "DCGM_FI_DEV_THERMAL_VIOLATION", gpu("2")) / 1e9
			g := tl.rate(3*time.Minute, end, "DCGM_FI_DEV_THERMAL_VIOLATION", gpu("0")) / 1e9
			return b, g, b > 0.25 && b < 0.35 && g == 0 && tl.gauge(end, "DCGM_FI_DEV_SM_CLOCK", gpu("2")) < 1980
		}, "GPU 2 throttled about 30% of the time (ns counter), GPU 0 never, GPU 2's SM clock lowered"},
		{"memory-pressure", func(tl *timeline) (float64, float64, bool) {
			ratio := func(g map[string]string) float64 {
				u := tl.gauge(end, "DCGM_FI_DEV_FB_USED", g)
				return u / (u + tl.gauge(end, "DCGM_FI_DEV_FB_FREE", g))
			}
			b, g := ratio(gpu("2")), ratio(gpu("0"))
			return b, g, b > 0.98 && g < 0.95
		}, "GPU 2's framebuffer over 98% used, GPU 0's about 90%"},
		{"xid-error", func(tl *timeline) (float64, float64, bool) {
			b, g := tl.gauge(end, "DCGM_FI_DEV_XID_ERRORS", gpu("2")), tl.gauge(end, "DCGM_FI_DEV_XID_ERRORS", gpu("0"))
			lbl := value(tl.at(end), "DCGM_FI_DEV_XID_ERRORS", map[string]string{"gpu": "2", "err_code": "13", "err_msg": "Graphics Engine Exception"})
			return b, g, b == 13 && g == 0 && lbl == 13 && tl.gauge(15*sec, "DCGM_FI_DEV_XID_ERRORS", gpu("2")) == 0
		}, "GPU 2's last XID 13 (err_code 13) after the onset, 0 before; GPU 0 none"},
		{"xid-hardware", func(tl *timeline) (float64, float64, bool) {
			b, g := tl.gauge(end, "DCGM_FI_DEV_XID_ERRORS", gpu("2")), tl.gauge(end, "DCGM_FI_DEV_XID_ERRORS", gpu("0"))
			return b, g, b == 74 && g == 0
		}, "GPU 2's last XID 74"},
		{"row-remap-failure", func(tl *timeline) (float64, float64, bool) {
			b, g := tl.gauge(end, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", gpu("2")), tl.gauge(end, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", gpu("0"))
			return b, g, b >= 2 && g == 0 && tl.gauge(end, "DCGM_FI_DEV_ROW_REMAP_FAILURE", gpu("2")) == 1 &&
				tl.gauge(2*time.Minute, "DCGM_FI_DEV_ROW_REMAP_FAILURE", gpu("2")) == 0
		}, "GPU 2 remaps rows, then its remap fails at 3 min"},
		{"pcie-replays", func(tl *timeline) (float64, float64, bool) {
			b := tl.rate(3*time.Minute, end, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", gpu("2")) * 60
			g := tl.rate(3*time.Minute, end, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", gpu("0")) * 60
			return b, g, b > 20 && b < 40 && g == 0
		}, "GPU 2 replays about 30 a minute, GPU 0 none"},
		{"ecc-double-bit", func(tl *timeline) (float64, float64, bool) {
			b, g := tl.gauge(end, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", gpu("2")), tl.gauge(end, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", gpu("0"))
			return b, g, b >= 1 && g == 0 && tl.gauge(end, "DCGM_FI_DEV_XID_ERRORS", gpu("2")) == 48
		}, "GPU 2 counts double-bit errors and reports XID 48"},
		{"nvlink-errors", func(tl *timeline) (float64, float64, bool) {
			b := tl.rate(2*time.Minute, end, "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", gpu("2")) * 60
			g := tl.rate(2*time.Minute, end, "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", gpu("0")) * 60
			rec := tl.rate(0, end, "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", gpu("2"))
			crc := tl.rate(2*time.Minute, end, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", gpu("2"))
			h := value(tl.at(end), "DCGM_EXP_GPU_HEALTH_STATUS", map[string]string{"gpu": "2", "health_watch": "NVLINK", "health_error_code": "DCGM_FR_NVLINK_ERROR_CRITICAL"})
			hg := value(tl.at(end), "DCGM_EXP_GPU_HEALTH_STATUS", map[string]string{"gpu": "0", "health_watch": "NVLINK"})
			return b, g, b > 10 && b < 14 && g == 0 && rec > 0 && crc > 3 && crc < 100 && h == 20 && hg == 0
		}, "GPU 2 replays about 12 a minute with recoveries and a few CRC errors a second, its NVLink health watch at 20 (fail); GPU 0 clean and passing"},
		{"xid-storm", func(tl *timeline) (float64, float64, bool) {
			b := value(tl.at(end), "DCGM_EXP_XID_ERRORS_COUNT", map[string]string{"gpu": "2", "xid": "13"})
			g := value(tl.at(end), "DCGM_EXP_XID_ERRORS_COUNT", map[string]string{"gpu": "0"})
			return b, g, b >= 14 && b <= 16 && g == 0 && tl.gauge(end, "DCGM_FI_DEV_XID_ERRORS", gpu("2")) == 13
		}, "GPU 2 counts about 15 XID 13 in the 5-minute window, GPU 0 none (one series at 0)"},
		{"idle", func(tl *timeline) (float64, float64, bool) {
			u := tl.gauge(end, "DCGM_FI_DEV_GPU_UTIL", nil) / dcgmGPUs
			fb := tl.gauge(end, "DCGM_FI_DEV_FB_USED", gpu("1"))
			return u, fb, u < 5 && fb > 0.5*dcgmFBTotal
		}, "every GPU under 5% busy with the model loaded"},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			s, clk := newTestSim(t, Options{Server: ServerDCGM, Scenario: c.scenario, Seed: 11, DCGMOptIn: true})
			tl := &timeline{t: t, every: 15 * time.Second}
			for at := time.Duration(0); at <= end; at += tl.every {
				tl.snaps = append(tl.snaps, scrape(t, s))
				clk.advance(tl.every)
			}
			if bad, good, ok := c.check(tl); !ok {
				t.Errorf("%s: got %v on the affected GPU and %v on a healthy one; want %s", c.scenario, bad, good, c.want)
			}
		})
	}
	// The opt-in scenarios need the opt-in counters.
	for _, sc := range []string{"thermal-throttling", "ecc-double-bit", "nvlink-errors", "xid-storm"} {
		if _, err := New(Options{Server: ServerDCGM, Scenario: sc}); err == nil || !strings.Contains(err.Error(), "dcgm-opt-in") {
			t.Errorf("%s without DCGMOptIn: error %v, want one naming dcgm-opt-in", sc, err)
		}
	}
	// The engine scenarios are not GPU scenarios.
	if _, err := New(Options{Server: ServerDCGM, Scenario: "kv-saturation"}); err == nil {
		t.Error("kv-saturation on dcgm: no error")
	}
}
