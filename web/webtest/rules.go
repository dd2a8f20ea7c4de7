package webtest

import (
	_ "embed" // the rule files
	"strings"
)

// BasicRules is basic.rules.yaml: an alert that always fires
// (AlwaysFiring, severity warning) and a recording rule (basic:three),
// both evaluated every second and needing no data.
//
//go:embed basic.rules.yaml
var BasicRules string

// OtherRules is other.rules.yaml, a second rule file: group other, alert
// OtherFiring (severity critical).
//
//go:embed other.rules.yaml
var OtherRules string

// ConfigWith is the smallest paged.yaml: a remote datasource that never
// answers (127.0.0.1:9) and ruleFiles (a YAML flow list's items) as
// rule_files.
func ConfigWith(ruleFiles string) string {
	return strings.Replace(minimalConfig, "%s", ruleFiles, 1)
}

const minimalConfig = `
datasource:
  prometheus: {url: "http://127.0.0.1:9"}
rule_files: [%s]
`
