package rules

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A baseline is a file of accepted findings: a team adopting paged on
// rules it already has writes one (paged lint --write-baseline FILE) and
// lints with it (--baseline FILE), so that only new findings are shown and
// fail the run. A finding is matched by its check, file, group, rule and a
// fingerprint of the source text it points at, never by line number: an
// edit elsewhere in the file moves findings without unmatching them. Each
// entry counts its findings, so a second identical problem in the same
// rule is new.

// BaselineVersion is the format of the baseline file.
const BaselineVersion = 1

// Baseline is the accepted findings, as stored.
type Baseline struct {
	Version  int             `json:"paged_lint_baseline"`
	Findings []BaselineEntry `json:"findings"`

	dir string // the file's folder: paths are relative to it
}

// BaselineEntry is one kind of accepted finding and how many there were.
type BaselineEntry struct {
	Path        string `json:"path"`
	Check       string `json:"check"`
	Group       string `json:"group,omitempty"`
	Rule        string `json:"rule,omitempty"`
	Fingerprint string `json:"fingerprint"`
	// Message is the finding's text when it was accepted: a finding whose
	// message is the same is matched first; one reworded by a later paged
	// still matches by fingerprint.
	Message string `json:"message"`
	Count   int    `json:"count"`
}

// NewBaseline accepts findings, for a baseline file in dir (the paths
// are stored relative to it). src gives the lines findings point at.
func NewBaseline(dir string, fs []Finding, src SourceFunc) *Baseline {
	b := &Baseline{Version: BaselineVersion, dir: dir}
	idx := map[BaselineEntry]int{}
	for _, f := range fs {
		e := b.entry(f, src)
		if i, ok := idx[e]; ok {
			b.Findings[i].Count++
			continue
		}
		idx[e] = len(b.Findings)
		e.Count = 1
		b.Findings = append(b.Findings, e)
	}
	slices.SortFunc(b.Findings, func(x, y BaselineEntry) int {
		return cmp.Or(cmp.Compare(x.Path, y.Path), cmp.Compare(x.Group, y.Group), cmp.Compare(x.Rule, y.Rule),
			cmp.Compare(x.Check, y.Check), cmp.Compare(x.Fingerprint, y.Fingerprint), cmp.Compare(x.Message, y.Message))
	})
	return b
}

// entry is the key of a finding, with Count zero.
func (b *Baseline) entry(f Finding, src SourceFunc) BaselineEntry {
	return BaselineEntry{
		Path:        b.pathKey(f.Path),
		Check:       f.Check,
		Group:       f.Group,
		Rule:        f.Rule,
		Fingerprint: Fingerprint(f, src),
		Message:     f.Message,
	}
}

// pathKey is a finding's path relative to the baseline's folder, with
// forward slashes; pack:<name> paths of --paged-config stay as they are.
func (b *Baseline) pathKey(p string) string {
	if strings.HasPrefix(p, "pack:") || b.dir == "" {
		return filepath.ToSlash(filepath.Clean(p))
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.ToSlash(filepath.Clean(p))
	}
	rel, err := filepath.Rel(b.dir, abs)
	if err != nil {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(rel)
}

// Fingerprint identifies a finding without its position: a hash of its
// check, group, rule and the source text under it (the selector, the
// label, the alert name), white space collapsed. A finding with no text
// under it (a file-level one) is identified by its message.
func Fingerprint(f Finding, src SourceFunc) string {
	text := strings.Join(strings.Fields(findingText(f, src)), " ")
	if text == "" {
		text = "message:" + f.Message
	}
	h := sha256.New()
	for _, s := range []string{f.Check, f.Group, f.Rule, text} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// findingText is the text of a finding's range on its first line.
func findingText(f Finding, src SourceFunc) string {
	if src == nil || f.Range.Start.Line <= 0 || f.Range.Start.Column <= 0 {
		return ""
	}
	line := []rune(src(f.Path, f.Range.Start.Line))
	start := f.Range.Start.Column - 1
	if start >= len(line) {
		return ""
	}
	end := len(line)
	if f.Range.End.Line == f.Range.Start.Line && f.Range.End.Column >= f.Range.Start.Column {
		end = min(end, f.Range.End.Column)
	}
	return string(line[start:end])
}

// Filter drops the findings the baseline accepts and returns the others,
// with how many it accepted and how many accepted findings no longer
// occur (stale, for --write-baseline to drop).
func (b *Baseline) Filter(fs []Finding, src SourceFunc) (kept []Finding, accepted, stale int) {
	left := map[BaselineEntry]int{} // by full key, Count zero
	byPrint := map[BaselineEntry][]BaselineEntry{}
	for _, e := range b.Findings {
		k := e
		k.Count = 0
		left[k] += e.Count
		p := k
		p.Message = ""
		byPrint[p] = append(byPrint[p], k)
	}
	keys := make([]BaselineEntry, len(fs))
	matched := make([]bool, len(fs))
	// Same message first, so that of two findings on the same text the one
	// accepted is the one that was; then any message, for rewordings.
	for i, f := range fs {
		keys[i] = b.entry(f, src)
		if left[keys[i]] > 0 {
			left[keys[i]]--
			matched[i] = true
		}
	}
	for i := range fs {
		if matched[i] {
			continue
		}
		p := keys[i]
		p.Message = ""
		for _, k := range byPrint[p] {
			if left[k] > 0 {
				left[k]--
				matched[i] = true
				break
			}
		}
	}
	for i, f := range fs {
		if matched[i] {
			accepted++
		} else {
			kept = append(kept, f)
		}
	}
	for _, n := range left {
		stale += n
	}
	return kept, accepted, stale
}

// Write writes the baseline as indented JSON.
func (b *Baseline) Write(w io.Writer) error {
	out, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(out, '\n'))
	return err
}

// WriteBaselineFile writes the baseline to path: a temporary file beside
// it, synced, then renamed over it, so that a failed run never leaves half
// a baseline.
func WriteBaselineFile(path string, b *Baseline) error {
	var buf bytes.Buffer
	if err := b.Write(&buf); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ReadBaseline reads a baseline file; its paths are relative to its
// folder.
func ReadBaseline(path string) (*Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b, err := ParseBaseline(path, data)
	if err != nil {
		return nil, err
	}
	b.dir, err = BaselineDir(path)
	return b, err
}

// ParseBaseline reads the text of a baseline file; path is for messages.
func ParseBaseline(path string, data []byte) (*Baseline, error) {
	var b Baseline
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("%s: not a paged lint baseline: %w", path, err)
	}
	if b.Version != BaselineVersion {
		return nil, fmt.Errorf("%s: baseline version %d, want %d (write it again with --write-baseline)", path, b.Version, BaselineVersion)
	}
	for i, e := range b.Findings {
		if e.Path == "" || e.Check == "" || e.Fingerprint == "" || e.Count < 1 {
			return nil, fmt.Errorf("%s: finding %d: path, check, fingerprint and a count of at least 1 are required", path, i+1)
		}
	}
	return &b, nil
}

// BaselineDir is the absolute folder of a baseline file, which its paths
// are relative to.
func BaselineDir(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.Dir(abs), nil
}
