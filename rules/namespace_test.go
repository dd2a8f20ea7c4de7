package rules_test

import (
	"strings"
	"testing"

	"github.com/pagedhq/paged/rules"
)

// A Mimir/Cortex ruler namespace file (mimirtool rules load) is read with
// every document, group names unique per namespace, and its problems at
// their positions.
func TestMimirNamespaceFile(t *testing.T) {
	good := `namespace: vllm
groups:
  - name: g
    source_tenants: [a, b]
    rules:
      - alert: A
        expr: up == 0
---
namespace: other
groups:
  - name: g
    rules:
      - record: r
        expr: sum(up)
`
	f := rules.ParseFile("ns.yaml", []byte(good), rules.ParseOptions{})
	if f.Kind != rules.KindMimir || len(f.Problems) != 0 {
		t.Fatalf("kind %v, problems %v", f.Kind, f.Problems)
	}
	if len(f.Groups) != 2 || f.Groups[1].Rules[0].Name() != "r" {
		t.Fatalf("groups %+v", f.Groups)
	}

	bad := `namespace: ""
groups:
  - name: g
    rules:
      - alert: A
        expr: up ==
  - name: g
    rules: []
tenant: x
`
	f = rules.ParseFile("ns.yaml", []byte(bad), rules.ParseOptions{})
	var got []string
	for _, p := range f.Problems {
		got = append(got, p.String())
	}
	want := []string{
		`ns.yaml:1:12: error [rule/structure] namespace must not be empty`,
		`ns.yaml:6:19: error [promql/syntax] could not parse expression: unexpected end of input`,
		`ns.yaml:7:11: error [rule/structure] groupname: "g" is repeated in the same file`,
		`ns.yaml:9:1: error [rule/structure] field tenant not found in ruler namespace`,
	}
	if len(got) != len(want) {
		t.Fatalf("problems:\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d = %q, want prefix %q", i, got[i], want[i])
		}
	}

	// source_tenants is Mimir's: a Prometheus rule file may not have it.
	f = rules.ParseFile("p.yaml", []byte("groups:\n  - name: g\n    source_tenants: [a]\n    rules: []\n"), rules.ParseOptions{})
	if len(f.Problems) != 1 || !strings.Contains(f.Problems[0].Message, "Mimir extension") {
		t.Errorf("source_tenants in a Prometheus file: %v", f.Problems)
	}
}
