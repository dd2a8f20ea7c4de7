package rules

// An alert without a summary or a runbook link leaves the person paged at
// 3 a.m. guessing.
var checkAlertsAnnotations = &Check{
	Name:     "alerts/annotations",
	Help:     "Alerts carry the required annotations (default: summary, runbook_url), not empty.",
	Severity: Warning,
	Rule:     lintRequiredAnnotations,
}

func lintRequiredAnnotations(p *Pass, r *Rule) {
	if !r.IsAlert() {
		return
	}
	for _, name := range p.Config.RequiredAnnotations {
		v, ok := r.Annotation(name)
		switch {
		case !ok:
			p.ReportNode(ruleNameNode(r), "alert %q has no %q annotation", r.Name(), name)
		case v.Value == "":
			p.ReportNode(v.Node, "annotation %q is empty", name)
		}
	}
}
