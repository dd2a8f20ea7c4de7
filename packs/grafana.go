package packs

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/pagedhq/paged/rules"
)

// FormatGrafana is a Grafana dashboard (JSON model) per pack: the seed
// panels a team builds first for the server, then one row per rule group
// with one panel per alert that charts what the alert compares, its
// threshold drawn as a line.
const FormatGrafana = "grafana"

// GrafanaSchemaVersion is the dashboard JSON schema version written
// (Grafana 11).
const GrafanaSchemaVersion = 39

// Dashboard is the part of Grafana's dashboard JSON model paged writes.
type Dashboard struct {
	UID           string         `json:"uid"`
	Title         string         `json:"title"`
	Description   string         `json:"description,omitempty"`
	Tags          []string       `json:"tags"`
	Timezone      string         `json:"timezone"`
	Editable      bool           `json:"editable"`
	GraphTooltip  int            `json:"graphTooltip"`
	SchemaVersion int            `json:"schemaVersion"`
	Version       int            `json:"version"`
	Refresh       string         `json:"refresh"`
	Time          DashboardTime  `json:"time"`
	Templating    Templating     `json:"templating"`
	Annotations   map[string]any `json:"annotations"`
	Panels        []Panel        `json:"panels"`
}

// DashboardTime is the default time range.
type DashboardTime struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Templating holds the dashboard's variables.
type Templating struct {
	List []Variable `json:"list"`
}

// Variable is a dashboard variable: the datasource, or a label's values.
type Variable struct {
	Name       string           `json:"name"`
	Label      string           `json:"label,omitempty"`
	Type       string           `json:"type"` // datasource | query
	Query      any              `json:"query"`
	Datasource *PanelDatasource `json:"datasource,omitempty"`
	Definition string           `json:"definition,omitempty"`
	Refresh    int              `json:"refresh,omitempty"`
	Multi      bool             `json:"multi"`
	IncludeAll bool             `json:"includeAll"`
	AllValue   string           `json:"allValue,omitempty"`
	Current    map[string]any   `json:"current"`
	Hide       int              `json:"hide"`
	Sort       int              `json:"sort,omitempty"`
	Regex      string           `json:"regex,omitempty"`
}

// Panel is a row or a time series panel.
type Panel struct {
	ID          int              `json:"id"`
	Type        string           `json:"type"` // row | timeseries
	Title       string           `json:"title"`
	Description string           `json:"description,omitempty"`
	GridPos     GridPos          `json:"gridPos"`
	Collapsed   *bool            `json:"collapsed,omitempty"`
	Panels      []Panel          `json:"panels,omitempty"` // a collapsed row's
	Datasource  *PanelDatasource `json:"datasource,omitempty"`
	Targets     []Target         `json:"targets,omitempty"`
	FieldConfig *FieldConfig     `json:"fieldConfig,omitempty"`
	Options     map[string]any   `json:"options,omitempty"`
	Links       []PanelLink      `json:"links,omitempty"`
}

// GridPos places a panel on the 24-column grid.
type GridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

// PanelDatasource points at the dashboard's datasource variable.
type PanelDatasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// Target is one query of a panel.
type Target struct {
	RefID        string           `json:"refId"`
	Expr         string           `json:"expr"`
	LegendFormat string           `json:"legendFormat,omitempty"`
	Range        bool             `json:"range"`
	Instant      bool             `json:"instant"`
	Datasource   *PanelDatasource `json:"datasource,omitempty"`
}

// FieldConfig holds a panel's unit and thresholds.
type FieldConfig struct {
	Defaults  FieldDefaults `json:"defaults"`
	Overrides []any         `json:"overrides"`
}

// FieldDefaults are a panel's field defaults.
type FieldDefaults struct {
	Unit       string         `json:"unit,omitempty"`
	Min        *float64       `json:"min,omitempty"`
	Max        *float64       `json:"max,omitempty"`
	Thresholds *Thresholds    `json:"thresholds,omitempty"`
	Custom     map[string]any `json:"custom,omitempty"`
}

// Thresholds are Grafana's absolute threshold steps.
type Thresholds struct {
	Mode  string          `json:"mode"`
	Steps []ThresholdStep `json:"steps"`
}

// ThresholdStep is one step; the first has no value (-Infinity).
type ThresholdStep struct {
	Color string   `json:"color"`
	Value *float64 `json:"value"`
}

// PanelLink is a link in a panel's header.
type PanelLink struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

var promDS = &PanelDatasource{Type: "prometheus", UID: "${datasource}"}

// seedPanel is one of a server's first panels.
type seedPanel struct {
	title, unit string
	exprs       [][2]string // expression, legend
}

// The panels a team builds first for each server (DESIGN.md §4): KV-cache
// usage, waiting and running requests, preemptions, TTFT / inter-token /
// end-to-end quantiles, token throughput, error ratio. [5m] stands for
// Grafana's $__rate_interval.
func seeds(server string) []seedPanel {
	q := func(metric string) [][2]string {
		return [][2]string{
			{`histogram_quantile(0.5, sum by (le) (rate(` + metric + `_bucket[5m])))`, "p50"},
			{`histogram_quantile(0.9, sum by (le) (rate(` + metric + `_bucket[5m])))`, "p90"},
			{`histogram_quantile(0.99, sum by (le) (rate(` + metric + `_bucket[5m])))`, "p99"},
		}
	}
	switch server {
	case "vllm", "vllm-v0":
		kv, itl := "vllm:kv_cache_usage_perc", "vllm:inter_token_latency_seconds"
		if server == "vllm-v0" {
			kv, itl = "vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds"
		}
		out := []seedPanel{
			{"KV-cache usage", "percentunit", [][2]string{{`max by (instance) (` + kv + `)`, "{{instance}}"}}},
			{"Requests running and waiting", "short", [][2]string{
				{`sum by (instance) (vllm:num_requests_running)`, "running {{instance}}"},
				{`sum by (instance) (vllm:num_requests_waiting)`, "waiting {{instance}}"},
			}},
			{"Preemptions", "ops", [][2]string{{`sum by (instance) (rate(vllm:num_preemptions_total[5m]))`, "{{instance}}"}}},
			{"Time to first token", "s", q("vllm:time_to_first_token_seconds")},
			{"Inter-token latency", "s", q(itl)},
			{"End-to-end request latency", "s", q("vllm:e2e_request_latency_seconds")},
			{"Token throughput", "short", [][2]string{
				{`sum(rate(vllm:prompt_tokens_total[5m]))`, "prompt tokens/s"},
				{`sum(rate(vllm:generation_tokens_total[5m]))`, "generated tokens/s"},
			}},
			{"Error ratio (HTTP 5xx)", "percentunit", [][2]string{{`sum(rate(http_requests_total{status="5xx"}[5m])) / sum(rate(http_requests_total[5m]))`, "5xx"}}},
		}
		if server == "vllm-v0" {
			out = append(out, seedPanel{"CPU swap cache", "percentunit", [][2]string{{`max by (instance) (vllm:cpu_cache_usage_perc)`, "{{instance}}"}}})
		}
		return out
	case "sglang":
		return []seedPanel{
			{"KV-cache (token) usage", "percentunit", [][2]string{{`max by (instance) (sglang:token_usage)`, "{{instance}}"}}},
			{"Requests running and queued", "short", [][2]string{
				{`sum by (instance) (sglang:num_running_reqs)`, "running {{instance}}"},
				{`sum by (instance) (sglang:num_queue_reqs)`, "queued {{instance}}"},
			}},
			{"Retracted requests", "short", [][2]string{{`sum by (instance) (sglang:num_retracted_reqs)`, "{{instance}}"}}},
			{"Time to first token", "s", q("sglang:time_to_first_token_seconds")},
			{"Inter-token latency", "s", q("sglang:inter_token_latency_seconds")},
			{"End-to-end request latency", "s", q("sglang:e2e_request_latency_seconds")},
			{"Token throughput", "short", [][2]string{
				{`sum(rate(sglang:prompt_tokens_total[5m]))`, "prompt tokens/s"},
				{`sum(rate(sglang:generation_tokens_total[5m]))`, "generated tokens/s"},
			}},
			{"Aborted ratio", "percentunit", [][2]string{{`sum(rate(sglang:num_aborted_requests_total[5m])) / sum(rate(sglang:num_requests_total[5m]))`, "aborted"}}},
		}
	case "tgi":
		return []seedPanel{
			{"Batch token budget used", "percentunit", [][2]string{{`max by (instance) (tgi_batch_current_max_tokens / tgi_batch_max_total_tokens)`, "{{instance}}"}}},
			{"Queue and batch size", "short", [][2]string{
				{`sum by (instance) (tgi_queue_size)`, "queued {{instance}}"},
				{`sum by (instance) (tgi_batch_current_size)`, "batch {{instance}}"},
			}},
			{"Queue time", "s", q("tgi_request_queue_duration")},
			{"Time per output token", "s", q("tgi_request_mean_time_per_token_duration")},
			{"Request latency", "s", q("tgi_request_duration")},
			{"Generated tokens", "short", [][2]string{{`sum(rate(tgi_request_generated_tokens_sum[5m]))`, "tokens/s"}}},
			{"Error ratio", "percentunit", [][2]string{{`sum(rate(tgi_request_failure[5m])) / sum(rate(tgi_request_count[5m]))`, "failed"}}},
		}
	case "triton":
		return []seedPanel{
			{"Pending requests", "short", [][2]string{{`sum by (instance, model) (nv_inference_pending_request_count)`, "{{model}} {{instance}}"}}},
			{"Queue time per request", "µs", [][2]string{{`sum by (model) (rate(nv_inference_queue_duration_us[5m])) / sum by (model) (rate(nv_inference_request_success[5m]))`, "{{model}}"}}},
			{"Compute time per request", "µs", [][2]string{{`sum by (model) (rate(nv_inference_compute_infer_duration_us[5m])) / sum by (model) (rate(nv_inference_request_success[5m]))`, "{{model}}"}}},
			{"Inferences", "ops", [][2]string{{`sum by (model) (rate(nv_inference_count[5m]))`, "{{model}}"}}},
			{"GPU memory used", "percentunit", [][2]string{{`max by (instance) (nv_gpu_memory_used_bytes / nv_gpu_memory_total_bytes)`, "{{instance}}"}}},
			{"Error ratio", "percentunit", [][2]string{{`sum(rate(nv_inference_request_failure[5m])) / (sum(rate(nv_inference_request_success[5m])) + sum(rate(nv_inference_request_failure[5m])))`, "failed"}}},
		}
	case "inference-gateway":
		// The gateway's view: per InferencePool (label name) and per model.
		return []seedPanel{
			{"Ready pods per pool", "short", [][2]string{{`min by (name) (inference_pool_ready_pods)`, "{{name}}"}}},
			{"Pool KV-cache usage (average)", "percentunit", [][2]string{{`max by (name) (inference_pool_average_kv_cache_utilization)`, "{{name}}"}}},
			{"Pool queue per pod (average)", "short", [][2]string{{`max by (name) (inference_pool_average_queue_size)`, "{{name}}"}}},
			{"Requests per model", "reqps", [][2]string{{`sum by (model_name) (rate(inference_objective_request_total[5m]) or rate(inference_model_request_total[5m]))`, "{{model_name}}"}}},
			{"Request latency", "s", q("inference_objective_request_duration_seconds")},
		}
	case "dcgm":
		return []seedPanel{
			{"GPU utilisation", "percent", [][2]string{{`avg by (Hostname, gpu) (DCGM_FI_DEV_GPU_UTIL)`, "{{Hostname}} GPU {{gpu}}"}}},
			{"GPU temperature", "celsius", [][2]string{{`max by (Hostname, gpu) (DCGM_FI_DEV_GPU_TEMP)`, "{{Hostname}} GPU {{gpu}}"}}},
			{"Framebuffer memory used", "percentunit", [][2]string{{`max by (Hostname, gpu) (DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE))`, "{{Hostname}} GPU {{gpu}}"}}},
		}
	}
	return nil
}

// modelLabel is the label that names the model on the server's series.
func modelLabel(server string) string {
	switch server {
	case "vllm", "vllm-v0", "sglang":
		return "model_name"
	case "triton":
		return "model"
	}
	return ""
}

// instanceLabel is the label that names the target (DCGM's exporter runs
// per node: Hostname).
func instanceLabel(server string) string {
	if server == "dcgm" {
		return "Hostname"
	}
	return "instance"
}

// GrafanaDashboard writes the pack's dashboard. Every selector gets the
// dashboard's $instance (and $model_name, where the server has a model
// label) matchers; seed panels use $__rate_interval. Alerts panels chart
// the alert's compared expression exactly as the rule evaluates it (its
// overrides applied).
func GrafanaDashboard(r *Rendered) (*Dashboard, error) {
	server := r.Pack.Server
	if server == "" {
		server = r.Pack.Name
	}
	inst, model := instanceLabel(r.Pack.Name), modelLabel(r.Pack.Name)
	d := &Dashboard{
		UID:           DashboardUID(r.Pack.Name),
		Title:         "paged · " + r.Pack.Name,
		Description:   strings.TrimSpace(strings.TrimSuffix(r.Pack.Description, ".") + ". Generated by paged from the " + r.Pack.Name + " rule pack; export again after changing its overrides."),
		Tags:          []string{"paged", "llm", server},
		Timezone:      "browser",
		Editable:      true,
		GraphTooltip:  1,
		SchemaVersion: GrafanaSchemaVersion,
		Version:       1,
		Refresh:       "30s",
		Time:          DashboardTime{From: "now-6h", To: "now"},
		Annotations:   map[string]any{"list": []any{}},
	}
	anyMetric := firstMetric(r)
	d.Templating.List = append(d.Templating.List, Variable{
		Name: "datasource", Label: "Datasource", Type: "datasource", Query: "prometheus",
		Current: map[string]any{}, Regex: "",
	})
	labelVar := func(name string) Variable {
		def := fmt.Sprintf("label_values(%s, %s)", anyMetric, name)
		return Variable{
			Name: name, Label: name, Type: "query", Datasource: promDS,
			Query:      map[string]any{"query": def, "refId": "PrometheusVariableQueryEditor-VariableQuery", "qryType": 1},
			Definition: def, Refresh: 2, Multi: true, IncludeAll: true, AllValue: ".*", Sort: 1,
			Current: map[string]any{"selected": true, "text": []string{"All"}, "value": []string{"$__all"}},
		}
	}
	d.Templating.List = append(d.Templating.List, labelVar(inst))
	if model != "" {
		d.Templating.List = append(d.Templating.List, labelVar(model))
	}
	scope := func(expr string, rateInterval bool) (string, error) {
		return scopeExpr(expr, inst, model, rateInterval)
	}

	id, y := 0, 0
	nextID := func() int { id++; return id }
	row := func(title string) {
		d.Panels = append(d.Panels, Panel{ID: nextID(), Type: "row", Title: title, GridPos: GridPos{H: 1, W: 24, X: 0, Y: y}, Collapsed: new(bool)})
		y++
	}
	x := 0
	place := func(p Panel) {
		p.GridPos = GridPos{H: 8, W: 12, X: x, Y: y}
		d.Panels = append(d.Panels, p)
		if x == 0 {
			x = 12
		} else {
			x, y = 0, y+8
		}
	}
	endRow := func() {
		if x != 0 {
			x, y = 0, y+8
		}
	}

	if ss := seeds(r.Pack.Name); len(ss) > 0 {
		row("Overview")
		for _, s := range ss {
			p := timeseries(nextID(), s.title, s.unit, nil)
			for i, e := range s.exprs {
				expr, err := zeroWhenNone(e[0])
				if err == nil {
					expr, err = scope(expr, true)
				}
				if err != nil {
					return nil, fmt.Errorf("pack %s: panel %q: %w", r.Pack.Name, s.title, err)
				}
				p.Targets = append(p.Targets, Target{RefID: string(rune('A' + i)), Expr: expr, LegendFormat: e[1], Range: true, Datasource: promDS})
			}
			place(p)
		}
		endRow()
	}
	for _, g := range r.File.Groups {
		var alerts []*rules.Rule
		for _, rule := range g.Rules {
			if rule.IsAlert() && rule.Expr != nil && rule.Expr.AST != nil {
				alerts = append(alerts, rule)
			}
		}
		if len(alerts) == 0 {
			continue
		}
		row("Alerts: " + g.Name.Value)
		for _, rule := range alerts {
			charted := rule.Expr.AST.String()
			var threshold *float64
			op := ""
			if th := rules.SplitThreshold(rule.Expr.AST); th != nil {
				charted, op = th.LHS, th.Op
				v := th.Value
				threshold = &v
				if inner, ok := unfilter(charted); ok {
					// A chain of filters (x > 0 != 48 != 62 ...): chart x
					// itself, which has data when nothing passes them.
					charted, op, threshold = inner, "", nil
				}
			}
			charted, err := zeroWhenNone(charted)
			if err != nil {
				return nil, fmt.Errorf("pack %s: alert %s: %w", r.Pack.Name, rule.Name(), err)
			}
			expr, err := scope(charted, false)
			if err != nil {
				return nil, fmt.Errorf("pack %s: alert %s: %w", r.Pack.Name, rule.Name(), err)
			}
			desc := ""
			if s, ok := rule.Annotation("summary"); ok {
				desc = s.Value
			}
			if op != "" {
				desc = strings.TrimSpace(fmt.Sprintf("Fires when this is %s %g", op, *threshold) + forText(rule) + ". " + desc)
			}
			p := timeseries(nextID(), rule.Name(), unitFor(charted), threshold)
			p.Description = desc
			p.Targets = []Target{{RefID: "A", Expr: expr, LegendFormat: legendFor(rule.Expr.AST), Range: true, Datasource: promDS}}
			if rb, ok := rule.Annotation("runbook_url"); ok && strings.Contains(rb.Value, "://") {
				p.Links = []PanelLink{{Title: "Runbook", URL: rb.Value}}
			}
			place(p)
		}
		endRow()
	}
	return d, nil
}

// unfilter returns the operand of a chain of comparisons with numbers
// (filters without bool), as in DCGM's `XID > 0 != 48 != 62`, and whether
// expr is such a chain.
func unfilter(expr string) (string, bool) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return "", false
	}
	found := false
	for {
		if p, ok := e.(*parser.ParenExpr); ok {
			e = p.Expr
			continue
		}
		b, ok := e.(*parser.BinaryExpr)
		if !ok || !b.Op.IsComparisonOperator() || b.ReturnBool {
			break
		}
		if _, num := b.RHS.(*parser.NumberLiteral); !num {
			break
		}
		e, found = b.LHS, true
	}
	return e.String(), found
}

func forText(r *rules.Rule) string {
	if r.For == nil || r.For.Value == 0 {
		return ""
	}
	return " for " + r.For.Value.String()
}

func timeseries(id int, title, unit string, threshold *float64) Panel {
	fc := &FieldConfig{Overrides: []any{}, Defaults: FieldDefaults{Unit: unit, Custom: map[string]any{"drawStyle": "line", "lineWidth": 1, "fillOpacity": 10, "showPoints": "never", "spanNulls": false}}}
	if threshold != nil {
		v := *threshold
		fc.Defaults.Thresholds = &Thresholds{Mode: "absolute", Steps: []ThresholdStep{{Color: "green"}, {Color: "red", Value: &v}}}
		fc.Defaults.Custom["thresholdsStyle"] = map[string]any{"mode": "line+area"}
	} else {
		fc.Defaults.Thresholds = &Thresholds{Mode: "absolute", Steps: []ThresholdStep{{Color: "green"}}}
		fc.Defaults.Custom["thresholdsStyle"] = map[string]any{"mode": "off"}
	}
	if unit == "percentunit" {
		zero := 0.0
		fc.Defaults.Min = &zero
	}
	return Panel{
		ID: id, Type: "timeseries", Title: title, Datasource: promDS, FieldConfig: fc,
		Options: map[string]any{
			"legend":  map[string]any{"displayMode": "list", "placement": "bottom", "showLegend": true},
			"tooltip": map[string]any{"mode": "multi", "sort": "desc"},
		},
	}
}

// unitFor guesses the Grafana unit of an expression from its metric names
// and functions, as the packs name them.
func unitFor(expr string) string {
	switch {
	case strings.Contains(expr, "_perc") || strings.Contains(expr, "usage") || strings.Contains(expr, "hit_rate") ||
		strings.Contains(expr, " / ") || strings.Contains(expr, "ratio"):
		if strings.Contains(expr, "histogram_quantile") {
			return "s"
		}
		return "percentunit"
	case strings.Contains(expr, "_seconds") || strings.Contains(expr, "_duration") && !strings.Contains(expr, "_us"):
		return "s"
	case strings.Contains(expr, "_us"):
		return "µs"
	case strings.Contains(expr, "TEMP"):
		return "celsius"
	case strings.Contains(expr, "_bytes") || strings.Contains(expr, "DCGM_FI_DEV_FB"):
		return "decmbytes"
	case strings.Contains(expr, "rate("):
		return "ops"
	}
	return "short"
}

// legendFor names series by the labels the expression aggregates by.
func legendFor(e parser.Expr) string {
	for {
		switch x := e.(type) {
		case *parser.ParenExpr:
			e = x.Expr
			continue
		case *parser.AggregateExpr:
			if x.Without || len(x.Grouping) == 0 {
				return ""
			}
			parts := make([]string, len(x.Grouping))
			for i, g := range x.Grouping {
				parts[i] = "{{" + g + "}}"
			}
			return strings.Join(parts, " ")
		case *parser.BinaryExpr:
			e = x.LHS
			continue
		}
		return ""
	}
}

// scopeExpr adds the dashboard's variables to every selector of expr:
// instance=~"$instance" and, when model is set, model=~"$model". With
// rateInterval, the [5m] ranges become [$__rate_interval].
func scopeExpr(expr, instance, model string, rateInterval bool) (string, error) {
	ast, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return "", err
	}
	parser.Inspect(ast, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		add := func(name string) {
			for _, m := range vs.LabelMatchers {
				if m.Name == name {
					return
				}
			}
			vs.LabelMatchers = append(vs.LabelMatchers, labels.MustNewMatcher(labels.MatchRegexp, name, "$"+name))
		}
		add(instance)
		if model != "" && modelSeries(vs.Name) {
			add(model)
		}
		return nil
	})
	out := ast.String()
	if rateInterval {
		out = strings.ReplaceAll(out, "[5m]", "[$__rate_interval]")
	}
	return out, nil
}

// zeroWhenNone charts every ratio of an expression whose numerator has no
// series (no error yet) as 0 rather than as a gap: A / B becomes
// (A or B * 0) / B, the usual idiom, which keeps A's labels where A has
// series. Ratios inside larger expressions (the two windows of a burn
// rate) are rewritten too.
func zeroWhenNone(expr string) (string, error) {
	ast, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return "", err
	}
	var ratios []*parser.BinaryExpr
	parser.Inspect(ast, func(n parser.Node, _ []parser.Node) error {
		b, ok := n.(*parser.BinaryExpr)
		if !ok || b.Op != parser.DIV || b.VectorMatching != nil && (b.VectorMatching.Card != parser.CardOneToOne || len(b.VectorMatching.MatchingLabels) > 0) {
			return nil
		}
		if b.LHS.Type() == parser.ValueTypeVector && b.RHS.Type() == parser.ValueTypeVector {
			ratios = append(ratios, b)
		}
		return nil
	})
	for _, b := range ratios {
		zero := &parser.BinaryExpr{Op: parser.MUL, LHS: b.RHS, RHS: &parser.NumberLiteral{Val: 0}}
		b.LHS = &parser.ParenExpr{Expr: &parser.BinaryExpr{
			Op: parser.LOR, LHS: b.LHS, RHS: zero,
			VectorMatching: &parser.VectorMatching{Card: parser.CardManyToMany},
		}}
	}
	e := ast
	for {
		p, ok := e.(*parser.ParenExpr)
		if !ok {
			break
		}
		e = p.Expr
	}
	return e.String(), nil
}

// modelSeries reports whether a metric is the server's own, which carries
// the model label (up and the HTTP middleware's http_requests_total do
// not, nor SGLang's sglang:http_* of its --enable-metrics middleware: a
// model matcher would hide them once a model is chosen).
func modelSeries(name string) bool {
	if strings.HasPrefix(name, "sglang:http_") {
		return false
	}
	for _, p := range []string{"vllm:", "sglang:", "nv_inference_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// firstMetric is a metric of the pack's, for the variables' label_values.
func firstMetric(r *Rendered) string {
	if m, ok := map[string]string{
		"vllm": "vllm:num_requests_running", "vllm-v0": "vllm:num_requests_running",
		"sglang": "sglang:num_running_reqs", "tgi": "tgi_queue_size",
		"triton": "nv_inference_pending_request_count", "dcgm": "DCGM_FI_DEV_GPU_TEMP",
		"inference-gateway": "inference_pool_ready_pods",
	}[r.Pack.Name]; ok {
		return m
	}
	for _, g := range r.File.Groups {
		for _, rule := range g.Rules {
			if rule.Expr == nil || rule.Expr.AST == nil {
				continue
			}
			var name string
			parser.Inspect(rule.Expr.AST, func(n parser.Node, _ []parser.Node) error {
				if vs, ok := n.(*parser.VectorSelector); ok && name == "" && vs.Name != "" {
					name = vs.Name
				}
				return nil
			})
			if name != "" {
				return name
			}
		}
	}
	return "up"
}

// DashboardUID is the dashboard's uid: stable, so that re-imports replace
// the dashboard and dashboard_url links keep working.
func DashboardUID(pack string) string { return "paged-" + pack }

// GrafanaJSON writes dashboards as indented JSON.
func GrafanaJSON(d *Dashboard) ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
