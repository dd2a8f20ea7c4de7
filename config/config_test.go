package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// want lines in a *.bad.yaml file: "# want: LINE:COL KEY: MESSAGE", where
// MESSAGE must be a prefix of (or contained in) the problem's message.
var wantRE = regexp.MustCompile(`^# want: (\d+):(\d+) (.*)$`)

func noEnv(string) string { return "" }

func TestLoadConfigBadFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/*.bad.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/*.bad.yaml: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, line := range strings.Split(string(data), "\n") {
				if m := wantRE.FindStringSubmatch(line); m != nil {
					want = append(want, file+":"+m[1]+":"+m[2]+": "+m[3])
				}
			}
			if len(want) == 0 {
				t.Fatal("file has no '# want:' lines")
			}
			_, err = Load(file, noEnv)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Load error = %v (%T), want *Error", err, err)
			}
			var got []string
			for _, p := range ce.Problems {
				got = append(got, p.String())
			}
			if len(got) != len(want) {
				t.Errorf("got %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
			}
			for _, w := range want {
				found := false
				for _, g := range got {
					if strings.HasPrefix(g, w) {
						found = true
					}
				}
				if !found {
					t.Errorf("missing problem %q; got:\n%s", w, strings.Join(got, "\n"))
				}
			}
		})
	}
}

func TestLoadConfigGood(t *testing.T) {
	env := map[string]string{"PAGED_TEST_PASSWORD": "s3cret-pw"}
	cfg, err := Load("testdata/good.yaml", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Global.EvaluationInterval != 15*time.Second {
		t.Errorf("evaluation_interval = %v", cfg.Global.EvaluationInterval)
	}
	if cfg.Global.NoSeriesAfter != 0 {
		t.Errorf("no_series_after = %v, want 0 (off)", cfg.Global.NoSeriesAfter)
	}
	if got := cfg.Global.ExternalURL.String(); got != "https://paged.example.com/" {
		t.Errorf("external_url = %q", got)
	}
	if got := cfg.Global.ExternalLabels.String(); got != `{cluster="prod", region="eu-1"}` {
		t.Errorf("external_labels = %s", got)
	}
	ds := cfg.Datasource
	if ds.Type != DatasourcePrometheus || ds.DownAfterFailures != 5 || ds.Prometheus.Timeout != 5*time.Second || ds.Prometheus.CombineQueries {
		t.Errorf("datasource = %+v", ds)
	}
	if ds.Prometheus.URL.String() != "http://127.0.0.1:9090" {
		t.Errorf("url = %s", ds.Prometheus.URL)
	}
	ba := ds.Prometheus.HTTPConfig.BasicAuth
	if ba == nil || ba.Username != "paged" || string(ba.Password) != "s3cret-pw" {
		t.Errorf("basic_auth = %+v, want password from ${PAGED_TEST_PASSWORD}", ba)
	}
	if !ds.Prometheus.HTTPConfig.TLSConfig.InsecureSkipVerify || !ds.Prometheus.HTTPConfig.FollowRedirects {
		t.Errorf("http_config lost tls_config or the follow_redirects default: %+v", ds.Prometheus.HTTPConfig)
	}
	wantFiles := []string{filepath.Join("testdata", "rules", "basic.rules.yaml"), filepath.Join("testdata", "rules", "other.rules.yaml"), filepath.Join("testdata", "rules", "shape.rules.yaml")}
	if strings.Join(cfg.RuleFilePaths, ",") != strings.Join(wantFiles, ",") {
		t.Errorf("rule files = %v, want %v", cfg.RuleFilePaths, wantFiles)
	}
	if cfg.Storage.Path != filepath.Join("testdata", "state") {
		t.Errorf("storage.path = %q, want it relative to the config file", cfg.Storage.Path)
	}
	if h := cfg.Storage.History; h.Retention != 14*24*time.Hour || h.MaxBytes != 20<<30 {
		t.Errorf("storage.history = %+v, want 14d and 20GiB", h)
	}
	if r := cfg.Report; r.TimeZone.String() != "Europe/Paris" || r.WorkStart != 8*time.Hour+30*time.Minute || r.WorkEnd != 17*time.Hour+30*time.Minute ||
		r.WorkingDays != [7]bool{time.Monday: true, time.Tuesday: true, time.Wednesday: true, time.Thursday: true} || r.FlappingThreshold != 5 {
		t.Errorf("report = %+v", r)
	}
	if cfg.Web.ListenAddress != "127.0.0.1:19095" || cfg.Web.AuthRequired() {
		t.Errorf("web = %+v", cfg.Web)
	}
}

func TestLoadConfigDefaults(t *testing.T) {
	cfg, err := Load("testdata/minimal.yaml", noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Global.EvaluationInterval != DefaultEvaluationInterval {
		t.Errorf("evaluation_interval = %v", cfg.Global.EvaluationInterval)
	}
	if cfg.Global.NoSeriesAfter != 30*time.Minute {
		t.Errorf("no_series_after default = %v, want 30m", cfg.Global.NoSeriesAfter)
	}
	if cfg.Web.ListenAddress != DefaultListenAddress {
		t.Errorf("listen_address = %v", cfg.Web.ListenAddress)
	}
	if r := cfg.Report; r.TimeZone != time.UTC || r.WorkStart != 9*time.Hour || r.WorkEnd != 18*time.Hour || r.WorkingDays[time.Saturday] || !r.WorkingDays[time.Friday] || r.FlappingThreshold != 3 {
		t.Errorf("report defaults = %+v", r)
	}
	if cfg.Global.ExternalURL.String() != "http://"+DefaultListenAddress {
		t.Errorf("external_url default = %v", cfg.Global.ExternalURL)
	}
	if cfg.Datasource.Prometheus.Timeout != DefaultDatasourceTimeout || cfg.Datasource.DownAfterFailures != DefaultDownAfterFailures || !cfg.Datasource.Prometheus.CombineQueries {
		t.Errorf("datasource defaults = %+v", cfg.Datasource)
	}
	if cfg.Storage.Path != filepath.Join("testdata", "data") {
		t.Errorf("storage.path = %q", cfg.Storage.Path)
	}
	if h := cfg.Storage.History; h.Retention != 30*24*time.Hour || h.MaxBytes != 1<<30 {
		t.Errorf("storage.history defaults = %+v, want 30d and 1GiB", h)
	}
	if cfg.RunbookBaseURL != nil || cfg.Notifier != nil || cfg.NotifierConfig != nil {
		t.Errorf("unexpected runbook base or notifier: %+v", cfg)
	}
}

func TestLoadConfigMissingFile(t *testing.T) {
	_, err := Load("testdata/does-not-exist.yaml", noEnv)
	var pe *os.PathError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *os.PathError", err)
	}
}

func TestExpandEnv(t *testing.T) {
	env := map[string]string{"A": "x", "EMPTY": ""}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct{ in, want, err string }{
		{in: "plain", want: "plain"},
		{in: "${A}-${A}", want: "x-x"},
		{in: "$labels.instance ${A}", want: "$labels.instance x"},
		{in: "${EMPTY:-def}", want: "def"},
		{in: "${B:-}", want: ""},
		{in: "$${A}", want: "${A}"},
		{in: "${B}", err: "environment variable B is not set"},
		{in: "${A", err: "unterminated"},
		{in: "${A-B}", err: "invalid environment variable name"},
	} {
		got, err := expandEnv(tc.in, getenv)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("expandEnv(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("expandEnv(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestEnvExpansionRetypesPlainScalars(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "r.rules.yaml", "groups: []\n")
	writeFile(t, dir, "paged.yaml", `
datasource:
  down_after_failures: ${N}
  prometheus: {url: "http://${HOST}:9090"}
rule_files: [r.rules.yaml]
`)
	env := map[string]string{"N": "7", "HOST": "prom.internal"}
	cfg, err := Load(filepath.Join(dir, "paged.yaml"), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Datasource.DownAfterFailures != 7 || cfg.Datasource.Prometheus.URL.Host != "prom.internal:9090" {
		t.Errorf("got %d, %s", cfg.Datasource.DownAfterFailures, cfg.Datasource.Prometheus.URL)
	}
}

// FuzzParseConfig feeds arbitrary bytes to the loader: it must return a
// config or an error, never panic, and every problem must carry the file.
func FuzzParseConfig(f *testing.F) {
	for _, p := range []string{"testdata/good.yaml", "testdata/minimal.yaml", "testdata/unknown_key.bad.yaml", "testdata/wrong_type.bad.yaml", "testdata/embedded.bad.yaml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("notifier: {route: {receiver: x}, receivers: [{name: x}]}"))
	f.Add([]byte("global: &a {x: *a}"))
	f.Add([]byte("- - -"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "testdata/fuzz.yaml", func(string) string { return "v" })
		if err == nil {
			if cfg == nil {
				t.Fatal("nil config without error")
			}
			_, _ = cfg.Redacted()
			return
		}
		var ce *Error
		if errors.As(err, &ce) {
			for _, p := range ce.Problems {
				if p.File != "testdata/fuzz.yaml" || p.Message == "" {
					t.Fatalf("problem without file or message: %+v", p)
				}
			}
		}
	})
}

// Hostile YAML: cyclic aliases and alias bombs are refused before the walk,
// deep nesting is a type error; nothing hangs or panics.
func TestLoadConfigHostileYAML(t *testing.T) {
	var bomb strings.Builder
	bomb.WriteString("a: &a [x,x,x,x,x,x,x,x,x,x]\n")
	for c := 'b'; c <= 'g'; c++ {
		fmt.Fprintf(&bomb, "%c: &%c [%s]\n", c, c, strings.Repeat("*"+string(c-1)+",", 9)+"*"+string(c-1))
	}
	for _, tc := range []struct{ name, in, want string }{
		{"cyclic alias in notifier", "notifier: {route: &r {receiver: x, routes: [*r]}, receivers: [{name: x}]}\n", "x.yaml:1:1: anchor 'r' value contains itself"},
		{"cyclic alias in http_config", "datasource: {prometheus: {url: 'http://x', http_config: &a {tls_config: *a}}}\n", "anchor 'a' value contains itself"},
		{"alias bomb", bomb.String() + "rule_files: *g\n", "x.yaml:1:1: document contains excessive aliasing"},
		{"deep nesting", strings.Repeat("[", 5000) + strings.Repeat("]", 5000), "x.yaml:1:1: expected a mapping, got a list"},
		{"not a mapping", "just a string", "expected a mapping, got a string"},
		{"empty file", "", "x.yaml: rule_files: required"},
		{"two documents", "rule_files: []\n---\nrule_files: []\n", "x.yaml:2:1: only one YAML document is allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in), "x.yaml", noEnv)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	// Anchors that are not cyclic are fine.
	dir := t.TempDir()
	writeFile(t, dir, "r.yaml", "groups: []\n")
	writeFile(t, dir, "paged.yaml", "datasource: {prometheus: &ds {url: 'http://127.0.0.1:9090'}}\nrule_files: &rf [r.yaml]\n")
	if _, err := Load(filepath.Join(dir, "paged.yaml"), noEnv); err != nil {
		t.Errorf("anchors: %v", err)
	}
}

func TestAuthTokenFileMustBeRegular(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "r.yaml", "groups: []\n")
	writeFile(t, dir, "paged.yaml", "datasource: {prometheus: {url: 'http://127.0.0.1:9090'}}\nrule_files: [r.yaml]\nweb: {auth_token_file: /dev/zero}\n")
	_, err := Load(filepath.Join(dir, "paged.yaml"), noEnv)
	if err == nil || !strings.Contains(err.Error(), "paged.yaml:3:24: web.auth_token_file: cannot read token file /dev/zero: not a regular file") {
		t.Errorf("err = %v", err)
	}
}

// The notifier's *_file paths resolve against the config directory, like
// every other path in paged.yaml.
func TestNotifierPathsRelativeToConfig(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "r.yaml", "groups: []\n")
	writeFile(t, dir, "secrets/slack.url", "https://hooks.slack.com/services/x\n")
	writeFile(t, dir, "paged.yaml", `
datasource: {prometheus: {url: "http://127.0.0.1:9090"}}
rule_files: [r.yaml]
notifier:
  route: {receiver: oncall}
  receivers:
    - name: oncall
      slack_configs:
        - api_url_file: secrets/slack.url
`)
	cfg, err := Load(filepath.Join(dir, "paged.yaml"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.NotifierConfig.Receivers[0].SlackConfigs[0].APIURLFile; got != filepath.Join(dir, "secrets/slack.url") {
		t.Errorf("api_url_file = %q, want it under the config directory", got)
	}
}
