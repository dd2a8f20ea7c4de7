package report

import (
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteJSON writes the report as one JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report as the terminal shows it.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	loc, _ := time.LoadLocation(r.TimeZone)
	if loc == nil {
		loc = time.UTC
	}
	fmt.Fprintf(tw, "Paging from %s to %s\n", r.From.In(loc).Format("2006-01-02 15:04 MST"), r.To.In(loc).Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(tw, "%d pages, %d outside working hours (%s %s, %s); %d events read\n",
		r.Pages, r.PagesOutsideHours, strings.Join(r.WorkingDays, ","), r.WorkingHours, r.TimeZone, r.Events)

	section(tw, "Noisiest alerts")
	if len(r.Noisiest) == 0 {
		fmt.Fprintln(tw, "  none paged")
	} else {
		fmt.Fprintln(tw, "  Alert\tPages\tOutside hours\tAcknowledged\tFired\tResolved")
		for _, a := range r.Noisiest {
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%d\n", a.Alertname, a.Pages, a.PagesOutsideHours, a.Acknowledged, a.Fired, a.Resolved)
		}
	}

	section(tw, "Pages per receiver")
	if len(r.Receivers) == 0 {
		fmt.Fprintln(tw, "  none")
	} else {
		fmt.Fprintln(tw, "  Receiver\tPages\tOutside hours\tFailed deliveries")
		for _, rs := range r.Receivers {
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\n", rs.Receiver, rs.Pages, rs.PagesOutsideHours, rs.Failures)
		}
	}

	section(tw, fmt.Sprintf("Flapping (fired and resolved more than %d times)", r.FlappingThreshold))
	if len(r.Flapping) == 0 {
		fmt.Fprintln(tw, "  none")
	} else {
		fmt.Fprintln(tw, "  Alert\tFired\tResolved\tLabels")
		for _, f := range r.Flapping {
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\n", f.Alertname, f.Fired, f.Resolved, LabelText(f.Labels))
		}
	}

	section(tw, "Acknowledgement")
	a := r.Acknowledgement
	fmt.Fprintf(tw, "  %d of %d pages acknowledged; time to acknowledge: median %s, p90 %s\n", a.Acknowledged, a.Pages, a.Median, a.P90)
	fmt.Fprintf(tw, "  %d pages never acknowledged", a.Never)
	if len(a.NeverAlerts) > 0 {
		fmt.Fprintf(tw, "; alerts never acknowledged: %s", strings.Join(a.NeverAlerts, ", "))
	}
	fmt.Fprintln(tw)

	section(tw, "Silences by who")
	if len(r.Silences) == 0 {
		fmt.Fprintln(tw, "  none")
	} else {
		fmt.Fprintln(tw, "  User\tCreated\tTotal\tLongest\tExpired early")
		for _, s := range r.Silences {
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%d\n", s.User, s.Created, s.Total, s.Longest, s.Expired)
		}
	}

	section(tw, "Delivery failures")
	if len(r.Failures) == 0 {
		fmt.Fprintln(tw, "  none")
	} else {
		fmt.Fprintln(tw, "  Receiver\tIntegration\tFailures\tLast\tLast error")
		for _, f := range r.Failures {
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\n", f.Receiver, f.Integration, f.Failures, f.Last.In(loc).Format("2006-01-02 15:04:05"), oneLine(f.LastError, 120))
		}
	}
	return tw.Flush()
}

func section(w io.Writer, title string) { fmt.Fprintf(w, "\n%s\n", title) }

// LabelText is a label set as the terminal shows it: name=value pairs
// sorted by name, alertname left out (it is shown beside them).
func LabelText(ls map[string]string) string {
	keys := make([]string, 0, len(ls))
	for k := range ls {
		if k != "alertname" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + ls[k]
	}
	return strings.Join(parts, " ")
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

//go:embed report.html
var htmlFS embed.FS

var htmlTmpl = template.Must(template.New("report.html").Funcs(template.FuncMap{
	"labels": LabelText,
	"pct": func(n, of int) int {
		if of == 0 {
			return 0
		}
		return n * 100 / of
	},
	"maxPages": func(as []AlertStats) int {
		m := 0
		for _, a := range as {
			m = max(m, a.Pages)
		}
		return m
	},
	"when": func(t time.Time, tz string) string {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			loc = time.UTC
		}
		return t.In(loc).Format("2006-01-02 15:04 MST")
	},
	"short": func(s string) string { return oneLine(s, 200) },
}).ParseFS(htmlFS, "report.html"))

// WriteHTML writes the report as one self-contained HTML page: no
// script, no style sheet or image to fetch; the charts are bars drawn
// with CSS.
func (r *Report) WriteHTML(w io.Writer) error {
	return htmlTmpl.Execute(w, r)
}
