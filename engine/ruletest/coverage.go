package ruletest

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"go.yaml.in/yaml/v3"
)

// Coverage lists every alerting rule of the rule files the tests loaded and
// the test cases that exercise it. A rule is covered when at least one
// alert_rule_test case expects it firing (non-empty exp_alerts) and at least
// one expects it not firing (empty exp_alerts).
type Coverage struct {
	Alerts []AlertCoverage
}

// AlertCoverage is one alerting rule and the cases that assert on it.
type AlertCoverage struct {
	File      string // rule file
	Line      int    // line of its alert: key, 0 when unknown
	Group     string
	Alert     string
	Firing    []CaseRef
	NotFiring []CaseRef
}

// Covered reports whether the rule is tested both firing and not firing.
func (a AlertCoverage) Covered() bool { return len(a.Firing) > 0 && len(a.NotFiring) > 0 }

// CaseRef names a test case: its position and its test group.
type CaseRef struct {
	Pos   Pos
	Group string
}

// Counts returns how many alerting rules are covered, and how many there are.
func (c *Coverage) Counts() (covered, total int) {
	for _, a := range c.Alerts {
		if a.Covered() {
			covered++
		}
	}
	return covered, len(c.Alerts)
}

// Percent is the covered share in percent; 100 when there is no alerting rule.
func (c *Coverage) Percent() float64 {
	covered, total := c.Counts()
	if total == 0 {
		return 100
	}
	return 100 * float64(covered) / float64(total)
}

// WriteText prints the coverage table and the summary line.
func (c *Coverage) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "Alert coverage:")
	fmt.Fprintln(tw, "  STATUS\tALERT\tRULE FILE\tFIRING\tNOT FIRING")
	for _, a := range c.Alerts {
		status := "ok"
		if !a.Covered() {
			status = "MISSING"
		}
		where := a.File
		if a.Line > 0 {
			where = fmt.Sprintf("%s:%d", a.File, a.Line)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", status, a.Alert, where, refsText(a.Firing), refsText(a.NotFiring))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	covered, total := c.Counts()
	_, err := fmt.Fprintf(w, "coverage: %d/%d alerting rules tested firing and not firing (%.1f%%)\n", covered, total, c.Percent())
	return err
}

func refsText(refs []CaseRef) string {
	switch len(refs) {
	case 0:
		return "-"
	case 1:
		return refs[0].Pos.String()
	}
	return fmt.Sprintf("%s (+%d)", refs[0].Pos, len(refs)-1)
}

// coverage collects, during a run, which cases assert on which alert names
// of which rule files.
type coverage struct {
	mu    sync.Mutex
	cases map[covKey]*covCases
}

type covKey struct{ file, alert string }

type covCases struct{ firing, notFiring []CaseRef }

func newCoverage() *coverage { return &coverage{cases: map[covKey]*covCases{}} }

func (c *coverage) record(ruleFiles []string, alert string, firing bool, ref CaseRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range ruleFiles {
		k := covKey{f, alert}
		cc := c.cases[k]
		if cc == nil {
			cc = &covCases{}
			c.cases[k] = cc
		}
		if firing {
			cc.firing = append(cc.firing, ref)
		} else {
			cc.notFiring = append(cc.notFiring, ref)
		}
	}
}

// result lists the alerting rules of every rule file loaded without error,
// in load order.
func (c *coverage) result(rc *ruleCache) *Coverage {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := &Coverage{}
	seen := map[string]bool{}
	for _, k := range rc.order {
		e := rc.files[k]
		if seen[k.path] || e.groups == nil || len(e.errs) > 0 {
			continue
		}
		seen[k.path] = true
		lines := ruleAlertLines(k.path)
		for gi, g := range e.groups.Groups {
			for ri, rule := range g.Rules {
				if rule.Alert == "" {
					continue
				}
				a := AlertCoverage{File: k.path, Line: lines[[2]int{gi, ri}], Group: g.Name, Alert: rule.Alert}
				if cc := c.cases[covKey{k.path, rule.Alert}]; cc != nil {
					a.Firing, a.NotFiring = sortedRefs(cc.firing), sortedRefs(cc.notFiring)
				}
				out.Alerts = append(out.Alerts, a)
			}
		}
	}
	// Test groups run concurrently, so load order varies: sort by file.
	slices.SortStableFunc(out.Alerts, func(a, b AlertCoverage) int { return strings.Compare(a.File, b.File) })
	return out
}

func sortedRefs(refs []CaseRef) []CaseRef {
	refs = slices.Clone(refs)
	slices.SortFunc(refs, func(a, b CaseRef) int {
		return cmp.Or(strings.Compare(a.Pos.Path, b.Pos.Path), cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
	})
	return refs
}

// ruleAlertLines finds the line of each alert: key, by group and rule index. It
// is best effort: positions only make the report easier to follow.
func ruleAlertLines(path string) map[[2]int]int {
	out := map[[2]int]int{}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 {
		return out
	}
	groups := mapValue(doc.Content[0], "groups")
	if groups == nil {
		// A PrometheusRule CRD keeps its groups under spec.
		groups = mapValue(mapValue(doc.Content[0], "spec"), "groups")
	}
	if groups == nil || groups.Kind != yaml.SequenceNode {
		return out
	}
	for gi, g := range groups.Content {
		rs := mapValue(g, "rules")
		if rs == nil || rs.Kind != yaml.SequenceNode {
			continue
		}
		for ri, r := range rs.Content {
			if a := mapValue(r, "alert"); a != nil {
				out[[2]int{gi, ri}] = a.Line
			}
		}
	}
	return out
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	n = Deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return Deref(n.Content[i+1])
		}
	}
	return nil
}
