package rules_test

import (
	"slices"
	"testing"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/rules"
)

// The notifier checks count paged's built-in alerts among the alerts a
// route or inhibit rule can see: their names are the engine's.
func TestBuiltinAlertsAreTheEngines(t *testing.T) {
	var got []string
	for _, b := range rules.BuiltinAlerts {
		got = append(got, b.Name)
	}
	want := []string{engine.DatasourceDownAlert, engine.StateCorruptedAlert, engine.StateWriteFailingAlert, engine.ReloadFailedAlert, engine.RuleNoSeriesAlert}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("rules.BuiltinAlerts names %v, the engine raises %v", got, want)
	}
}
