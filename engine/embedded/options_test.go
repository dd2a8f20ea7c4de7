package embedded

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func goodOptions(t *testing.T) Options {
	return Options{
		StoragePath:   t.TempDir(),
		ScrapeConfigs: []ScrapeConfig{{JobName: "vllm", StaticConfigs: []StaticConfig{{Targets: []string{"127.0.0.1:8000"}}}}},
	}
}

// TestOptionsInvalid: every bad option is reported, all at once, naming
// the field, and New opens nothing.
func TestOptionsInvalid(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(o *Options)
		wants  []string
		absent string
	}{
		{"no storage path", func(o *Options) { o.StoragePath = "" }, []string{"embedded: storage path: required"}, ""},
		{"no scrape configs", func(o *Options) { o.ScrapeConfigs = nil }, []string{"scrape_configs: at least one scrape config is required"}, ""},
		{"duplicate job", func(o *Options) { o.ScrapeConfigs = append(o.ScrapeConfigs, o.ScrapeConfigs[0]) },
			[]string{`scrape_configs[1].job_name: duplicate job name "vllm" (first in scrape_configs[0])`}, ""},
		{"no job name", func(o *Options) { o.ScrapeConfigs[0].JobName = "" }, []string{"scrape_configs[0].job_name: required"}, ""},
		{"empty targets", func(o *Options) {
			o.ScrapeConfigs[0].StaticConfigs = []StaticConfig{{Labels: map[string]string{"a": "b"}}}
		},
			[]string{`scrape_configs[0].static_configs: job "vllm" has no targets`}, ""},
		{"url as target", func(o *Options) {
			o.ScrapeConfigs[0].StaticConfigs[0].Targets = []string{"http://10.0.0.1:8000/metrics"}
		},
			[]string{`scrape_configs[0].static_configs[0].targets[0]: "http://10.0.0.1:8000/metrics" is a URL; give host:port`}, "has no targets"},
		{"no port", func(o *Options) { o.ScrapeConfigs[0].StaticConfigs[0].Targets = []string{"10.0.0.1"} },
			[]string{`targets[0]: "10.0.0.1" is not host:port`}, ""},
		{"bad port", func(o *Options) {
			o.ScrapeConfigs[0].StaticConfigs[0].Targets = []string{"10.0.0.1:99999", "h:x", ":80"}
		},
			[]string{`targets[0]: "10.0.0.1:99999": port "99999" is not a number in 1-65535`, `targets[1]: "h:x": port "x"`, `targets[2]: ":80" has no host`}, ""},
		{"duplicate target", func(o *Options) {
			o.ScrapeConfigs[0].StaticConfigs = append(o.ScrapeConfigs[0].StaticConfigs, StaticConfig{Targets: []string{"127.0.0.1:8000"}})
		}, []string{`static_configs[1].targets[0]: duplicate target "127.0.0.1:8000" in job "vllm"`}, ""},
		{"timeout over interval", func(o *Options) {
			o.ScrapeConfigs[0].ScrapeInterval = time.Second
			o.ScrapeConfigs[0].ScrapeTimeout = 2 * time.Second
		}, []string{"scrape_configs[0].scrape_timeout: 2s is greater than the scrape interval 1s"}, ""},
		{"bad durations", func(o *Options) {
			o.ScrapeInterval = -time.Second
			o.ScrapeConfigs[0].ScrapeInterval = 1500 * time.Microsecond
			o.Retention = time.Second
		}, []string{"scrape_interval: -1s is negative", "scrape_configs[0].scrape_interval: 1.5ms is too short", "retention: 1s is too short"}, ""},
		{"scheme and path", func(o *Options) {
			o.ScrapeConfigs[0].Scheme = "ftp"
			o.ScrapeConfigs[0].MetricsPath = "metrics?x=1"
		}, []string{`scheme: "ftp" is not http or https`, `metrics_path: "metrics?x=1" must be a path starting with /`}, ""},
		{"labels", func(o *Options) {
			o.ScrapeConfigs[0].StaticConfigs[0].Labels = map[string]string{"__address__": "x", "bad-name": "v", "ok": "\xff"}
		}, []string{`labels.__address__: label name "__address__" is reserved`, `labels.bad-name: "bad-name" is not a valid label name`, `labels.ok: value of "ok" is not valid UTF-8`}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := goodOptions(t)
			tc.edit(&o)
			e, err := New(o)
			if err == nil {
				_ = e.Close()
				t.Fatal("New accepted the options")
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
			if tc.absent != "" && strings.Contains(err.Error(), tc.absent) {
				t.Errorf("error %q\nshould not say %q", err, tc.absent)
			}
		})
	}
}

// TestOptionsDefaults: defaults are filled as documented and reach
// Prometheus's scrape config.
func TestOptionsDefaults(t *testing.T) {
	o := goodOptions(t)
	o.ScrapeConfigs = append(o.ScrapeConfigs, ScrapeConfig{
		JobName: "fast", ScrapeInterval: 2 * time.Second,
		StaticConfigs: []StaticConfig{{Targets: []string{"[::1]:9000"}}},
	})
	o.BodySizeLimit = -1
	e, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	got := e.Options()
	if got.ScrapeInterval != 5*time.Second || got.Retention != 24*time.Hour || got.MaxSamplesPerScrape != DefaultMaxSamplesPerScrape || got.BodySizeLimit != 0 {
		t.Errorf("defaults: %+v", got)
	}
	vllm, fast := got.ScrapeConfigs[0], got.ScrapeConfigs[1]
	if vllm.ScrapeInterval != 5*time.Second || vllm.ScrapeTimeout != 5*time.Second || vllm.MetricsPath != "/metrics" || vllm.Scheme != "http" {
		t.Errorf("job vllm: %+v (timeout is capped at the interval)", vllm)
	}
	if fast.ScrapeInterval != 2*time.Second || fast.ScrapeTimeout != 2*time.Second {
		t.Errorf("job fast: %+v", fast)
	}
	cfg, err := prometheusConfig(&got)
	if err != nil {
		t.Fatal(err)
	}
	scs, err := cfg.GetScrapeConfigs()
	if err != nil {
		t.Fatal(err)
	}
	if len(scs) != 2 || scs[0].SampleLimit != DefaultMaxSamplesPerScrape || scs[0].BodySizeLimit != 0 ||
		scs[1].ScrapeInterval.String() != "2s" || scs[0].LabelLimit != DefaultLabelLimit {
		t.Errorf("Prometheus scrape configs: %+v", scs)
	}
}

// TestBlockRange: the head's block range follows the retention, which is
// what bounds the samples held in memory.
func TestBlockRange(t *testing.T) {
	for _, tc := range []struct {
		retention time.Duration
		min, max  time.Duration
	}{
		{24 * time.Hour, 2 * time.Hour, 2*time.Hour + 24*time.Minute},
		{4 * time.Hour, time.Hour, time.Hour},
		{2 * time.Minute, time.Minute, time.Minute},
		{90 * 24 * time.Hour, 2 * time.Hour, 9 * 24 * time.Hour},
	} {
		o := Options{Retention: tc.retention}
		got := tsdbOptions(&o)
		if got.MinBlockDuration != tc.min.Milliseconds() || got.MaxBlockDuration != tc.max.Milliseconds() || got.RetentionDuration != tc.retention.Milliseconds() {
			t.Errorf("retention %s: block range [%s, %s], retention %dms; want [%s, %s]", tc.retention,
				time.Duration(got.MinBlockDuration)*time.Millisecond, time.Duration(got.MaxBlockDuration)*time.Millisecond, got.RetentionDuration, tc.min, tc.max)
		}
	}
}

// FuzzCheckTarget: any string is accepted or rejected without panicking,
// and an accepted one is host:port with a valid port.
func FuzzCheckTarget(f *testing.F) {
	for _, s := range []string{"127.0.0.1:8000", "[::1]:80", "http://x:1", "x", ":0", "a:b:c", "\xff:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if checkTarget(s) == nil && (!strings.Contains(s, ":") || !utf8.ValidString(s)) {
			t.Errorf("accepted %q", s)
		}
	})
}
