package rules

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// foreignFile says what a YAML or JSON document without a groups: key is,
// when it is a file people often pass to a rule linter by mistake (a
// promtool unit-test file, a CRD, an Alertmanager configuration), so that
// the user gets one finding that says what to do instead of one "field
// not found" per key.
func foreignFile(m *yaml.Node) string {
	has := func(k string) bool { return mapValue(m, k) != nil }
	if has("groups") {
		return ""
	}
	switch {
	case has("tests"):
		return "this is a unit-test file (it has tests:, no groups:): run it with `paged test` (or promtool test rules), and lint the rule files its rule_files: list"
	case has("apiVersion") && has("kind"):
		kind := scalarValue(mapValue(m, "kind"))
		if kind == "CustomResourceDefinition" {
			name := ""
			if md := mapValue(m, "metadata"); md != nil && md.Kind == yaml.MappingNode {
				name = scalarValue(mapValue(md, "name"))
			}
			if name != "" {
				name = " " + name
			}
			return fmt.Sprintf("this is the CustomResourceDefinition%s, which declares a resource type and holds no rules: lint the PrometheusRule manifests instead", name)
		}
		return fmt.Sprintf("this is a Kubernetes %s manifest, not rules: paged lints Prometheus rule files and PrometheusRule manifests", kind)
	case has("scrape_configs") || (has("rule_files") && has("global")):
		return "this is a Prometheus configuration, not a rule file: lint the files its rule_files: list (or use --paged-config for a paged.yaml)"
	case has("route") || has("receivers") || has("inhibit_rules"):
		return "this is an Alertmanager configuration, not a rule file: check it with amtool check-config"
	case has("receiver") && has("alerts"):
		return "this is an Alertmanager webhook payload (receiver:, status:, alerts:), not a rule file"
	case has("openapi") || has("swagger"):
		return "this is an OpenAPI document, not a rule file"
	}
	var keys []string
	for i := 0; i+1 < len(m.Content) && len(keys) < 5; i += 2 {
		keys = append(keys, m.Content[i].Value)
	}
	return fmt.Sprintf("this is not a rule file: it has no groups: key (its top level has %s)", strings.Join(keys, ", "))
}

func scalarValue(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}
