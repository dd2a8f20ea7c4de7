package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
)

// TestAPIShapeMatchesPrometheus loads the same rule file into Debian's
// Prometheus and into paged and compares /api/v1/rules and /api/v1/alerts:
// every key Prometheus returns must be in paged's answer with the same JSON
// type (paged may add keys, such as an alert's "stale"), and the values
// that do not depend on timing must be equal.
//
// Debian ships Prometheus 2.42; paged follows Prometheus 3's API, which is a
// superset of 2.42's for these endpoints (e.g. keepFiringSince), so the
// comparison runs from Prometheus's keys to paged's.
func TestAPIShapeMatchesPrometheus(t *testing.T) {
	rulesFile, err := filepath.Abs("testdata/rules/shape.rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	prom := testbin.StartPrometheus(t, fmt.Sprintf("global: {evaluation_interval: 1s}\nrule_files: [%q]\n", rulesFile))

	ts := newTestServer(t, configWith(fmt.Sprintf("%q", rulesFile)), nil, nil)
	ts.EvalAll(time.Now())

	// Wait (polling: Prometheus is an external process) until Prometheus has
	// evaluated every rule of the group and the firing alert is there. It
	// updates a rule's state as it evaluates it, so on a busy machine an
	// answer can show the first rule firing and the others not yet
	// evaluated ("health": "unknown").
	var promRules map[string]any
	deadline := time.Now().Add(30 * time.Second)
	for {
		promRules = getJSON(t, prom.URL+"/api/v1/rules")
		if text := mustJSON(promRules); strings.Contains(text, `"state":"firing"`) && !strings.Contains(text, `"health":"unknown"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus did not evaluate the whole group with ShapeFiring firing in 30s: %s\n%s", mustJSON(promRules), prom.Output())
		}
		time.Sleep(200 * time.Millisecond)
	}
	pagedRules := decodeJSON(t, ts.get(t, "/api/v1/rules"))
	compareShape(t, "rules", promRules, pagedRules)
	compareValues(t, promRules, pagedRules, []string{
		"status", "name", "file", "interval", "limit", "query", "duration", "keepFiringFor",
		"labels", "annotations", "state", "health", "type", "value", "lastError",
	})

	promAlerts := getJSON(t, prom.URL+"/api/v1/alerts")
	pagedAlerts := decodeJSON(t, ts.get(t, "/api/v1/alerts"))
	sortAlerts(promAlerts)
	sortAlerts(pagedAlerts)
	compareShape(t, "alerts", promAlerts, pagedAlerts)
	compareValues(t, promAlerts, pagedAlerts, []string{"status", "labels", "annotations", "state", "value"})
	if n := len(pagedAlerts["data"].(map[string]any)["alerts"].([]any)); n != 2 {
		t.Errorf("paged lists %d alerts, want 2 (one firing, one pending)", n)
	}
}

func (ts *testServer) get(t *testing.T, path string) string {
	t.Helper()
	code, body := ts.Do(t, http.MethodGet, path, nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s = %d %s", path, code, body)
	}
	return body
}

func getJSON(t *testing.T, url string) map[string]any {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return decodeJSON(t, string(b))
}

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON %v: %s", err, s)
	}
	return v
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func sortAlerts(resp map[string]any) {
	alerts := resp["data"].(map[string]any)["alerts"].([]any)
	slices.SortFunc(alerts, func(a, b any) int {
		return strings.Compare(mustJSON(a.(map[string]any)["labels"]), mustJSON(b.(map[string]any)["labels"]))
	})
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	}
	return fmt.Sprintf("%T", v)
}

// compareShape requires every key of want (Prometheus) in got (paged), with
// the same JSON type, recursively; arrays must have the same length.
func compareShape(t *testing.T, path string, want, got any) {
	t.Helper()
	if jsonType(want) != jsonType(got) {
		t.Errorf("%s: Prometheus has %s, paged has %s", path, jsonType(want), jsonType(got))
		return
	}
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		// labels and annotations are free-form maps: compared by value.
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				t.Errorf("%s: paged lacks key %q", path, k)
				continue
			}
			compareShape(t, path+"."+k, wv, gv)
		}
	case []any:
		g := got.([]any)
		if len(w) != len(g) {
			t.Errorf("%s: Prometheus has %d elements, paged %d", path, len(w), len(g))
			return
		}
		for i := range w {
			compareShape(t, fmt.Sprintf("%s[%d]", path, i), w[i], g[i])
		}
	}
}

// compareValues requires equal values for the named keys wherever they
// occur in want.
func compareValues(t *testing.T, want, got map[string]any, keys []string) {
	t.Helper()
	var walk func(path string, w, g any)
	walk = func(path string, w, g any) {
		switch wv := w.(type) {
		case map[string]any:
			gm, ok := g.(map[string]any)
			if !ok {
				return
			}
			for k, v := range wv {
				if slices.Contains(keys, k) {
					if _, isObj := v.(map[string]any); !isObj || k == "labels" || k == "annotations" {
						if !reflect.DeepEqual(v, gm[k]) {
							t.Errorf("%s.%s: Prometheus %v, paged %v", path, k, mustJSON(v), mustJSON(gm[k]))
						}
						continue
					}
				}
				walk(path+"."+k, v, gm[k])
			}
		case []any:
			gs, ok := g.([]any)
			if !ok {
				return
			}
			for i := range min(len(wv), len(gs)) {
				walk(fmt.Sprintf("%s[%d]", path, i), wv[i], gs[i])
			}
		}
	}
	walk("", want, got)
}
