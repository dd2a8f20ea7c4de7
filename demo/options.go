package demo

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"
)

// Defaults filled in by Run.
const (
	// DefaultTimeScale makes the vLLM pack's 10-minute `for` last 10 s and
	// its [5m] windows 5 s, so the whole script fits in about a minute.
	DefaultTimeScale = 60
	// DefaultListen is paged's usual address; a free port is used when it
	// is taken.
	DefaultListen = "127.0.0.1:9095"
	// BuiltinConfigName is how the header names the demo's paged.yaml
	// when it is the one built into paged (examples/demo.yaml).
	BuiltinConfigName = "built-in examples/demo.yaml"
	// DefaultSeed seeds the simulator.
	DefaultSeed = 1
	// DefaultReadyTimeout bounds the wait for paged to be ready.
	DefaultReadyTimeout = 30 * time.Second
	// DefaultDrainTimeout bounds the wait for the last notifications.
	DefaultDrainTimeout = 10 * time.Second
	// minRangeSamples is the floor of a scaled range window, in scrape
	// intervals: enough samples for rate() to mean something.
	minRangeSamples = 4
)

// Options configure Run. The zero value runs the standard demo.
type Options struct {
	// ConfigFile is the paged.yaml the demo runs. Default: the one built
	// into paged (examples/demo.yaml, with the built-in vllm pack and
	// runbooks), so the demo runs from any directory.
	ConfigFile string
	// TimeScale divides the rules' durations and speeds the simulator up
	// by the same factor. Default 60. 1 runs at real speed.
	TimeScale float64
	// Listen is the address of paged's HTTP server (runbooks, API); when
	// it is taken, a free loopback port is used. Default 127.0.0.1:9095.
	Listen string
	// Seed seeds the simulator. Default 1.
	Seed uint64
	// Script is the sequence of phases. Default DefaultScript().
	Script []Phase
	// Forever keeps everything running after the script until ctx ends.
	Forever bool
	// StoragePath holds the demo's state (alert state, scraped samples,
	// scaled rule copies). Empty: a temporary directory removed at the end.
	StoragePath string
	// ReadyTimeout bounds the wait for paged to load the rules and scrape
	// the simulator. Default 30s.
	ReadyTimeout time.Duration
	// DrainTimeout bounds the wait, after the script, for the webhook
	// sink to see every alert it saw firing resolved. Default 10s.
	DrainTimeout time.Duration

	// Stdout receives the demo's output. Default io.Discard.
	Stdout io.Writer
	// Color turns on ANSI colours (the caller decides: a terminal, and
	// NO_COLOR unset).
	Color bool
	// Getenv provides the ${ENV} values of the configuration; the demo's
	// own PAGED_DEMO_* values take precedence. Default os.Getenv.
	Getenv func(string) string
	// Logger receives the components' logs. Nil discards them.
	Logger *slog.Logger
	// Now is the clock the console prints. Default time.Now.
	Now func() time.Time
}

func (o *Options) fill() error {
	var errs []error
	if o.TimeScale == 0 {
		o.TimeScale = DefaultTimeScale
	}
	if o.TimeScale < 1 || o.TimeScale > 3600 {
		errs = append(errs, fmt.Errorf("time scale %g out of range [1, 3600]", o.TimeScale))
	}
	if o.Listen == "" {
		o.Listen = DefaultListen
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.Script == nil {
		o.Script = DefaultScript()
	}
	if len(o.Script) == 0 {
		errs = append(errs, errors.New("the script has no phase"))
	}
	for i, p := range o.Script {
		if p.Scenario == "" {
			errs = append(errs, fmt.Errorf("phase %d: scenario is required", i+1))
		}
		if p.Max <= 0 || p.Min < 0 || p.Min > p.Max {
			errs = append(errs, fmt.Errorf("phase %d (%s): need 0 <= min <= max and max > 0", i+1, p.Scenario))
		}
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = DefaultReadyTimeout
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = DefaultDrainTimeout
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return errors.Join(errs...)
}
