package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/pagedhq/paged/rules/catalog"
)

// dcgm-exporter's etc/default-counters.csv: "FIELD, type, help" a line,
// a # before the fields the default file ships disabled. Fields of type
// label are labels on the other series, not metrics.
var csvFieldRe = regexp.MustCompile(`^\s*(#\s*)?(DCGM_(?:FI|EXP)_[A-Z0-9_]+)\s*,\s*([a-z]+)\s*,`)

func readDCGMExporter(dir string) (*upstream, error) {
	const rel = "etc/default-counters.csv"
	data, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		return nil, err
	}
	up := &upstream{families: map[string]*family{}}
	for i, line := range strings.Split(string(data), "\n") {
		m := csvFieldRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		f := family{Name: m[2], Where: fmt.Sprintf("%s:%d", rel, i+1), Optional: m[1] != ""}
		switch m[3] {
		case "gauge":
			f.Type = catalog.Gauge
		case "counter":
			f.Type = catalog.Counter
		case "label":
			continue
		}
		// A field listed twice (the PCIe byte counters, commented out as
		// counters and enabled as gauges) is what its enabled line says.
		if prev, ok := up.families[f.Name]; ok && (f.Optional || !prev.Optional) {
			continue
		}
		up.families[f.Name] = &f
	}
	return up, nil
}

// go-dcgm's pkg/dcgm/const_fields.go, generated from dcgm_fields.h: every
// field name, against rules/catalog/dcgm_fields.txt.
var goDCGMFieldRe = regexp.MustCompile(`(?m)^\s+(DCGM_FI_[A-Z0-9_]+)\s+Short\s*=`)

func readGoDCGM(dir string) (*upstream, error) {
	const rel = "pkg/dcgm/const_fields.go"
	data, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		return nil, err
	}
	up := &upstream{names: map[string]string{}}
	for _, m := range goDCGMFieldRe.FindAllSubmatchIndex(data, -1) {
		name := string(data[m[2]:m[3]])
		if _, ok := up.names[name]; !ok {
			up.names[name] = rel + ":" + strconv.Itoa(lineOf(data, m[0]))
		}
	}
	if len(up.names) == 0 {
		return nil, fmt.Errorf("%s: no DCGM_FI_ constants", rel)
	}
	return up, nil
}
