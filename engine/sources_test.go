package engine_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/prometheus/model/rulefmt"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/engine/enginetest"
	"github.com/pagedhq/paged/rules"
)

// Rule groups that come from no file (a pack with its overrides) run
// beside the files under their source name, fire like any rule, keep
// their state across a reload, and a broken source keeps the old rules.
func TestApplyRuleSources(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ds := enginetest.New(t)
		defer ds.Close()
		dir := t.TempDir()
		file := writeFile(t, dir, "queue.rules.yaml", queueRules)
		ds.Set(t, `queue_depth{instance="a"}`, time.Now(), 12)
		pack := rules.ParseFile("pack:queue", []byte(strings.ReplaceAll(queueRules, "QueueBacklog", "PackQueueBacklog")), rules.ParseOptions{})
		src := engine.RuleSource{Name: "pack:queue", Groups: pack.RuleGroups()}
		e := start(t, engine.Options{Datasource: ds, StoragePath: t.TempDir()}, nil, settings())
		defer e.stop()
		if err := e.ApplyRuleSources([]string{file}, []engine.RuleSource{src}, settings()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(25 * time.Second)
		synctest.Wait()
		var files []string
		for _, g := range e.RuleGroups() {
			files = append(files, g.File())
		}
		if len(files) != 2 || !strings.Contains(strings.Join(files, " "), "pack:queue") {
			t.Fatalf("group files %v", files)
		}
		before := activeAlerts(e.Engine, "PackQueueBacklog")
		if len(before) != 1 {
			t.Fatalf("pack alert: %+v", before)
		}

		broken := engine.RuleSource{Name: "pack:broken", Groups: &rulefmt.RuleGroups{Groups: []rulefmt.RuleGroup{{
			Name: "b", Rules: []rulefmt.Rule{{Alert: "B", Expr: "rate(x[5m]"}},
		}}}}
		err := e.ApplyRuleSources([]string{file}, []engine.RuleSource{src, broken}, settings())
		if err == nil || !strings.Contains(err.Error(), `pack:broken: group "b", rule "B"`) || !strings.Contains(err.Error(), "previous rules kept") {
			t.Fatalf("broken source: %v", err)
		}
		err = e.ApplyRuleSources(nil, []engine.RuleSource{src, src}, settings())
		if err == nil || !strings.Contains(err.Error(), "pack:queue: loaded twice") {
			t.Fatalf("same source twice: %v", err)
		}
		if len(e.RuleGroups()) != 2 {
			t.Fatalf("groups after failed applies: %d", len(e.RuleGroups()))
		}

		// Reload without the file: the pack's group keeps its state.
		if err := e.ApplyRuleSources(nil, []engine.RuleSource{src}, settings()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		after := activeAlerts(e.Engine, "PackQueueBacklog")
		if len(e.RuleGroups()) != 1 || len(after) != 1 || !after[0].ActiveAt.Equal(before[0].ActiveAt) {
			t.Errorf("after reload: %d groups, alerts %+v (before %+v)", len(e.RuleGroups()), after, before)
		}
	})
}
