package engine

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

// alertDetails writes what json.Marshal writes of the same details in a
// map, which history readers and earlier files have.
func TestAlertDetailsAsJSONMarshal(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.FixedZone("CET", 3600))
	for _, value := range []float64{0, 1, -0.5, 0.93, 123456.789, 1e-6, 1e-7, 1.5e-9, 1e20, 1e21, 3.2e25, -4e-8, math.MaxFloat64, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1)} {
		for _, activeAt := range []time.Time{{}, at} {
			for _, reason := range []string{"", `query failed: "timeout" <after 10s> & more` + "\n"} {
				group := `vllm <"pack">`
				want := map[string]any{"group": group}
				if !math.IsNaN(value) && !math.IsInf(value, 0) {
					want["value"] = value
				}
				if !activeAt.IsZero() {
					want["active_at"] = activeAt.UTC().Format(time.RFC3339Nano)
				}
				var errText []byte
				if reason != "" {
					want["error"] = reason
					errText = jsonString(reason)
				}
				w, err := json.Marshal(want)
				if err != nil {
					t.Fatal(err)
				}
				if got := alertDetails(value, activeAt, errText, jsonString(group)); string(got) != string(w) {
					t.Errorf("value %v, active at %v, error %q:\n got %s\nwant %s", value, activeAt, reason, got, w)
				}
			}
		}
	}
}
