package rules

// group_by on a label no alert carries groups by an empty value: it keeps
// apart nothing, and a team that meant "one message per cluster" gets one
// message for all of them.
var checkNotifierGroupBy = &Check{
	Name:     "notifier/group-by",
	Help:     "group_by labels that no alert able to reach the route carries (of the loaded rules and paged's built-in alerts): the grouping keeps nothing apart.",
	Severity: Warning,
	Notifier: lintGroupBy,
}

func lintGroupBy(p *Pass, n *Notifier) {
	if n.Alerts == nil {
		return
	}
	n.Route.walk(func(r *Route) {
		if len(r.GroupBy) == 0 {
			return
		}
		reach, ok := reaching(n.Alerts, r)
		if !ok || len(reach) == 0 {
			return
		}
		for _, l := range r.GroupBy {
			if l.Value == "..." || carriedBy(reach, l.Value) {
				continue
			}
			p.ReportNode(l.Node, "group_by label %q is on none of the alerts that can reach this route (%s): every alert has it empty, so it groups nothing apart",
				l.Value, alertNames(reach))
		}
	})
}

// reaching returns the alerts that can satisfy the matchers of r and of
// its ancestors; ok is false when one of them is not known.
func reaching(alerts []*PossibleAlert, r *Route) ([]*PossibleAlert, bool) {
	ms, ok := r.path()
	if !ok {
		return nil, false
	}
	return matching(alerts, ms), true
}
