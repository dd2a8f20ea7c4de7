package backtest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/rules"
)

// Threshold is the numeric literal of an alerting expression's top-level
// comparison (rules.Threshold): what --set changes.
type Threshold = rules.Threshold

// SplitThreshold finds the threshold of expr. It returns nil when the
// expression has no top-level comparison with a number.
func SplitThreshold(expr parser.Expr) *Threshold { return rules.SplitThreshold(expr) }

// ParseSet parses --set values, NAME=VALUE, into a map by alert name.
func ParseSet(values []string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, s := range values {
		name, val, ok := strings.Cut(s, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("--set %q: want ALERTNAME=NUMBER", s)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return nil, fmt.Errorf("--set %q: %q is not a number", s, val)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--set %q: %s is set twice", s, name)
		}
		out[name] = v
	}
	return out, nil
}
