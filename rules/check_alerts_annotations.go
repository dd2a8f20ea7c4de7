package rules

// An alert without a summary or a runbook link leaves the person paged at
// 3 a.m. guessing. It is the team's policy, not a bug in the rule: info
// until the team writes required_annotations in .paged-lint.yaml, then
// warning.
var checkAlertsAnnotations = &Check{
	Name: "alerts/annotations",
	Help: "Alerts carry the required annotations (default: summary, runbook_url), not empty. A policy check: info while the " +
		"defaults stand, warning once .paged-lint.yaml sets required_annotations.",
	Severity: Info,
	Rule:     lintRequiredAnnotations,
}

// policySeverity is the severity of a policy check's findings: warning
// when the team wrote the policy, info for paged's defaults.
func policySeverity(set bool) Severity {
	if set {
		return Warning
	}
	return Info
}

func lintRequiredAnnotations(p *Pass, r *Rule) {
	if !r.IsAlert() {
		return
	}
	sev := policySeverity(p.Config.RequiredAnnotationsSet)
	for _, name := range p.Config.RequiredAnnotations {
		v, ok := r.Annotation(name)
		switch {
		case !ok:
			p.ReportSeverity(sev, p.File.NodeRange(ruleNameNode(r)), "alert %q has no %q annotation", r.Name(), name)
		case v.Value == "":
			p.ReportSeverity(sev, p.File.NodeRange(v.Node), "annotation %q is empty", name)
		}
	}
}
