package rules

import (
	"testing"
)

// The policy checks report at info while paged's defaults stand and at
// warning once the team writes its policy in .paged-lint.yaml, whatever
// the policy says; a severity override still wins.
func TestPolicySeverity(t *testing.T) {
	const rules = `groups:
  - name: g
    rules:
      - alert: Bare
        expr: up == 0
`
	cases := []struct {
		name, config string
		want         map[string]Severity // check -> severity of its findings
	}{
		{"defaults", "", map[string]Severity{"alerts/annotations": Info, "alerts/labels": Info}},
		{"annotations set", "required_annotations: [summary, runbook_url]\n",
			map[string]Severity{"alerts/annotations": Warning, "alerts/labels": Info}},
		{"labels set", "required_labels: {severity: [critical, warning], team: []}\n",
			map[string]Severity{"alerts/annotations": Info, "alerts/labels": Warning}},
		{"override wins", "required_annotations: [summary]\nseverity: {alerts/annotations: error, alerts/labels: warning}\n",
			map[string]Severity{"alerts/annotations": Error, "alerts/labels": Warning}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig(".paged-lint.yaml", []byte(tc.config))
			if err != nil {
				t.Fatal(err)
			}
			cfg.Only = []string{"alerts/annotations", "alerts/labels"}
			f := ParseFile("r.yaml", []byte(rules), ParseOptions{})
			seen := map[string]int{}
			for _, fd := range Lint([]*File{f}, cfg) {
				want, ok := tc.want[fd.Check]
				if !ok {
					continue
				}
				seen[fd.Check]++
				if fd.Severity != want {
					t.Errorf("%s: got %s, want %s", fd, fd.Severity, want)
				}
			}
			for check := range tc.want {
				if seen[check] == 0 {
					t.Errorf("%s reported nothing", check)
				}
			}
		})
	}
}
