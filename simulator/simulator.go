package simulator

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pagedhq/paged/rules/catalog"
)

// ErrDown is returned by WriteMetrics while the scenario has the server down.
var ErrDown = errors.New("server is down (scenario down)")

// stepSeconds is the simulated interval of one model step. Steps sit on a
// fixed grid of simulated time, so the output at a given time does not
// depend on when it was scraped before.
const stepSeconds = 1.0

// maxCatchUp bounds the simulated time replayed in one scrape; a longer gap
// (a laptop waking up) is skipped.
const maxCatchUp = 24 * 3600.0

// Simulator is one simulated server. It is safe for concurrent use.
type Simulator struct {
	opts Options
	reg  *prometheus.Registry
	exp  exporter
	fams []*family // the families the release exposes, in exposition order

	mu        sync.Mutex
	model     *model
	scen      scenario
	scenSince float64   // simulated seconds at which scen was selected
	scenWall  time.Time // clock time at which scen was selected
	simNow    float64   // simulated seconds since start, stepped so far
}

// New validates opts, fills defaults and builds a simulator whose clock
// starts at opts.Start.
func New(opts Options) (*Simulator, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	sc, err := lookup(opts.Server, opts.Scenario)
	if err != nil {
		return nil, err
	}
	if !opts.has(sc.needs) {
		return nil, fmt.Errorf("scenario %s needs the %s option", sc.Name, sc.needs)
	}
	m := newModel(opts.Seed, opts.MaxModelLen)
	var exp exporter
	switch opts.Server {
	case ServerVLLM:
		exp = newVLLM(false, opts, m)
	case ServerVLLMV0:
		exp = newVLLM(true, opts, m)
	case ServerTGI:
		exp = newTGI(opts, m)
	case ServerSGLang:
		exp = newSGLang(opts, m)
	case ServerTriton:
		exp = newTriton(opts, m)
	case ServerDCGM:
		exp = newDCGM(opts, m)
	case ServerGateway:
		exp = newGateway(opts, m)
	}
	fams := exp.families()
	if rel := opts.Version; rel != "" {
		fams = exposedIn(fams, string(opts.Server), rel)
	} else if opts.Server == ServerGateway {
		// Both generations of names are declared; without a Version the
		// newest release's.
		rels := catalog.Default().Releases(string(opts.Server))
		fams = exposedIn(fams, string(opts.Server), rels[len(rels)-1])
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(&metricSet{families: fams}); err != nil {
		return nil, fmt.Errorf("register %s metrics: %w", opts.Server, err)
	}
	return &Simulator{opts: opts, reg: reg, exp: exp, fams: fams, model: m, scen: sc, scenWall: opts.Start}, nil
}

// lookup finds a scenario by name for a server. The error lists the valid
// names.
func lookup(server Server, name string) (scenario, error) {
	var names []string
	for _, sc := range scenariosFor(server) {
		if sc.Name == name {
			return sc, nil
		}
		names = append(names, sc.Name)
	}
	return scenario{}, &UnknownScenarioError{Name: name, Server: server, Valid: names}
}

// UnknownScenarioError names a scenario the server does not have.
type UnknownScenarioError struct {
	Name   string
	Server Server
	Valid  []string
}

func (e *UnknownScenarioError) Error() string {
	return fmt.Sprintf("unknown scenario %q for %s (valid: %s)", e.Name, e.Server, strings.Join(e.Valid, ", "))
}

// Server returns the simulated server kind.
func (s *Simulator) Server() Server { return s.opts.Server }

// Scenario returns the current scenario's name and when it was selected.
func (s *Simulator) Scenario() (string, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scen.Name, s.scenWall
}

// SetScenario switches to the named scenario at the clock's now.
func (s *Simulator) SetScenario(name string) error {
	return s.SetScenarioAt(name, s.opts.Now())
}

// SetScenarioAt switches to the named scenario at now. Simulated time up to
// now runs under the old one first.
func (s *Simulator) SetScenarioAt(name string, now time.Time) error {
	sc, err := lookup(s.opts.Server, name)
	if err != nil {
		return err
	}
	if !s.opts.has(sc.needs) {
		return fmt.Errorf("scenario %s needs the %s option", sc.Name, sc.needs)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceTo(now)
	s.scen, s.scenSince, s.scenWall = sc, s.simNow, now
	s.opts.Logger.Info("scenario selected", "server", s.opts.Server, "scenario", name)
	return nil
}

// WriteMetrics reads the clock once and writes the exposition at that
// time (see WriteMetricsAt).
func (s *Simulator) WriteMetrics(w io.Writer) error {
	return s.WriteMetricsAt(w, s.opts.Now())
}

// WriteMetricsAt advances the simulation to now and writes the exposition.
// A now before the last one changes nothing. While the scenario has the
// server down it writes nothing and returns ErrDown.
func (s *Simulator) WriteMetricsAt(w io.Writer, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceTo(now)
	if s.scen.at(s.simNow - s.scenSince).down {
		return ErrDown
	}
	mfs, err := s.reg.Gather()
	if err != nil {
		return fmt.Errorf("gather %s metrics: %w", s.opts.Server, err)
	}
	var buf bytes.Buffer
	if err := s.exp.exposition().write(&buf, s.fams, mfs); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// advanceTo steps the model on the fixed grid up to now. Callers hold mu.
func (s *Simulator) advanceTo(now time.Time) {
	target := now.Sub(s.opts.Start).Seconds() * s.opts.Speed
	if target-s.simNow > maxCatchUp {
		s.simNow = math.Floor(target - maxCatchUp)
	}
	for s.simNow+stepSeconds <= target {
		s.simNow += stepSeconds
		at := s.opts.Start.Add(time.Duration(s.simNow / s.opts.Speed * float64(time.Second)))
		c := s.scen.at(s.simNow - s.scenSince)
		st := s.model.advance(at, stepSeconds, c)
		if c.down {
			continue
		}
		s.exp.record(&st)
	}
}

// exposedIn keeps the families that release of the release line exposes
// by default, as the catalogue's versions as data say.
func exposedIn(fams []*family, line, release string) []*family {
	c := catalog.Default()
	var out []*family
	for _, f := range fams {
		if c.ExposedIn(line, f.name, release) {
			out = append(out, f)
		}
	}
	return out
}
