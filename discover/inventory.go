package discover

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Inventory is what was found: which packs fit, for which jobs.
type Inventory struct {
	// Source says where the answers came from, without credentials.
	Source string
	// Names is the number of metric names seen.
	Names int
	// Packs are the packs that fit, in packs order (vllm, vllm-v0, tgi,
	// sglang, triton, dcgm).
	Packs []*PackFit
	// Notes are things worth telling about what was found: a job that
	// serves several kinds of server, series without a job label, names
	// seen earlier but not now.
	Notes []string
	// Targets are the scraped targets (--scrape), in the order given.
	Targets []*Target

	series []seriesLabels // --scrape: every scraped series, for counting
}

// PackFit is one pack and the jobs whose series it reads.
type PackFit struct {
	Pack string
	// Title names the server kind: vLLM (V1 engine), TGI...
	Title string
	Jobs  []Job
}

// Job is one scrape job (its `job` label value) that serves a server kind.
type Job struct {
	Name string
	// Targets is the number of instances in the job that expose the
	// server's metrics.
	Targets int
}

// Selector is the pack's selector override for its jobs: {job="a"},
// or {job=~"a|b"} for several. "" when the series carry no job label.
func (p *PackFit) Selector() string {
	var names []string
	for _, j := range p.Jobs {
		if j.Name != "" {
			names = append(names, j.Name)
		}
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return "{job=" + strconv.Quote(names[0]) + "}"
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	return "{job=~" + strconv.Quote(strings.Join(quoted, "|")) + "}"
}

// JobList is the jobs as text: vllm-prod (3 targets), vllm-canary (1 target).
func (p *PackFit) JobList() string {
	parts := make([]string, len(p.Jobs))
	for i, j := range p.Jobs {
		name := "job " + showJob(j.Name)
		if j.Name == "" {
			name = "series without a job label"
		}
		parts[i] = fmt.Sprintf("%s (%s)", name, plural(j.Targets, "target"))
	}
	return strings.Join(parts, ", ")
}

// Pack returns the fit of that pack, nil when it does not fit.
func (inv *Inventory) Pack(name string) *PackFit {
	for _, p := range inv.Packs {
		if p.Pack == name {
			return p
		}
	}
	return nil
}

// jobNames is one job's metric names and target count.
type jobNames struct {
	names   []string
	targets int
}

// fit builds the packs from the names each job exposes, and the notes.
func (inv *Inventory) fit(jobs map[string]*jobNames) {
	byPack := map[string]*PackFit{}
	servedBy := map[string][]string{} // job -> packs
	keys := make([]string, 0, len(jobs))
	for j := range jobs {
		keys = append(keys, j)
	}
	slices.Sort(keys)
	for _, job := range keys {
		jn := jobs[job]
		for _, pack := range classify(jn.names) {
			pf := byPack[pack]
			if pf == nil {
				pf = &PackFit{Pack: pack, Title: packTitles[pack]}
				byPack[pack] = pf
			}
			pf.Jobs = append(pf.Jobs, Job{Name: job, Targets: jn.targets})
			servedBy[job] = append(servedBy[job], pack)
		}
	}
	var packs []string
	for p := range byPack {
		packs = append(packs, p)
	}
	sortPacks(packs)
	for _, p := range packs {
		inv.Packs = append(inv.Packs, byPack[p])
	}
	for _, job := range keys {
		ps := servedBy[job]
		switch {
		case job == "" && len(ps) > 0:
			inv.Notes = append(inv.Notes, fmt.Sprintf("some %s series carry no job label: the packs cannot be narrowed to them by job; add a selector on another label by hand", strings.Join(ps, ", ")))
		case len(ps) > 1 && !(len(ps) == 2 && ps[0] == PackVLLM && ps[1] == PackVLLMV0):
			inv.Notes = append(inv.Notes, fmt.Sprintf("job %s serves %s: the packs' rules on generic names (up, http_requests_total) cover every target of the job; narrow their selectors (namespace, pod) by hand if that is too wide", showJob(job), strings.Join(ps, " and ")))
		case len(ps) == 2:
			inv.Notes = append(inv.Notes, fmt.Sprintf("job %s runs vLLM with both engines (V1 and legacy V0 names): both packs are loaded, each reads its own names", showJob(job)))
		}
	}
}

// showJob writes a job name for text and comments: as it is when it is
// one printable word, else quoted with Go's escapes.
func showJob(name string) string {
	for _, r := range name {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return strconv.Quote(name)
		}
	}
	return name
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
