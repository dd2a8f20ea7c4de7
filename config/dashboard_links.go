package config

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/model/rulefmt"

	"github.com/pagedhq/paged/packs"
)

// addDashboardURLs gives each alert of a pack a dashboard_url annotation
// (Slack's Dashboard button) that opens its panel of the pack's dashboard
// (paged export --format grafana) in the Grafana at base:
// {grafana_url}/d/paged-<pack>?viewPanel=<id>. An annotation the rule
// already has is kept.
func addDashboardURLs(groups *rulefmt.RuleGroups, r *packs.Rendered, base *url.URL) {
	if groups == nil {
		return
	}
	d, err := packs.GrafanaDashboard(r)
	if err != nil {
		return
	}
	ids := map[string]int{}
	for _, p := range d.Panels {
		if p.Type == "timeseries" {
			if _, seen := ids[p.Title]; !seen {
				ids[p.Title] = p.ID
			}
		}
	}
	root := strings.TrimRight(base.String(), "/")
	for gi := range groups.Groups {
		for ri := range groups.Groups[gi].Rules {
			rule := &groups.Groups[gi].Rules[ri]
			id, ok := ids[rule.Alert]
			if rule.Alert == "" || !ok || rule.Annotations["dashboard_url"] != "" {
				continue
			}
			if rule.Annotations == nil {
				rule.Annotations = map[string]string{}
			}
			rule.Annotations["dashboard_url"] = root + "/d/" + url.PathEscape(d.UID) + "?viewPanel=" + strconv.Itoa(id)
		}
	}
}
