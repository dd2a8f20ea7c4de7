package rules

// A time interval without a location is read in UTC. When the others of
// the same file name a time zone, the one that does not is most likely a
// forgotten line: a mute window an hour or more off.
var checkNotifierTimeLocation = &Check{
	Name:     "notifier/time-location",
	Help:     "A time_intervals range without a location (read in UTC) where the file's other ranges name one.",
	Severity: Warning,
	Notifier: lintTimeLocation,
}

func lintTimeLocation(p *Pass, n *Notifier) {
	var with *TimeRange
	for _, ti := range n.Intervals {
		for i := range ti.Ranges {
			if ti.Ranges[i].Location.Value != "" {
				with = &ti.Ranges[i]
				break
			}
		}
		if with != nil {
			break
		}
	}
	if with == nil {
		return
	}
	for _, ti := range n.Intervals {
		for _, r := range ti.Ranges {
			if r.Location.Value != "" {
				continue
			}
			p.ReportNode(routeAnchor(&Route{Node: r.Node}), "time interval %q has a range without location: it is read in UTC, while the range at line %d is in %s",
				ti.Name.Value, with.Location.Node.Line, with.Location.Value)
		}
	}
}
