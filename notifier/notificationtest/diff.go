package notificationtest

import (
	"strings"

	"github.com/pagedhq/paged/engine/ruletest"
)

// lineDiff is the rule tests' diff.
var lineDiff = ruletest.LineDiff

// indent prefixes every line but the first with prefix.
func indent(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}
