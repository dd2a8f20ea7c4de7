package rules

import (
	"context"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A runbook link that does not open is worse than none. Relative links
// (resolved by paged against its own /runbooks/ or runbook_base_url) must
// name a file in the runbooks folder; absolute links are fetched with HTTP
// HEAD when --check-links is given.
var checkAlertsRunbook = &Check{
	Name:     "alerts/runbook",
	Help:     "runbook_url resolves: a relative link names a file in the runbooks folder; with --check-links an absolute link answers HTTP HEAD.",
	Severity: Error,
	Rule:     lintRunbook,
}

func lintRunbook(p *Pass, r *Rule) {
	if !r.IsAlert() {
		return
	}
	v, ok := r.Annotation("runbook_url")
	if !ok || v.Value == "" || strings.Contains(v.Value, "{{") {
		return
	}
	u, err := url.Parse(strings.TrimSpace(v.Value))
	if err != nil {
		p.ReportNode(v.Node, "runbook_url %q is not a valid URL: %v", v.Value, err)
		return
	}
	if u.Scheme != "" || u.Host != "" {
		if u.Scheme != "http" && u.Scheme != "https" {
			p.ReportNode(v.Node, "runbook_url %q: only http and https links open in Slack and browsers", v.Value)
			return
		}
		if p.Config.CheckLinks {
			if err := headOK(u.String()); err != nil {
				p.ReportNode(v.Node, "runbook_url %q does not open: %v", v.Value, err)
			}
		}
		return
	}
	if fsys := p.File.Runbooks; fsys != nil {
		rel := strings.TrimPrefix(u.Path, "/")
		for _, candidate := range []string{rel, rel + ".md"} {
			if st, err := fs.Stat(fsys, candidate); err == nil && !st.IsDir() && rel != "" {
				return
			}
		}
		p.ReportNode(v.Node, "runbook %q is not among the runbooks built into paged", v.Value)
		return
	}
	dir := p.Config.RunbooksDir
	if dir == "" {
		dir = findRunbooksDir(filepath.Dir(p.File.Path))
	}
	if dir == "" {
		p.ReportSeverity(Warning, p.File.NodeRange(v.Node),
			"relative runbook_url %q cannot be checked: no runbooks folder found beside the rule file or its parents (set runbooks_dir in .paged-lint.yaml)", v.Value)
		return
	}
	rel := strings.TrimPrefix(filepath.FromSlash(u.Path), string(filepath.Separator))
	if rel == "" {
		p.ReportNode(v.Node, "runbook_url %q names no file", v.Value)
		return
	}
	for _, candidate := range []string{rel, rel + ".md"} {
		if st, err := os.Stat(filepath.Join(dir, candidate)); err == nil && !st.IsDir() {
			return
		}
	}
	p.ReportNode(v.Node, "runbook %q not found in %s", v.Value, dir)
}

// findRunbooksDir looks for a folder named "runbooks" in dir and beside each
// of its parents (examples/packs/vllm → examples/runbooks).
func findRunbooksDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for d := abs; ; d = filepath.Dir(d) {
		cand := filepath.Join(d, "runbooks")
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return relIfShorter(cand)
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

func relIfShorter(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, p); err == nil && len(rel) < len(p) {
		return rel
	}
	return p
}

func headOK(u string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		return &httpStatusError{resp.StatusCode}
	}
	return nil
}

type httpStatusError struct{ code int }

func (e *httpStatusError) Error() string {
	return "HTTP " + http.StatusText(e.code) + " (" + strconv.Itoa(e.code) + ")"
}
