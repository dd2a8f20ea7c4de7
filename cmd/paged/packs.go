package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/prometheus/common/model"

	"github.com/pagedhq/paged/engine/backtest"
	"github.com/pagedhq/paged/packs"
)

// packsCmd is `paged packs`: the rule packs built into paged.
type packsCmd struct {
	List packsListCmd `cmd:"" help:"List the packs: name, server, versions covered, alerts."`
	Show packsShowCmd `cmd:"" help:"Print a pack's rules as paged loads them, overrides applied."`
}

type packsListCmd struct {
	Config string `name:"config" placeholder:"FILE" type:"string" help:"List the packs of this paged.yaml (overrides applied) instead of the built-in ones."`
}

func (c *packsListCmd) Run(e *env) error {
	type row struct {
		name, server, versions, description string
		alerts                              int
	}
	var rows []row
	if c.Config != "" {
		cfg, err := loadConfig(e, c.Config)
		if err != nil {
			return err
		}
		for _, pc := range cfg.Packs {
			p := pc.Rendered.Pack
			desc := p.Description
			if !pc.Overrides.Empty() {
				desc += " (with overrides)"
			}
			rows = append(rows, row{pc.Name, p.Server, p.Versions, desc, pc.Rendered.Alerts()})
		}
	} else {
		ps, err := packs.Builtin()
		if err != nil {
			return &exitError{Code: exitUsage, Err: err}
		}
		for _, p := range ps {
			rows = append(rows, row{p.Name, p.Server, p.Versions, p.Description, len(p.Alerts())})
		}
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSERVER\tVERSIONS\tALERTS\tDESCRIPTION")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", r.name, r.server, r.versions, r.alerts, r.description)
	}
	return tw.Flush()
}

// overrideFlags are the overrides of a packs: entry on the command line.
type overrideFlags struct {
	Selector string   `name:"selector" placeholder:"'{job=\"x\"}'" help:"Label matchers added to every selector of the pack (replacing the pack's matchers on the same labels)."`
	Set      []string `name:"set" sep:"none" placeholder:"ALERT=NUMBER" help:"Replace the threshold of ALERT (the number in its top-level comparison). Repeatable."`
	For      []string `name:"for" sep:"none" placeholder:"ALERT=DURATION" help:"Replace the for duration of ALERT. Repeatable."`
	Severity []string `name:"severity" sep:"none" placeholder:"ALERT=SEVERITY" help:"Replace the severity of ALERT: critical, warning or info. Repeatable."`
	Label    []string `name:"label" sep:"none" placeholder:"NAME=VALUE" help:"Add a label to every alert of the pack. Repeatable."`
	Disable  []string `name:"disable" sep:"none" placeholder:"ALERT" help:"Leave ALERT out. Repeatable."`
}

func (f *overrideFlags) given() bool {
	return f.Selector != "" || len(f.Set)+len(f.For)+len(f.Severity)+len(f.Label)+len(f.Disable) > 0
}

// parse turns the flags into overrides; values that are not NAME=VALUE
// are usage errors.
func (f *overrideFlags) parse() (packs.Overrides, error) {
	o := packs.Overrides{Selector: f.Selector, Disable: f.Disable}
	var errs []error
	set, err := backtest.ParseSet(f.Set)
	if err != nil {
		errs = append(errs, err)
	}
	if len(set) > 0 {
		o.Set = set
	}
	pairs := func(flag string, values []string, each func(k, v string) error) {
		seen := map[string]bool{}
		for _, s := range values {
			k, v, ok := strings.Cut(s, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				errs = append(errs, fmt.Errorf("--%s %q: want NAME=VALUE", flag, s))
				continue
			}
			if seen[k] {
				errs = append(errs, fmt.Errorf("--%s %q: %s is given twice", flag, s, k))
				continue
			}
			seen[k] = true
			if err := each(k, strings.TrimSpace(v)); err != nil {
				errs = append(errs, fmt.Errorf("--%s %q: %w", flag, s, err))
			}
		}
	}
	pairs("for", f.For, func(k, v string) error {
		d, err := model.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%q is not a duration (use 30s, 5m, 1h)", v)
		}
		if o.For == nil {
			o.For = map[string]model.Duration{}
		}
		o.For[k] = d
		return nil
	})
	pairs("severity", f.Severity, func(k, v string) error {
		if o.Severity == nil {
			o.Severity = map[string]string{}
		}
		o.Severity[k] = v
		return nil
	})
	pairs("label", f.Label, func(k, v string) error {
		if o.Labels == nil {
			o.Labels = map[string]string{}
		}
		o.Labels[k] = v
		return nil
	})
	if len(errs) > 0 {
		return o, &exitError{Code: exitUsage, Err: errors.Join(errs...)}
	}
	return o, nil
}

// resolvePacks loads the named packs (built-in names, or directories
// relative to the working directory), all built-in packs when none is
// named, and applies the command-line overrides: selector and labels to
// every pack, an alert's override to the pack that has the alert.
func resolvePacks(names []string, f *overrideFlags, extra packs.Overrides) ([]*packs.Rendered, error) {
	o, err := f.parse()
	if err != nil {
		return nil, err
	}
	var ps []*packs.Pack
	if len(names) == 0 {
		if ps, err = packs.Builtin(); err != nil {
			return nil, &exitError{Code: exitUsage, Err: err}
		}
	}
	var errs []error
	seen := map[string]bool{}
	for _, name := range names {
		p, err := packs.Resolve(name, ".")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[p.Name] {
			errs = append(errs, fmt.Errorf("pack %s is named twice", p.Name))
			continue
		}
		seen[p.Name] = true
		ps = append(ps, p)
	}
	if len(errs) > 0 {
		return nil, &exitError{Code: exitProblems, Err: errors.Join(errs...)}
	}
	// An alert name belongs to the pack that has it; a name no pack has
	// is reported by the first pack, with its suggestion.
	owner := map[string]*packs.Pack{}
	for _, p := range ps {
		for _, a := range p.Alerts() {
			if owner[a] == nil {
				owner[a] = p
			}
		}
	}
	pick := func(p *packs.Pack, name string) bool { return owner[name] == p || (owner[name] == nil && p == ps[0]) }
	var out []*packs.Rendered
	for _, p := range ps {
		po := extra
		po.Selector, po.Labels = o.Selector, o.Labels
		po.Set = filterKeys(o.Set, func(k string) bool { return pick(p, k) })
		po.For = filterKeys(o.For, func(k string) bool { return pick(p, k) })
		po.Severity = filterKeys(o.Severity, func(k string) bool { return pick(p, k) })
		for _, d := range o.Disable {
			if pick(p, d) {
				po.Disable = append(po.Disable, d)
			}
		}
		r, err := p.Apply(po)
		if err != nil {
			errs = append(errs, flagErrors(p, err)...)
			continue
		}
		out = append(out, r)
	}
	if len(errs) > 0 {
		return nil, &exitError{Code: exitProblems, Err: errors.Join(errs...)}
	}
	return out, nil
}

func filterKeys[V any](m map[string]V, keep func(string) bool) map[string]V {
	if len(m) == 0 {
		return nil
	}
	out := map[string]V{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if keep(k) {
			out[k] = m[k]
		}
	}
	return out
}

// flagErrors words a pack's override errors as the flags that caused them.
func flagErrors(p *packs.Pack, err error) []error {
	var es packs.Errors
	if !errors.As(err, &es) {
		return []error{fmt.Errorf("pack %s: %w", p.Name, err)}
	}
	var out []error
	for _, e := range es {
		switch e.Key {
		case packs.KeySelector:
			at := ""
			if e.Offset >= 0 {
				at = fmt.Sprintf(" (at character %d)", e.Offset+1)
			}
			out = append(out, fmt.Errorf("--selector%s: %s", at, e.Msg))
		case packs.KeyDisable:
			out = append(out, fmt.Errorf("--disable %s: %s", e.Name, e.Msg))
		case packs.KeyLabels:
			out = append(out, fmt.Errorf("--label %s: %s", e.Name, e.Msg))
		default:
			out = append(out, fmt.Errorf("--%s %s: %s", e.Key, e.Name, e.Msg))
		}
	}
	return out
}

type packsShowCmd struct {
	Config string `name:"config" placeholder:"FILE" type:"string" help:"Show the pack as this paged.yaml loads it (its packs: entry's overrides)."`
	overrideFlags
	Name string `arg:"" name:"pack" help:"A built-in pack, or a pack directory."`
}

func (c *packsShowCmd) Run(e *env) error { return e.lines(c.run(e)) }

func (c *packsShowCmd) run(e *env) error {
	var r *packs.Rendered
	if c.Config != "" {
		if c.given() {
			return usageError("packs show: with --config the overrides come from paged.yaml; leave out --selector, --set, --for, --severity, --label and --disable")
		}
		cfg, err := loadConfig(e, c.Config)
		if err != nil {
			return err
		}
		var names []string
		for _, pc := range cfg.Packs {
			names = append(names, pc.Name)
			if pc.Name == c.Name || pc.Rendered.Pack.Name == c.Name {
				r = pc.Rendered
			}
		}
		if r == nil {
			return &exitError{Code: exitProblems, Err: fmt.Errorf("%s loads no pack %s (its packs: %s)", c.Config, c.Name, strings.Join(names, ", "))}
		}
	} else {
		rs, err := resolvePacks([]string{c.Name}, &c.overrideFlags, packs.Overrides{})
		if err != nil {
			return err
		}
		r = rs[0]
	}
	_, err := e.stdout.Write(r.Content)
	return err
}
