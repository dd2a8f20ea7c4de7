package web

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	promrules "github.com/prometheus/prometheus/rules"

	"github.com/pagedhq/paged/web/webtest"
)

var otherRules = webtest.OtherRules

func TestReady(t *testing.T) {
	ts := newTestServer(t, configWith("rules/basic.rules.yaml"), map[string]string{"rules/basic.rules.yaml": basicRules}, nil)
	ts.Engine.SetReady(false, "datasource 127.0.0.1:9 has not answered yet: connection refused")
	code, body := ts.Do(t, http.MethodGet, "/-/ready", nil)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "connection refused") {
		t.Errorf("/-/ready while not ready = %d %q", code, body)
	}
	ts.Engine.SetReady(true, "")
	code, body = ts.Do(t, http.MethodGet, "/-/ready", nil)
	if code != http.StatusOK || !strings.Contains(body, "Ready") {
		t.Errorf("/-/ready when ready = %d %q", code, body)
	}
}

func TestAuthTokenGuardsMutatingEndpoints(t *testing.T) {
	ts := newTestServer(t, configWith("rules/basic.rules.yaml")+"web: {auth_token_file: token}\n", map[string]string{
		"rules/basic.rules.yaml": basicRules,
		"token":                  "tok-123\n",
	}, nil)
	for _, tc := range []struct {
		header string
		want   int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong", http.StatusUnauthorized},
		{"Basic tok-123", http.StatusUnauthorized},
		{"bearer tok-1234", http.StatusUnauthorized},
		{"Bearer tok-123", http.StatusOK},
		// The scheme is case-insensitive and may be followed by more
		// than one space (RFC 7235).
		{"bearer tok-123", http.StatusOK},
		{"BEARER   tok-123", http.StatusOK},
	} {
		h := http.Header{}
		if tc.header != "" {
			h.Set("Authorization", tc.header)
		}
		code, body := ts.Do(t, http.MethodPost, "/-/reload", h)
		if code != tc.want {
			t.Errorf("POST /-/reload with %q = %d %q, want %d", tc.header, code, body, tc.want)
		}
		if strings.Contains(body, "tok-123") {
			t.Errorf("response leaks the token: %q", body)
		}
	}
	if code, _ := ts.Do(t, http.MethodGet, "/api/v1/rules", nil); code != http.StatusOK {
		t.Errorf("GET /api/v1/rules needs no token, got %d", code)
	}
}

func TestRulesAndAlertsAPI(t *testing.T) {
	ts := newTestServer(t, configWith("rules/*.rules.yaml"), map[string]string{
		"rules/basic.rules.yaml": basicRules,
		"rules/other.rules.yaml": otherRules,
	}, nil)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ts.EvalAll(now)

	var rulesResp struct {
		Status string
		Data   struct {
			Groups []struct {
				Name  string
				Rules []map[string]any
			}
		}
	}
	code, body := ts.Do(t, http.MethodGet, "/api/v1/rules", nil)
	if code != 200 {
		t.Fatalf("/api/v1/rules = %d %s", code, body)
	}
	if err := json.Unmarshal([]byte(body), &rulesResp); err != nil {
		t.Fatal(err)
	}
	if rulesResp.Status != "success" || len(rulesResp.Data.Groups) != 2 || rulesResp.Data.Groups[0].Name != "basic" {
		t.Fatalf("unexpected rules response: %s", body)
	}
	r0 := rulesResp.Data.Groups[0].Rules[0]
	if r0["name"] != "AlwaysFiring" || r0["state"] != "firing" || r0["type"] != "alerting" || r0["health"] != "ok" {
		t.Errorf("rule = %v", r0)
	}
	alerts := r0["alerts"].([]any)
	a0 := alerts[0].(map[string]any)
	if a0["value"] != "1e+00" || a0["stale"] != false || a0["activeAt"] != "2026-01-02T03:04:05Z" {
		t.Errorf("alert = %v", a0)
	}
	if ann := a0["annotations"].(map[string]any); ann["summary"] != "value is 1" {
		t.Errorf("annotation not rendered: %v", ann)
	}

	for _, tc := range []struct {
		query string
		want  []string // rule names in order
	}{
		{"type=alert", []string{"AlwaysFiring", "OtherFiring"}},
		{"type=record", []string{"basic:three"}},
		{"rule_name[]=OtherFiring", []string{"OtherFiring"}},
		{"rule_group[]=basic", []string{"AlwaysFiring", "basic:three"}},
		{"match[]=" + "{severity=\"critical\"}", []string{"OtherFiring"}},
	} {
		_, body := ts.Do(t, http.MethodGet, "/api/v1/rules?"+strings.ReplaceAll(tc.query, "\"", "%22"), nil)
		var resp struct {
			Data struct {
				Groups []struct{ Rules []struct{ Name string } }
			}
		}
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, g := range resp.Data.Groups {
			for _, r := range g.Rules {
				names = append(names, r.Name)
			}
		}
		if !slices.Equal(names, tc.want) {
			t.Errorf("?%s -> %v, want %v", tc.query, names, tc.want)
		}
	}
	code, body = ts.Do(t, http.MethodGet, "/api/v1/rules?type=bogus", nil)
	if code != 400 || !strings.Contains(body, `"errorType":"bad_data"`) {
		t.Errorf("bad type = %d %s", code, body)
	}
	_, body = ts.Do(t, http.MethodGet, "/api/v1/rules?exclude_alerts=true", nil)
	if !strings.Contains(body, `"alerts":null`) {
		t.Errorf("exclude_alerts=true still lists alerts: %s", body)
	}

	code, body = ts.Do(t, http.MethodGet, "/api/v1/alerts", nil)
	var alertsResp struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string
				State  string
				Stale  bool
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &alertsResp); err != nil || code != 200 {
		t.Fatalf("/api/v1/alerts = %d %s", code, body)
	}
	var got []string
	for _, a := range alertsResp.Data.Alerts {
		got = append(got, a.Labels["alertname"]+"/"+a.State)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"AlwaysFiring/firing", "OtherFiring/firing"}) {
		t.Errorf("alerts = %v", got)
	}
}

// An alert whose rule failed its last evaluation keeps its state and is
// shown as stale.
func TestAlertsStaleWhenRuleFails(t *testing.T) {
	ts := newTestServer(t, configWith("rules/basic.rules.yaml"), map[string]string{"rules/basic.rules.yaml": basicRules}, nil)
	ts.EvalAll(time.Now())
	rule := ts.Engine.RuleGroups()[0].AlertingRules()[0]
	rule.SetLastError(context.DeadlineExceeded)
	rule.SetHealth(promrules.HealthBad)
	_, body := ts.Do(t, http.MethodGet, "/api/v1/alerts", nil)
	if !strings.Contains(body, `"stale":true`) || !strings.Contains(body, `"state":"firing"`) {
		t.Errorf("alert of a failing rule not firing+stale: %s", body)
	}
}
