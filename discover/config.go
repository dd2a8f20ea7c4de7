package discover

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// ConfigOptions are what the written paged.yaml says beyond the packs.
type ConfigOptions struct {
	// Command is the command line that wrote the file, for its header
	// (without credentials).
	Command string
	// PrometheusURL is the datasource's URL; empty for an inventory from
	// FromTargets, which gets an embedded datasource.
	PrometheusURL string
	// Timeout of a datasource query; 0 leaves the default.
	Timeout time.Duration
	// HTTPConfig is the datasource's http_config as YAML (a mapping) with
	// its values as they are meant (${ is escaped when written), nil for
	// none.
	HTTPConfig []byte
	// NoSeriesAfter is global.no_series_after. Default 30m.
	NoSeriesAfter time.Duration
	// File is the name the file is written under, for the commands its
	// header shows. Default paged.yaml.
	File string
	// Now dates the header.
	Now time.Time
}

// Config writes the paged.yaml that fits the inventory: the datasource,
// one packs: entry per fitting pack with the selector of its jobs, and a
// notifier block commented out (a Slack bot-token receiver and a
// webhook), so that the file runs as it is (alerts are printed) until
// someone fills one in. The caller validates it with the configuration
// loader before writing it.
func (inv *Inventory) Config(o ConfigOptions) ([]byte, error) {
	if len(inv.Packs) == 0 {
		return nil, errors.New("no pack fits: nothing to write")
	}
	if o.NoSeriesAfter <= 0 {
		o.NoSeriesAfter = 30 * time.Minute
	}
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# paged.yaml written by `%s`", o.Command)
	if !o.Now.IsZero() {
		w(" on %s", o.Now.UTC().Format("2006-01-02"))
	}
	w(".\n# Found (%s):\n", inv.Source)
	for _, p := range inv.Packs {
		w("#   %s: %s\n", p.Title, p.JobList())
	}
	for _, n := range inv.Notes {
		w("%s", comment("Note: "+n, "# "))
	}
	file := o.File
	if file == "" {
		file = "paged.yaml"
	}
	w("#\n#   paged check-config %s\n#   paged run --config %s\n#\n", file, file)
	w("# Every key is described in docs/configuration.md. Relative paths are relative\n# to this file.\n")

	w("global:\n  evaluation_interval: 30s\n")
	w("  # A rule selector that matches no series for this long raises the built-in\n")
	w("  # PagedRuleNoSeries alert (a server upgrade renamed a metric, a wrong job); 0s: off.\n")
	w("  no_series_after: %s\n\n", model.Duration(o.NoSeriesAfter))

	w("datasource:\n")
	if o.PrometheusURL != "" {
		w("  type: prometheus\n  prometheus:\n    url: %s\n", quote(o.PrometheusURL))
		if o.Timeout > 0 {
			w("    timeout: %s\n", model.Duration(o.Timeout))
		}
		if len(o.HTTPConfig) > 0 {
			w("    http_config:\n%s", indent(escapeEnv(string(o.HTTPConfig)), "      "))
		}
	} else {
		w("  type: embedded   # paged scrapes the servers itself into a local TSDB\n  embedded:\n    scrape_interval: 15s\n    retention: 24h\n    scrape_configs:\n")
		byJob := map[string][]string{}
		var jobs []string
		for _, t := range inv.Targets {
			if t.Job == "" {
				continue
			}
			if byJob[t.Job] == nil {
				jobs = append(jobs, t.Job)
			}
			byJob[t.Job] = append(byJob[t.Job], t.Addr)
		}
		sortPacks(jobs)
		for _, j := range jobs {
			quoted := make([]string, len(byJob[j]))
			for i, a := range byJob[j] {
				quoted[i] = quote(a)
			}
			w("      - job_name: %s\n        static_configs:\n          - targets: [%s]\n", quote(j), strings.Join(quoted, ", "))
		}
	}

	w("\n# The built-in packs that fit these servers, each narrowed to its jobs (every\n")
	w("# selector of the pack gets the selector's matchers). Tune them without forking:\n")
	w("# set, for, severity, labels, disable (paged packs show NAME --config paged.yaml).\n")
	w("packs:\n")
	for _, p := range inv.Packs {
		w("  - name: %s\n", p.Pack)
		if sel := p.Selector(); sel != "" {
			w("    selector: %s\n", singleQuote(sel))
		}
	}
	w("\n# Your own rule files go beside the packs:\n# rule_files: [\"alerts/*.rules.yaml\"]\n\n")
	w("storage:\n  path: data/   # alert state, silences, notification log\n\n")
	w("web:\n  listen_address: 127.0.0.1:9095   # API, UI and the packs' runbooks at /runbooks/\n\n")
	w("%s", notifierStub)
	return b.Bytes(), nil
}

// notifierStub is the commented notifier block: without one, paged run
// prints alerts on stdout.
const notifierStub = `# Where alerts go. Without a notifier block, paged run prints them on stdout.
# Uncomment it and fill in a receiver (docs/notifications.md); secrets stay in
# files or ${ENV}, never here.
#
# notifier:
#   route:
#     receiver: oncall
#     group_by: [alertname, job, instance]
#     group_wait: 30s
#     group_interval: 5m
#     repeat_interval: 4h
#   receivers:
#     - name: oncall
#       # Slack with a bot token (chat.postMessage, one message per alert group,
#       # edited when it resolves); invite the bot to the channel first.
#       slack_configs:
#         - app_token_file: secrets/slack-bot-token   # xoxb-...
#           channel: "#llm-oncall"
#           send_resolved: true
#       # Any receiver of Alertmanager's webhook payload.
#       webhook_configs:
#         - url: https://hooks.example.com/paged
#           send_resolved: true
`

// escapeEnv keeps paged's ${ENV} expansion away from a value: $${ is a
// literal ${.
func escapeEnv(s string) string { return strings.ReplaceAll(s, "${", "$${") }

// quote writes s as a YAML double-quoted scalar, ${ escaped.
func quote(s string) string {
	n := &yaml.Node{Kind: yaml.ScalarNode, Style: yaml.DoubleQuotedStyle, Tag: "!!str", Value: escapeEnv(s)}
	out, err := yaml.Marshal(n)
	if err != nil {
		return `""`
	}
	return strings.TrimSuffix(string(out), "\n")
}

// singleQuote writes s as a YAML single-quoted scalar, the style the
// documentation uses for selectors ('{job="vllm"}').
func singleQuote(s string) string {
	if strings.ContainsAny(s, "\n\r\t") || !printable(s) {
		return quote(s)
	}
	return "'" + strings.ReplaceAll(escapeEnv(s), "'", "''") + "'"
}

// printable reports whether s can stand in a single-quoted YAML scalar.
func printable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			return false
		}
	}
	return true
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// comment wraps text into comment lines of at most 80 characters.
func comment(text, prefix string) string {
	var b, line strings.Builder
	for _, word := range strings.Fields(text) {
		if line.Len() > len(prefix) && line.Len()+1+len(word) > 80 {
			b.WriteString(line.String() + "\n")
			line.Reset()
		}
		if line.Len() == 0 {
			line.WriteString(prefix)
			if b.Len() > 0 {
				line.WriteString("  ")
			}
		} else {
			line.WriteString(" ")
		}
		line.WriteString(word)
	}
	if line.Len() > 0 {
		b.WriteString(line.String() + "\n")
	}
	return b.String()
}
