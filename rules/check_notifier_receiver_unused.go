package rules

// A receiver no route names is configuration nobody reads: often a
// receiver a route was meant to use, under another name.
var checkNotifierReceiverUnused = &Check{
	Name:     "notifier/receiver-unused",
	Help:     "A receiver that no route names: no alert is ever sent to it.",
	Severity: Warning,
	Notifier: lintReceiverUnused,
}

func lintReceiverUnused(p *Pass, n *Notifier) {
	if n.Route == nil {
		return // paged sends everything to the only receiver
	}
	used := map[string]bool{}
	n.Route.walk(func(r *Route) { used[r.Receiver.Value] = true })
	for _, r := range n.Receivers {
		if r.Name.Value == "" || used[r.Name.Value] {
			continue
		}
		p.ReportNode(r.Name.Node, "receiver %q is not used: no route sends to it", r.Name.Value)
	}
}
