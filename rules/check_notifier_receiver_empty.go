package rules

import (
	"strconv"
	"strings"
)

// A receiver with no integration drops what is routed to it. Sometimes
// that is the point (a "null" receiver for alerts nobody wants); the
// finding says where the alerts go, so that it is a decision.
var checkNotifierReceiverEmpty = &Check{
	Name:     "notifier/receiver-empty",
	Help:     "A receiver that routes use but that has no integration (no slack_configs, webhook_configs...): the alerts routed to it notify nobody.",
	Severity: Warning,
	Notifier: lintReceiverEmpty,
}

func lintReceiverEmpty(p *Pass, n *Notifier) {
	routes := map[string][]int{}
	n.Route.walk(func(r *Route) {
		if r.Receiver.Value != "" {
			routes[r.Receiver.Value] = append(routes[r.Receiver.Value], r.Receiver.Node.Line)
		}
	})
	for _, r := range n.Receivers {
		lines, used := routes[r.Name.Value]
		if !used || r.Integrations > 0 {
			continue
		}
		also := ""
		if n.Forwards {
			also = " (paged still forwards them to the alertmanagers: it lists)"
		}
		p.ReportNode(r.Name.Node, "receiver %q has no integration: the alerts the %s send to it notify nobody%s",
			r.Name.Value, linesOf("route", lines), also)
	}
}

// linesOf names things by their lines: "route at line 4", "routes at
// lines 4, 9".
func linesOf(what string, lines []int) string {
	s := make([]string, len(lines))
	for i, l := range lines {
		s[i] = strconv.Itoa(l)
	}
	if len(lines) == 1 {
		return what + " at line " + s[0]
	}
	return what + "s at lines " + strings.Join(s, ", ")
}
