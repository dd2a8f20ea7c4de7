package catalog

import (
	_ "embed"
	"strings"
)

// dcgmFieldList is every DCGM field name, one a line (dcgm_fields.txt).
// dcgm-exporter exposes a field under its DCGM name once its collectors
// CSV lists it; the catalogue's dcgm_exporter entries are the default
// counters and the ones the default file has commented out.
//
//go:embed dcgm_fields.txt
var dcgmFieldList string

// parseFieldList reads a list of names, one a line, with # comments.
func parseFieldList(text string) map[string]bool {
	out := map[string]bool{}
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out[line] = true
	}
	return out
}
