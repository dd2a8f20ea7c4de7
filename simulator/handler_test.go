package simulator

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func do(t *testing.T, method, url, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestHandler(t *testing.T) {
	s, clk := newTestSim(t, Options{Server: ServerVLLM, Seed: 1})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	clk.advance(time.Minute)

	code, body, hdr := do(t, "GET", srv.URL+"/metrics", "")
	if code != 200 || !strings.Contains(body, "# TYPE vllm:kv_cache_usage_perc gauge\n") {
		t.Fatalf("GET /metrics: %d\n%.300s", code, body)
	}
	if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}

	code, body, _ = do(t, "GET", srv.URL+"/scenario", "")
	var st scenarioState
	if err := json.Unmarshal([]byte(body), &st); err != nil || code != 200 || st.Name != "steady" || st.Server != ServerVLLM {
		t.Fatalf("GET /scenario: %d %v %s", code, err, body)
	}
	if len(st.Scenarios) != len(Scenarios(ServerVLLM)) {
		t.Errorf("GET /scenario lists %d scenarios, want %d", len(st.Scenarios), len(Scenarios(ServerVLLM)))
	}

	code, body, _ = do(t, "POST", srv.URL+"/scenario", `{"name":"kv-saturation"}`)
	if code != 200 || !strings.Contains(body, `"name": "kv-saturation"`) {
		t.Fatalf("POST /scenario JSON: %d %s", code, body)
	}
	if name, _ := s.Scenario(); name != "kv-saturation" {
		t.Errorf("scenario is %q after POST", name)
	}
	code, body, _ = do(t, "POST", srv.URL+"/scenario?name=ttft-spike", "")
	if code != 200 || !strings.Contains(body, `"name": "ttft-spike"`) {
		t.Fatalf("POST /scenario?name=: %d %s", code, body)
	}

	for _, c := range []struct{ url, body, want string }{
		{"/scenario", `{"name":"nope"}`, `unknown scenario \"nope\" for vllm`},
		{"/scenario?name=swap", "", `unknown scenario \"swap\" for vllm`},
		{"/scenario", `{"name":`, "bad JSON body"},
		{"/scenario", `{"nam":"steady"}`, "unknown field"},
		{"/scenario", ``, "missing scenario name"},
		{"/scenario?name=steady", `{"name":"down"}`, "differ"},
		{"/scenario", `{"name":"` + strings.Repeat("x", 5000) + `"}`, "body larger than"},
	} {
		code, body, _ := do(t, "POST", srv.URL+c.url, c.body)
		if code != 400 || !strings.Contains(body, c.want) {
			t.Errorf("POST %s %.40q: %d %s, want 400 with %q", c.url, c.body, code, body, c.want)
		}
		if strings.Contains(c.want, "unknown scenario") && !strings.Contains(body, `"preemption-storm"`) {
			t.Errorf("400 for an unknown scenario does not list the valid ones: %s", body)
		}
	}
	if name, _ := s.Scenario(); name != "ttft-spike" {
		t.Errorf("a rejected POST changed the scenario to %q", name)
	}

	do(t, "POST", srv.URL+"/scenario?name=down", "")
	if code, body, _ := do(t, "GET", srv.URL+"/metrics", ""); code != 503 || strings.Contains(body, "vllm:") {
		t.Errorf("GET /metrics while down: %d %.100s, want 503 without metrics", code, body)
	}
	if code, _, _ := do(t, "GET", srv.URL+"/health", ""); code != 503 {
		t.Errorf("GET /health while down: %d, want 503", code)
	}
	do(t, "POST", srv.URL+"/scenario?name=steady", "")
	if code, _, _ := do(t, "GET", srv.URL+"/health", ""); code != 200 {
		t.Errorf("GET /health after recovery: %d, want 200", code)
	}
	if code, _, _ := do(t, "DELETE", srv.URL+"/scenario", ""); code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE /scenario: %d, want 405", code)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Server: "ollama"}, `unknown server "ollama" (valid: vllm, vllm-v0, tgi, sglang, triton, dcgm, inference-gateway)`},
		{Options{Scenario: "chaos"}, `unknown scenario "chaos" for vllm (valid: steady, ramp,`},
		{Options{Speed: -1}, "speed -1 out of range"},
		{Options{MaxModelLen: 3}, "max model length 3 out of range"},
	} {
		_, err := New(c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) error %v, want %q", c.opts, err, c.want)
		}
	}
}

// Many simulators share one process and one mux, as the benchmark needs.
func TestManySimulatorsInOneProcess(t *testing.T) {
	mux := http.NewServeMux()
	for i := range 50 {
		s, err := New(Options{Server: ServerVLLM, Seed: uint64(i), Model: "m" + string(rune('a'+i%26))})
		if err != nil {
			t.Fatal(err)
		}
		prefix := "/s" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + "/" + string(rune('0'+i/26))
		mux.Handle(prefix+"/", http.StripPrefix(prefix, s.Handler()))
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	code, body, _ := do(t, "GET", srv.URL+"/sa/0/metrics", "")
	if code != 200 || !strings.Contains(body, `model_name="ma"`) {
		t.Errorf("embedded simulator: %d %.200s", code, body)
	}
}

// FuzzSelectScenario: whatever the body and query, POST /scenario answers
// 200 with a known scenario or 400 with a reason, never anything else.
func FuzzSelectScenario(f *testing.F) {
	for _, seed := range []string{`{"name":"steady"}`, `{"name":`, `[]`, `{"name":"x","name":"y"}`, "\x00\xff", `{"name":"down"}`} {
		f.Add(seed, "")
	}
	f.Add("", "kv-saturation")
	f.Fuzz(func(t *testing.T, body, name string) {
		s, _ := newTestSim(t, Options{Server: ServerVLLMV0})
		req := httptest.NewRequest("POST", "/scenario", strings.NewReader(body))
		q := req.URL.Query()
		q.Set("name", name)
		req.URL.RawQuery = q.Encode()
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		switch rec.Code {
		case 200:
			var st scenarioState
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.Name == "" {
				t.Fatalf("200 without a scenario: %s", rec.Body)
			}
			if _, err := lookup(ServerVLLMV0, st.Name); err != nil {
				t.Fatalf("200 with an unknown scenario %q", st.Name)
			}
		case 400:
			if !strings.Contains(rec.Body.String(), `"error"`) {
				t.Fatalf("400 without a reason: %s", rec.Body)
			}
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	})
}
