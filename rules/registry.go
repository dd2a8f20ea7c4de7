package rules

// The loader's own checks: they have no function, the loader reports them,
// but they are listed so they can be documented, re-weighted or disabled.
// alerts/template (check_alerts_template.go) is one of them too.
var (
	checkYAMLParse = &Check{
		Name:     CheckYAMLParse,
		Help:     "The file is valid YAML: syntax, duplicate keys, one document per Prometheus rule file.",
		Severity: Error,
	}
	checkStructure = &Check{
		Name:     CheckStructure,
		Help:     "Groups and rules have the fields Prometheus accepts, with valid names, labels and durations.",
		Severity: Error,
	}
	checkPromQLSyntax = &Check{
		Name:     CheckPromQLSyntax,
		Help:     "The expression parses as PromQL; the error points at the column inside the expression.",
		Severity: Error,
	}
)

// registry lists every check, in the order they run. Add new checks here.
var registry = []*Check{
	checkYAMLParse,
	checkStructure,
	checkPromQLSyntax,
	checkRuleDuplicate,
	checkRuleDependency,
	checkAlertsTemplate,
	checkAlertsTemplateLabels,
	checkAlertsFor,
	checkAlertsLabels,
	checkAlertsAnnotations,
	checkAlertsRunbook,
	checkAlertsComparison,
	checkAlertsAbsentLabels,
	checkAlertsFragile,
	checkPromQLRange,
	checkPromQLOrVector,
	checkPromQLNaN,
	checkPromQLRegexp,
	checkPromQLImpossible,
	// LLM metric catalogue and type-aware PromQL checks.
	checkCatalogUnknownMetric,
	checkCatalogCounterSuffix,
	checkCatalogRemovedMetric,
	checkCatalogSeriesSuffix,
	checkCatalogLabel,
	checkCatalogThresholdUnit,
	checkPromQLCounter,
	checkPromQLRateGauge,
	checkPromQLHistogramLe,
	checkPromQLLeBucket,
	checkSeriesLive,
	checkSeriesType,
	checkAlertsCount,
	checkQueryCost,
	checkRuleExternalLabels,
	// The notifier block of a paged.yaml (LintNotifier).
	checkNotifierRouteShadowed,
	checkNotifierReceiverUnused,
	checkNotifierReceiverEmpty,
	checkNotifierInhibitLabels,
	checkNotifierGroupBy,
	checkNotifierTemplateRefs,
	checkNotifierTimeLocation,
}

// Checks returns every registered check.
func Checks() []*Check { return registry }
