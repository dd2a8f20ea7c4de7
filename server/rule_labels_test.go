package server

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/rules"
)

// Rules' alerts reach the notifier with label values cut to
// web.max_label_value_bytes: valid UTF-8, distinct when the values differ
// only past the cut, the engine's alerts untouched, short values passed
// as they are.
func TestRuleLabelValuesCut(t *testing.T) {
	s := &Server{}
	cfg := config.Default()
	cfg.Web.MaxLabelValueBytes = 100
	s.cfg.Store(cfg)
	reg := prometheus.NewRegistry()
	var got []*rules.Alert
	notify := s.limitRuleLabels(func(_ context.Context, as []*rules.Alert) { got = as }, reg)

	long1 := strings.Repeat("é", 200) + "1" // 401 bytes, two-byte characters
	long2 := strings.Repeat("é", 200) + "2"
	in := []*rules.Alert{
		{Labels: labels.FromStrings("alertname", "Short", "v", "small")},
		{Labels: labels.FromStrings("alertname", "Long", "v", long1)},
		{Labels: labels.FromStrings("alertname", "Long", "v", long2)},
	}
	notify(context.Background(), in)
	if len(got) != 3 || got[0] != in[0] {
		t.Fatalf("got %d alerts (first passed as is: %v), want 3 with the short one unchanged", len(got), len(got) > 0 && got[0] == in[0])
	}
	if in[1].Labels.Get("v") != long1 {
		t.Error("the engine's alert was changed")
	}
	v1, v2 := got[1].Labels.Get("v"), got[2].Labels.Get("v")
	for _, v := range []string{v1, v2} {
		if len(v) > 100 || !utf8.ValidString(v) || !strings.HasPrefix(v, "éé") || !strings.Contains(v, "…") {
			t.Errorf("cut value %q (%d bytes): want at most 100 bytes of valid UTF-8, the start kept and …", v, len(v))
		}
	}
	if v1 == v2 {
		t.Errorf("values that differ past the cut were cut to the same %q", v1)
	}
	if got[1].Labels.Get("alertname") != "Long" {
		t.Errorf("other labels changed: %v", got[1].Labels)
	}
	if n, _ := testbin.GatherSum(reg, "paged_alert_label_values_cut_total"); n != 2 {
		t.Errorf("paged_alert_label_values_cut_total = %v, want 2", n)
	}
	for _, limit := range []int{1, 5, 19, 20, 21} {
		if v := cutValue(long1, limit); len(v) > limit || !utf8.ValidString(v) {
			t.Errorf("cutValue(…, %d) = %q, longer than the limit or broken", limit, v)
		}
	}
}
