package packs

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestGrafanaDashboards checks every built-in pack's dashboard against the
// fields of Grafana's dashboard schema (schemaVersion 39) that Grafana
// needs to import it: uid, title, schemaVersion, a time range, templating
// variables of known types, panels with unique ids on the 24-column grid,
// rows, and time series panels whose queries use the datasource variable.
// One panel per alert, with the alert's threshold (overrides applied).
func TestGrafanaDashboards(t *testing.T) {
	all, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		t.Run(p.Name, func(t *testing.T) {
			o := Overrides{}
			if p.Name == "vllm" {
				o.Set = map[string]float64{"VLLMKVCacheSaturated": 0.8}
				o.Disable = []string{"VLLMTargetMissing"}
			}
			r, err := p.Apply(o)
			if err != nil {
				t.Fatal(err)
			}
			outs, err := Export([]*Rendered{r}, ExportOptions{Format: FormatGrafana})
			if err != nil {
				t.Fatal(err)
			}
			if len(outs) != 1 || outs[0].File != p.Name+".json" {
				t.Fatalf("outputs = %v", outs)
			}
			var d map[string]any
			if err := json.Unmarshal(outs[0].Content, &d); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
			for _, k := range []string{"uid", "title", "timezone"} {
				if str(d, k) == "" {
					t.Errorf("dashboard.%s missing", k)
				}
			}
			if v, _ := d["schemaVersion"].(float64); v < 36 {
				t.Errorf("schemaVersion = %v, want a current one (>= 36)", d["schemaVersion"])
			}
			if tm, _ := d["time"].(map[string]any); str(tm, "from") == "" || str(tm, "to") == "" {
				t.Errorf("time = %v", d["time"])
			}
			vars := map[string]map[string]any{}
			for _, v := range d["templating"].(map[string]any)["list"].([]any) {
				v := v.(map[string]any)
				switch str(v, "type") {
				case "datasource", "query", "custom", "interval", "constant", "textbox":
				default:
					t.Errorf("variable %s has type %q", str(v, "name"), str(v, "type"))
				}
				vars[str(v, "name")] = v
			}
			if ds := vars["datasource"]; ds == nil || str(ds, "type") != "datasource" || str(ds, "query") != "prometheus" {
				t.Errorf("no Prometheus datasource variable: %v", vars["datasource"])
			}
			inst := "instance"
			if p.Name == "dcgm" {
				inst = "Hostname"
			}
			if v := vars[inst]; v == nil || str(v, "type") != "query" || !strings.HasPrefix(str(v, "definition"), "label_values(") {
				t.Errorf("no %s variable: %v", inst, v)
			}
			if p.Name == "vllm" && vars["model_name"] == nil {
				t.Errorf("no model_name variable")
			}

			ids := map[float64]bool{}
			panelsByTitle := map[string]map[string]any{}
			rows := 0
			for _, pn := range d["panels"].([]any) {
				pn := pn.(map[string]any)
				id, _ := pn["id"].(float64)
				if id == 0 || ids[id] {
					t.Errorf("panel %q: id %v missing or repeated", str(pn, "title"), pn["id"])
				}
				ids[id] = true
				g := pn["gridPos"].(map[string]any)
				if w, x := g["w"].(float64), g["x"].(float64); w <= 0 || x < 0 || x+w > 24 || g["h"].(float64) <= 0 {
					t.Errorf("panel %q off the grid: %v", str(pn, "title"), g)
				}
				switch str(pn, "type") {
				case "row":
					rows++
				case "timeseries":
					ds, _ := pn["datasource"].(map[string]any)
					if str(ds, "uid") != "${datasource}" || str(ds, "type") != "prometheus" {
						t.Errorf("panel %q datasource = %v", str(pn, "title"), ds)
					}
					targets, _ := pn["targets"].([]any)
					if len(targets) == 0 {
						t.Errorf("panel %q has no query", str(pn, "title"))
					}
					for _, tg := range targets {
						tg := tg.(map[string]any)
						if str(tg, "refId") == "" || str(tg, "expr") == "" || !strings.Contains(str(tg, "expr"), `=~"$`+inst+`"`) {
							t.Errorf("panel %q query %v: want refId, expr and the $%s variable", str(pn, "title"), tg, inst)
						}
					}
					if _, ok := pn["fieldConfig"].(map[string]any)["defaults"]; !ok {
						t.Errorf("panel %q without fieldConfig.defaults", str(pn, "title"))
					}
					panelsByTitle[str(pn, "title")] = pn
				default:
					t.Errorf("panel %q has type %q", str(pn, "title"), str(pn, "type"))
				}
			}
			if rows < len(r.File.Groups) {
				t.Errorf("%d rows for %d rule groups", rows, len(r.File.Groups))
			}
			for _, g := range r.File.Groups {
				for _, rule := range g.Rules {
					if !rule.IsAlert() {
						continue
					}
					if panelsByTitle[rule.Name()] == nil {
						t.Errorf("no panel for alert %s", rule.Name())
					}
				}
			}
			if p.Name == "vllm" {
				if panelsByTitle["VLLMTargetMissing"] != nil {
					t.Errorf("a disabled alert has a panel")
				}
				kv := panelsByTitle["VLLMKVCacheSaturated"]
				steps := kv["fieldConfig"].(map[string]any)["defaults"].(map[string]any)["thresholds"].(map[string]any)["steps"].([]any)
				if len(steps) != 2 || steps[0].(map[string]any)["value"] != nil || steps[1].(map[string]any)["value"] != 0.8 {
					t.Errorf("VLLMKVCacheSaturated thresholds = %v, want the override 0.8 as a line", steps)
				}
				if u := kv["fieldConfig"].(map[string]any)["defaults"].(map[string]any)["unit"]; u != "percentunit" {
					t.Errorf("KV cache unit = %v", u)
				}
				if u := panelsByTitle["VLLMTimeToFirstTokenHigh"]["fieldConfig"].(map[string]any)["defaults"].(map[string]any)["unit"]; u != "s" {
					t.Errorf("TTFT unit = %v", u)
				}
				for _, seed := range []string{"KV-cache usage", "Requests running and waiting", "Preemptions", "Time to first token", "Inter-token latency", "End-to-end request latency", "Token throughput", "Error ratio (HTTP 5xx)"} {
					if panelsByTitle[seed] == nil {
						t.Errorf("no seed panel %q", seed)
					}
				}
			}
		})
	}
}

func TestGrafanaJoinAndOptions(t *testing.T) {
	all, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	var rs []*Rendered
	for _, p := range all[:2] {
		r, err := p.Apply(Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	b, err := Join(rs, ExportOptions{Format: FormatGrafana})
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	n := 0
	for dec.More() {
		var d map[string]any
		if err := dec.Decode(&d); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("joined %d dashboards, want 2", n)
	}
	if _, err := Export(rs, ExportOptions{Format: FormatGrafana, Name: "x"}); err == nil {
		t.Errorf("--name accepted for grafana")
	}
}
