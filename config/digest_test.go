package config

import (
	"path/filepath"
	"testing"
	"time"
)

func TestDigestConfig(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "basic.rules.yaml", basicRules)
	base := `datasource: {prometheus: {url: "http://127.0.0.1:9090"}}
rule_files: [basic.rules.yaml]
storage: {history: {enabled: true}}
notifier:
  route: {receiver: oncall}
  receivers:
    - {name: oncall, webhook_configs: [{url: "http://hook.example/"}]}
    - name: team-slack
      slack_configs: [{api_url: "https://hooks.slack.example/services/T/B/x"}]
      pagerduty_configs: [{routing_key: "0123456789abcdef0123456789abcdef"}]
`
	for _, tc := range []struct {
		name, report string
		want         *DigestConfig
	}{
		{"none", "report: {time_zone: Europe/Paris}\n", nil},
		{"defaults", "report:\n  digest: {receiver: team-slack}\n",
			&DigestConfig{Receiver: "team-slack", Weekday: time.Monday, At: 9 * time.Hour, Span: 7 * 24 * time.Hour}},
		{"all keys", "report:\n  time_zone: America/New_York\n  digest:\n    receiver: oncall\n    schedule: friday 17:30\n    span: 14d\n",
			&DigestConfig{Receiver: "oncall", Weekday: time.Friday, At: 17*time.Hour + 30*time.Minute, Span: 14 * 24 * time.Hour}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(base+tc.report), filepath.Join(dir, "paged.yaml"), noEnv)
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.Report.Digest
			switch {
			case tc.want == nil && got != nil:
				t.Errorf("digest %+v, want none", got)
			case tc.want != nil && (got == nil || *got != *tc.want):
				t.Errorf("digest %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseSchedule(t *testing.T) {
	for in, want := range map[string]struct {
		wd time.Weekday
		at time.Duration
	}{
		"Mon 09:00":        {time.Monday, 9 * time.Hour},
		"sunday 00:00":     {time.Sunday, 0},
		"  SAT   23:59  ":  {time.Saturday, 23*time.Hour + 59*time.Minute},
		"Wednesday\t12:05": {time.Wednesday, 12*time.Hour + 5*time.Minute},
	} {
		wd, at, err := ParseSchedule(in)
		if err != nil || wd != want.wd || at != want.at {
			t.Errorf("ParseSchedule(%q) = %v %v %v, want %v %v", in, wd, at, err, want.wd, want.at)
		}
		if s := (&DigestConfig{Weekday: wd, At: at}).Schedule(); err == nil {
			if wd2, at2, err := ParseSchedule(s); err != nil || wd2 != wd || at2 != at {
				t.Errorf("Schedule() %q does not read back", s)
			}
		}
	}
	for _, in := range []string{"", "Mon", "09:00", "Mon 9:00", "Mon 24:00", "Mon 12:60", "Mon 09:00 UTC", "Mo 09:00", "Mon -1:00", "every 1m", "Mon 09:00:00", "\x00 \x00", "Mon +9:00", "Mon 09:+5", "Mon ٠٩:٠٠"} {
		if _, _, err := ParseSchedule(in); err == nil {
			t.Errorf("ParseSchedule(%q) = nil error", in)
		}
	}
}
