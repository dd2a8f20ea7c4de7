package catalog

import (
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// additions.yaml holds what the research catalogue (catalog.yaml, a
// byte-for-byte copy) lacks: metrics read in upstream source since, and
// the versions as data: per release line, the releases the packs are
// tested on, and per metric the release it appeared, was deprecated,
// hidden and removed.
//
//go:embed additions.yaml
var additionsYAML []byte

type rawAdditions struct {
	SchemaVersion int                                     `yaml:"schema_version"`
	Servers       map[string]rawServer                    `yaml:"servers"`
	Releases      map[string][]string                     `yaml:"releases"`
	Lifecycle     map[string]map[string]rawLifecycleEntry `yaml:"lifecycle"`
}

type rawLifecycleEntry struct {
	Since       string            `yaml:"since"`
	Deprecated  string            `yaml:"deprecated"`
	Hidden      string            `yaml:"hidden"`
	Removed     string            `yaml:"removed"`
	LabelsSince map[string]string `yaml:"labels_since"`
	Source      string            `yaml:"source"`
}

// Lifecycle is a metric's history on one release line, in release
// numbers ("0.11"). Empty fields mean "before the first listed release"
// (Since) or "not yet" (the others). A number written ">0.14" says what
// the source supports when the release itself is not established: in a
// release after 0.14, which one unknown (the change was merged after
// 0.14 was cut). Such a change counts from the next listed release, and
// on none when 0.14 is the last.
type Lifecycle struct {
	Since      string
	Deprecated string
	Hidden     string // absent by default from this release on (--show-hidden-metrics-for-version brings it back)
	Removed    string
	// LabelsSince: labels of the metric that a later release added, with
	// that release (GAIE's priority label on request_total from 1.5).
	LabelsSince map[string]string
	Source      string
}

// LabelsAt returns a metric's labels on a release: the catalogue's, less
// those its lifecycle says came later.
func (c *Catalog) LabelsAt(line string, m *Metric, release string) []string {
	l, ok := c.lifecycle[line][m.Name]
	if !ok || m.Labels == nil {
		return m.Labels
	}
	return slices.DeleteFunc(slices.Clone(m.Labels), func(lb string) bool {
		since, ok := l.LabelsSince[lb]
		return ok && !reached(release, since)
	})
}

func parseAdditions() (*rawAdditions, error) {
	var raw rawAdditions
	if err := yaml.Unmarshal(additionsYAML, &raw); err != nil {
		return nil, fmt.Errorf("catalog: additions.yaml: %w", err)
	}
	if raw.SchemaVersion != 1 {
		return nil, fmt.Errorf("catalog: additions.yaml: schema_version %d, want 1", raw.SchemaVersion)
	}
	for line, rels := range raw.Releases {
		for i := 1; i < len(rels); i++ {
			if CompareReleases(rels[i-1], rels[i]) >= 0 {
				return nil, fmt.Errorf("catalog: additions.yaml: releases of %s out of order at %s", line, rels[i])
			}
		}
	}
	return &raw, nil
}

func (c *Catalog) setVersions(raw *rawAdditions) {
	c.releases = map[string][]string{}
	for line, rels := range raw.Releases {
		c.releases[line] = slices.Clone(rels)
	}
	c.lifecycle = map[string]map[string]Lifecycle{}
	for line, m := range raw.Lifecycle {
		out := map[string]Lifecycle{}
		for name, e := range m {
			out[name] = Lifecycle(e)
		}
		c.lifecycle[line] = out
	}
}

// Releases lists the releases of a release line ("vllm", "vllm-v0") the
// packs are tested on, oldest first.
func (c *Catalog) Releases(line string) []string { return slices.Clone(c.releases[line]) }

// ReleaseLines lists the release lines that have versions as data.
func (c *Catalog) ReleaseLines() []string {
	var out []string
	for l := range c.releases {
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

// LifecycleOf returns the history of a metric on a release line; ok is
// false when the metric has none (it exists on every listed release).
func (c *Catalog) LifecycleOf(line, name string) (Lifecycle, bool) {
	l, ok := c.lifecycle[line][name]
	return l, ok
}

// ExposedIn reports whether a server of the release line at release
// exposes the metric by default: appeared, not hidden, not removed.
func (c *Catalog) ExposedIn(line, name, release string) bool {
	l, ok := c.lifecycle[line][name]
	if !ok {
		return true
	}
	if l.Since != "" && !reached(release, l.Since) {
		return false
	}
	if l.Hidden != "" && reached(release, l.Hidden) {
		return false
	}
	if l.Removed != "" && reached(release, l.Removed) {
		return false
	}
	return true
}

// reached reports whether release has the change made in bound: bound
// itself or later, or for ">X" a release after X.
func reached(release, bound string) bool {
	if after, ok := strings.CutPrefix(bound, ">"); ok {
		return CompareReleases(release, after) > 0
	}
	return CompareReleases(release, bound) >= 0
}

// CompareReleases compares dotted release numbers numerically: 0.9 < 0.10.
// Non-numeric parts compare as text.
func CompareReleases(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y string
		if i < len(as) {
			x = as[i]
		}
		if i < len(bs) {
			y = bs[i]
		}
		xi, errx := strconv.Atoi(x)
		yi, erry := strconv.Atoi(y)
		if x == "" {
			xi, errx = 0, nil
		}
		if y == "" {
			yi, erry = 0, nil
		}
		if errx == nil && erry == nil {
			if xi != yi {
				return xi - yi
			}
			continue
		}
		if d := strings.Compare(x, y); d != 0 {
			return d
		}
	}
	return 0
}
