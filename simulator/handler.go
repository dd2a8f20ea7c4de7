package simulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// maxScenarioBody bounds a POST /scenario body.
const maxScenarioBody = 4 << 10

// Handler serves the simulated server:
//
//	GET  /metrics    the exposition (503 while the scenario is down)
//	GET  /health     200, or 503 while down
//	GET  /scenario   the current scenario and the valid ones, as JSON
//	POST /scenario   select one: {"name":"kv-saturation"} or ?name=kv-saturation
func (s *Simulator) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", s.serveMetrics)
	mux.HandleFunc("GET /health", s.serveHealth)
	mux.HandleFunc("GET /scenario", s.serveScenario)
	mux.HandleFunc("POST /scenario", s.selectScenario)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "paged simulator: %s\nGET /metrics, GET /health, GET /scenario, POST /scenario {\"name\":...}\n", s.opts.Server)
	})
	return mux
}

func (s *Simulator) serveMetrics(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	if err := s.WriteMetrics(&buf); err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, ErrDown) {
			status = http.StatusServiceUnavailable
		}
		http.Error(w, err.Error(), status)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

func (s *Simulator) serveHealth(w http.ResponseWriter, r *http.Request) {
	if s.isDown() {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

func (s *Simulator) isDown() bool {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceTo(now)
	return s.scen.at(s.simNow - s.scenSince).down
}

// scenarioState is the JSON of GET and POST /scenario.
type scenarioState struct {
	Server    Server     `json:"server"`
	Name      string     `json:"name"`
	Since     time.Time  `json:"since"`
	Scenarios []Scenario `json:"scenarios"`
}

type scenarioError struct {
	Error string   `json:"error"`
	Valid []string `json:"valid,omitempty"`
}

func (s *Simulator) serveScenario(w http.ResponseWriter, r *http.Request) {
	name, since := s.Scenario()
	writeJSON(w, http.StatusOK, scenarioState{Server: s.opts.Server, Name: name, Since: since.UTC(), Scenarios: Scenarios(s.opts.Server)})
}

func (s *Simulator) selectScenario(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	body, err := readLimited(r, maxScenarioBody)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, scenarioError{Error: err.Error()})
		return
	}
	if len(bytes.TrimSpace(body)) > 0 {
		var req struct {
			Name string `json:"name"`
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, scenarioError{Error: "bad JSON body: " + err.Error() + ` (want {"name":"<scenario>"})`})
			return
		}
		if name != "" && req.Name != "" && name != req.Name {
			writeJSON(w, http.StatusBadRequest, scenarioError{Error: fmt.Sprintf("query name %q and body name %q differ", name, req.Name)})
			return
		}
		if req.Name != "" {
			name = req.Name
		}
	}
	if name == "" {
		writeJSON(w, http.StatusBadRequest, scenarioError{Error: `missing scenario name: send {"name":"<scenario>"} or ?name=<scenario>`, Valid: validNames(s.opts.Server)})
		return
	}
	if err := s.SetScenario(name); err != nil {
		var unknown *UnknownScenarioError
		if errors.As(err, &unknown) {
			writeJSON(w, http.StatusBadRequest, scenarioError{Error: err.Error(), Valid: unknown.Valid})
			return
		}
		writeJSON(w, http.StatusInternalServerError, scenarioError{Error: err.Error()})
		return
	}
	s.serveScenario(w, r)
}

func validNames(server Server) []string {
	var out []string
	for _, sc := range Scenarios(server) {
		out = append(out, sc.Name)
	}
	return out
}

func readLimited(r *http.Request, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(http.MaxBytesReader(nil, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, fmt.Errorf("body larger than %d bytes", limit)
		}
		return nil, fmt.Errorf("read body: %w", err)
	}
	return buf.Bytes(), nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
