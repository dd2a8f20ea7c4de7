package demo

import (
	"net/url"
	"strings"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/rules"
)

// linker resolves runbook_url annotations as the notifier does (DESIGN.md
// §4): absolute URLs stay, relative ones resolve against runbook_base_url,
// or against paged's own /runbooks/ when that is empty.
type linker struct {
	base *url.URL // nil until the configuration is loaded
}

func newLinker(cfg *config.Config) linker {
	if cfg.RunbookBaseURL != nil {
		return linker{base: cfg.RunbookBaseURL}
	}
	u := *cfg.Global.ExternalURL
	u.Path = strings.TrimSuffix(u.Path, "/") + "/runbooks/"
	return linker{base: &u}
}

// runbook returns the link to open, or "" for none or a broken one.
func (l linker) runbook(ref string) string { return rules.ResolveRunbook(ref, l.base) }
