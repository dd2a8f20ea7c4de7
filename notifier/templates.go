package notifier

import (
	"bytes"
	_ "embed"
	"fmt"
	tmplhtml "html/template"
	tmpltext "text/template"

	"github.com/prometheus/alertmanager/template"
)

//go:embed templates/paged.tmpl
var pagedTemplates []byte

// newTemplate loads Alertmanager's default templates, then paged's
// (templates/paged.tmpl: the runbook link of PagerDuty and Opsgenie, the
// email body), then the user's files, which may redefine any of them.
func newTemplate(globs []string, links linkBuilder) (*template.Template, error) {
	funcs := map[string]any{
		// pagedRunbook resolves a runbook_url annotation as the Slack
		// message's Runbook button does.
		"pagedRunbook": func(ref string) string {
			if links.external == nil {
				return ""
			}
			return links.Runbook(ref)
		},
	}
	tmpl, err := template.FromGlobs(nil, func(text *tmpltext.Template, html *tmplhtml.Template) {
		text.Funcs(funcs)
		html.Funcs(funcs)
	})
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	if err := tmpl.Parse(bytes.NewReader(pagedTemplates)); err != nil {
		return nil, fmt.Errorf("paged templates: %w", err)
	}
	for _, g := range globs {
		if err := tmpl.FromGlob(g); err != nil {
			return nil, fmt.Errorf("templates: %w", err)
		}
	}
	tmpl.ExternalURL = links.external
	return tmpl, nil
}
