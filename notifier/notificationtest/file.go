package notificationtest

import (
	"time"

	"github.com/pagedhq/paged/engine/ruletest"
)

// Pos is a position in a test file.
type Pos = ruletest.Pos

// Test is one entry of notification_tests, as written.
type Test struct {
	Pos  Pos
	Name string
	// At is the time of the test: time intervals are evaluated at it.
	// Zero when not set (no time interval mutes then).
	At    time.Time
	AtPos Pos

	Silences     []Silence
	AlsoFiring   []Alert
	Alerts       []Alert
	FromRuleTest *FromRuleTest

	ExpReceivers   *Expect[[]string]
	ExpGroupLabels *Expect[[]map[string]string] // one set, or a list of them
	ExpInhibited   *Expect[Inhibited]
	ExpMuted       *Expect[Muted]
	ExpSilenced    *Expect[bool]
	ExpPayloads    []ExpPayload
}

// Expect is one exp_ assertion and where it is written.
type Expect[T any] struct {
	Pos   Pos
	Value T
}

// Silence is a silence in force during the test.
type Silence struct {
	Pos       Pos
	Matchers  []string
	Comment   string
	CreatedBy string
}

// Alert is an alert given by its labels and annotations.
type Alert struct {
	Pos         Pos
	Labels      map[string]string
	Annotations map[string]string
}

// FromRuleTest takes the alerts under test from a rule test file: the
// alerts its test groups (or the one named Group) fire at EvalTime.
type FromRuleTest struct {
	Pos      Pos
	File     string // relative to the test file
	Group    string
	EvalTime time.Duration
}

// Inhibited is exp_inhibited: false, true (by anything), the alertname of
// the inhibiting alert, or labels it carries.
type Inhibited struct {
	Inhibited bool
	Name      string
	Labels    map[string]string
}

// Muted is exp_muted: false, true (every notification muted by a time
// interval), the name of the time interval that mutes them, or the
// receivers whose notifications are muted.
type Muted struct {
	Muted     bool
	Interval  string
	Receivers []string
	IsList    bool
}

// ExpPayload asserts what one receiver is sent.
type ExpPayload struct {
	Pos      Pos
	Receiver string
	Golden   string // relative to the test file
	Contains []string
}
