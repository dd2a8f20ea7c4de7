package demo

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// printHeader says what runs where.
func printHeader(c *console, o Options, cfgFile, base, simAddr, sinkURL string, moved bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", c.style("paged demo: a simulated vLLM server, the vLLM rule pack, and paged scraping, evaluating and routing.", styleBold))
	fmt.Fprintf(&b, "  config        %s\n", cfgFile)
	fmt.Fprintf(&b, "  time scale    %g×: the pack's `for: 10m` lasts %s and its [5m] windows %s; the simulator runs %g× faster\n",
		o.TimeScale, scaledString(10*time.Minute, o.TimeScale), scaledString(5*time.Minute, o.TimeScale), o.TimeScale)
	fmt.Fprintf(&b, "  web UI        %s/\n", base)
	fmt.Fprintf(&b, "  runbooks      %s/runbooks/vllm/\n", base)
	fmt.Fprintf(&b, "  alerts API    %s/api/v1/alerts\n", base)
	fmt.Fprintf(&b, "  simulator     http://%s/metrics\n", simAddr)
	fmt.Fprintf(&b, "  webhook sink  %s\n", sinkURL)
	if moved {
		fmt.Fprintf(&b, "  (%s was taken: paged listens on %s instead)\n", o.Listen, strings.TrimPrefix(base, "http://"))
	}
	b.WriteString("\n")
	c.printf("%s", b.String())
}

func scaledString(d time.Duration, scale float64) string {
	return time.Duration(float64(d) / scale).Round(time.Millisecond).String()
}

// printSummary lists every alert that fired, when it fired and resolved,
// and the verdict on the expected ones.
func printSummary(c *console, history []record, want []string, v Verdict, took time.Duration, hooks webhookCounts) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\n", c.style("Summary", styleBold))
	if len(history) == 0 {
		b.WriteString("  no alert fired\n")
	} else {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  ALERT\tSEVERITY\tFIRED\tRESOLVED\t")
		for _, r := range history {
			resolved := "still firing"
			if !r.Resolved.IsZero() {
				resolved = r.Resolved.Format(clock)
			}
			note := ""
			if slices.Contains(want, r.Name) {
				note = "expected"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", r.Name, r.Severity, r.FiredAt.Format(clock), resolved, note)
		}
		_ = tw.Flush()
	}
	fmt.Fprintf(&b, "  webhook sink: %d notifications (%d firing, %d resolved)\n", hooks.Notifications, hooks.Firing, hooks.Resolved)
	if v.OK() {
		fmt.Fprintf(&b, "%s\n", c.style(fmt.Sprintf("OK: %s fired and resolved (the script took %s).", strings.Join(want, ", "), took.Round(time.Second)), styleBold, styleGreen))
	} else {
		fmt.Fprintf(&b, "%s\n", c.style("FAILED: "+(&IncompleteError{v}).Error(), styleBold, styleRed))
	}
	c.printf("%s", b.String())
}
