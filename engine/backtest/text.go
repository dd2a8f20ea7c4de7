package backtest

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prometheus/prometheus/model/labels"
)

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteText writes the summary table and, per rule, its firing periods.
func WriteText(w io.Writer, rep *Report) error {
	fmt.Fprintf(w, "Backtest %s .. %s (%s), %d rules, %d evaluations, %d queries\n\n",
		rep.From.UTC().Format(time.RFC3339), rep.To.UTC().Format(time.RFC3339), shortDur(rep.To.Sub(rep.From)),
		len(rep.Rules), rep.Evaluations, rep.Queries)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tTHRESHOLD\tFIRED\tRESOLVED\tNOTIFICATIONS\tTIME FIRING\tLONGEST\tFLAPS\t")
	for _, r := range rep.Rules {
		th := "-"
		if r.Threshold != nil {
			th = r.Threshold.Op + " " + fmtFloat(r.Threshold.Value)
			if r.Threshold.Overridden {
				th += " (was " + fmtFloat(r.Threshold.Original) + ")"
			}
		}
		if r.Error != "" && r.Chart == nil && len(r.Firing) == 0 {
			fmt.Fprintf(tw, "%s\t%s\terror\t\t\t\t\t\t\n", r.Name, th)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%d\t\n", r.Name, th, r.Fired, r.Resolved, r.Notifications,
			shortDur(time.Duration(r.TimeFiring)), shortDur(time.Duration(r.Longest)), r.Flaps)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	g := rep.Grouping
	fmt.Fprintf(w, "\nNotifications: Alertmanager grouping by %s, group_wait %s, group_interval %s, repeat_interval %s, send_resolved %t.\n",
		strings.Join(g.GroupBy, ","), shortDur(time.Duration(g.GroupWait)), shortDur(time.Duration(g.GroupInterval)), shortDur(time.Duration(g.RepeatInterval)), g.SendResolved)
	for _, r := range rep.Rules {
		if r.Error == "" && len(r.Firing) == 0 && r.EvalErrors == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s  (%s, for %s", r.Name, r.Expr, shortDur(time.Duration(r.For)))
		if r.KeepFiringFor > 0 {
			fmt.Fprintf(w, ", keep_firing_for %s", shortDur(time.Duration(r.KeepFiringFor)))
		}
		fmt.Fprintln(w, ")")
		if r.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", r.Error)
		}
		if r.EvalErrors > 0 {
			fmt.Fprintf(w, "  %d evaluations failed (duplicate label sets or group limit)\n", r.EvalErrors)
		}
		for _, iv := range r.Firing {
			end := iv.End.UTC().Format(time.RFC3339)
			if iv.Open {
				end = "(still firing)"
			}
			fmt.Fprintf(w, "  firing  %s .. %s  %-8s  %s\n", iv.Start.UTC().Format(time.RFC3339), end,
				shortDur(time.Duration(iv.Duration)), labelString(iv.Labels))
		}
	}
	return nil
}

func labelString(m map[string]string) string {
	l := labels.FromMap(m)
	b := labels.NewBuilder(l)
	b.Del(labels.AlertName)
	return b.Labels().String()
}

func fmtFloat(f float64) string { return fmt.Sprintf("%g", f) }

// shortDur prints 1h30m rather than 1h30m0s.
func shortDur(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
