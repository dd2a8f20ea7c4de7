package notificationtest

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/dispatch"
	"github.com/prometheus/alertmanager/inhibit"
	"github.com/prometheus/common/model"

	"github.com/pagedhq/paged/notifier"
)

// Coverage records what the notification tests exercise of a notifier
// configuration: the routes their alerts reach, the inhibit rules that
// inhibit one of them, and the receivers whose payloads they render.
type Coverage struct {
	mu        sync.Mutex
	routes    []string // route descriptions, in tree order
	reached   map[int]bool
	rules     []*inhibit.InhibitRule
	ruleNames []string
	inhibited map[int]bool
	receivers []string
	rendered  map[string]bool
}

// NewCoverage prepares the coverage of conf.
func NewCoverage(conf *notifier.Config) *Coverage {
	am := conf.Alertmanager()
	c := &Coverage{reached: map[int]bool{}, inhibited: map[int]bool{}, rendered: map[string]bool{}}
	dispatch.NewRoute(am.Route, nil).Walk(func(r *dispatch.Route) {
		c.routes = append(c.routes, fmt.Sprintf("%s -> %s", r.Key(), r.RouteOpts.Receiver))
	})
	for i, ir := range am.InhibitRules {
		c.rules = append(c.rules, inhibit.NewInhibitRule(ir))
		name := ir.Name
		if name == "" {
			name = fmt.Sprintf("inhibit_rules[%d]", i)
		}
		c.ruleNames = append(c.ruleNames, name)
	}
	seen := map[string]bool{}
	dispatch.NewRoute(am.Route, nil).Walk(func(r *dispatch.Route) {
		if n := r.RouteOpts.Receiver; !seen[n] {
			seen[n] = true
			c.receivers = append(c.receivers, n)
		}
	})
	return c
}

func (c *Coverage) record(o *outcome, under []*alert.Alert) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range o.routes {
		c.reached[o.order[r]] = true
	}
	for _, a := range under {
		for _, src := range o.inhibitors[a.Fingerprint()] {
			for i, ir := range c.rules {
				if ir.TargetMatchers.Matches(a.Labels) && ir.SourceMatchers.Matches(src.Labels) && equalOn(ir.Equal, a.Labels, src.Labels) {
					c.inhibited[i] = true
				}
			}
		}
	}
}

func equalOn(names map[model.LabelName]struct{}, a, b model.LabelSet) bool {
	for n := range names {
		if a[n] != b[n] {
			return false
		}
	}
	return true
}

func (c *Coverage) renderedFor(receiver string) {
	c.mu.Lock()
	c.rendered[receiver] = true
	c.mu.Unlock()
}

// Percent is the share of routes and inhibit rules exercised.
func (c *Coverage) Percent() float64 {
	total := len(c.routes) + len(c.rules)
	if total == 0 {
		return 100
	}
	return 100 * float64(len(c.reached)+len(c.inhibited)) / float64(total)
}

// WriteText writes the notification coverage: counts, then what no test
// exercised.
func (c *Coverage) WriteText(w io.Writer) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "Notification coverage: %d/%d routes reached, %d/%d inhibit rules inhibiting, %d/%d receivers rendered (%.1f%% of routes and inhibit rules)\n",
		len(c.reached), len(c.routes), len(c.inhibited), len(c.rules), len(c.rendered), len(c.receivers), c.Percent())
	for i, r := range c.routes {
		if !c.reached[i] {
			fmt.Fprintf(&b, "  route not reached: %s\n", r)
		}
	}
	for i, n := range c.ruleNames {
		if !c.inhibited[i] {
			fmt.Fprintf(&b, "  inhibit rule never inhibiting: %s\n", n)
		}
	}
	for _, r := range c.receivers {
		if !c.rendered[r] {
			fmt.Fprintf(&b, "  receiver never rendered: %s\n", r)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
