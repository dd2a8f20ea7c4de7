package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pagedhq/paged/rules/catalog"
)

// The Go projects (GAIE's endpoint picker, llm-d's scheduler) declare
// their families with client_golang: prometheus.NewCounterVec(
// prometheus.CounterOpts{Namespace, Subsystem, Name}, labels), and a few
// with prometheus.NewDesc(name, help, labels, ...) sent by a collector
// as MustNewConstMetric(desc, prometheus.GaugeValue, ...). Names and
// label lists are constants, variables, []string literals and append()
// of them, resolved within the package.

var goConstructors = map[string]catalog.Type{
	"NewCounterVec": catalog.Counter, "NewCounter": catalog.Counter,
	"NewGaugeVec": catalog.Gauge, "NewGauge": catalog.Gauge,
	"NewHistogramVec": catalog.Histogram, "NewHistogram": catalog.Histogram,
	"NewSummaryVec": catalog.Summary, "NewSummary": catalog.Summary,
}

var goValueTypes = map[string]catalog.Type{
	"GaugeValue": catalog.Gauge, "CounterValue": catalog.Counter, "UntypedValue": catalog.Unknown,
}

// goPackage is one directory's package: its files and the package-level
// values of its constants and variables.
type goPackage struct {
	fset  *token.FileSet
	root  string
	files map[string]*ast.File // by path relative to root
	vals  map[string]ast.Expr
}

func parseGoDir(root, dir string) (*goPackage, error) {
	p := &goPackage{fset: token.NewFileSet(), root: root, files: map[string]*ast.File{}, vals: map[string]ast.Expr{}}
	entries, err := os.ReadDir(filepath.Join(root, dir))
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		rel := filepath.ToSlash(filepath.Join(dir, n))
		f, err := parser.ParseFile(p.fset, filepath.Join(root, rel), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		p.files[rel] = f
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || (g.Tok != token.CONST && g.Tok != token.VAR) {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						p.vals[name.Name] = vs.Values[i]
					}
				}
			}
		}
	}
	return p, nil
}

// str resolves a string expression: a literal, a constant, a + b.
func (p *goPackage) str(e ast.Expr, depth int) (string, bool) {
	if depth > 20 {
		return "", false
	}
	switch n := e.(type) {
	case *ast.BasicLit:
		if n.Kind == token.STRING {
			s, err := strconv.Unquote(n.Value)
			return s, err == nil
		}
	case *ast.Ident:
		if v, ok := p.vals[n.Name]; ok {
			return p.str(v, depth+1)
		}
	case *ast.BinaryExpr:
		if n.Op == token.ADD {
			a, ok1 := p.str(n.X, depth+1)
			b, ok2 := p.str(n.Y, depth+1)
			return a + b, ok1 && ok2
		}
	case *ast.ParenExpr:
		return p.str(n.X, depth+1)
	case *ast.CallExpr:
		// prometheus.BuildFQName(namespace, subsystem, name)
		if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "BuildFQName" && len(n.Args) == 3 {
			var parts []string
			for _, a := range n.Args {
				s, ok := p.str(a, depth+1)
				if !ok {
					return "", false
				}
				if s != "" {
					parts = append(parts, s)
				}
			}
			return strings.Join(parts, "_"), true
		}
	}
	return "", false
}

// strs resolves a []string expression: a literal, a variable, append().
func (p *goPackage) strs(e ast.Expr, depth int) ([]string, bool) {
	if depth > 20 {
		return nil, false
	}
	switch n := e.(type) {
	case *ast.CompositeLit:
		out := []string{}
		for _, el := range n.Elts {
			s, ok := p.str(el, depth+1)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	case *ast.Ident:
		if n.Name == "nil" {
			return []string{}, true
		}
		if v, ok := p.vals[n.Name]; ok {
			return p.strs(v, depth+1)
		}
	case *ast.CallExpr:
		if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "append" && len(n.Args) > 0 {
			out, ok := p.strs(n.Args[0], depth+1)
			if !ok {
				return nil, false
			}
			out = append([]string{}, out...)
			for i, a := range n.Args[1:] {
				if n.Ellipsis.IsValid() && i == len(n.Args)-2 {
					more, ok := p.strs(a, depth+1) // append(x, y...)
					if !ok {
						return nil, false
					}
					out = append(out, more...)
					continue
				}
				s, ok := p.str(a, depth+1)
				if !ok {
					return nil, false
				}
				out = append(out, s)
			}
			return out, true
		}
	}
	return nil, false
}

// optsName is the name of a *Opts composite literal: Namespace, Subsystem
// and Name joined by _.
func (p *goPackage) optsName(e ast.Expr) (string, bool) {
	if u, ok := e.(*ast.UnaryExpr); ok {
		e = u.X
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return "", false
	}
	var ns, sub, name string
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		k, _ := kv.Key.(*ast.Ident)
		if k == nil {
			continue
		}
		v, ok := p.str(kv.Value, 0)
		switch k.Name {
		case "Namespace", "Subsystem", "Name":
			if !ok {
				return "", false
			}
		}
		switch k.Name {
		case "Namespace":
			ns = v
		case "Subsystem":
			sub = v
		case "Name":
			name = v
		}
	}
	var parts []string
	for _, s := range []string{ns, sub, name} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "_"), name != ""
}

// families lists the package's metric families.
func (p *goPackage) families(up *upstream) {
	descs := map[string]*family{} // NewDesc variables, typed by MustNewConstMetric
	for rel, f := range p.files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			where := fmt.Sprintf("%s:%d", rel, p.fset.Position(call.Pos()).Line)
			if t, ok := goConstructors[sel.Sel.Name]; ok && len(call.Args) >= 1 {
				name, ok := p.optsName(call.Args[0])
				if !ok {
					return true
				}
				fam := family{Name: name, Type: t, Where: where, Labels: []string{}}
				if len(call.Args) >= 2 {
					ls, ok := p.strs(call.Args[1], 0)
					if ok {
						fam.Labels = ls
					} else {
						fam.Labels = nil
					}
				}
				up.add(fam)
			}
			return true
		})
		// var x = prometheus.NewDesc(name, help, labels, constLabels)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					call, ok := vs.Values[i].(*ast.CallExpr)
					if !ok {
						continue
					}
					sel, ok := call.Fun.(*ast.SelectorExpr)
					if !ok || sel.Sel.Name != "NewDesc" || len(call.Args) < 3 {
						continue
					}
					name, ok := p.str(call.Args[0], 0)
					if !ok {
						continue
					}
					fam := &family{Name: name, Where: fmt.Sprintf("%s:%d", rel, p.fset.Position(call.Pos()).Line)}
					if ls, ok := p.strs(call.Args[2], 0); ok {
						fam.Labels = ls
					}
					descs[id.Name] = fam
				}
			}
		}
	}
	for _, f := range p.files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "MustNewConstMetric" && sel.Sel.Name != "NewConstMetric") {
				return true
			}
			id, ok := call.Args[0].(*ast.Ident)
			vt, ok2 := call.Args[1].(*ast.SelectorExpr)
			if ok && ok2 && descs[id.Name] != nil {
				descs[id.Name].Type = goValueTypes[vt.Sel.Name]
			}
			return true
		})
	}
	for _, d := range descs {
		up.add(*d)
	}
}

// goMetrics reads the families of the packages in dirs; a directory the
// revision does not have is skipped.
func goMetrics(root string, dirs []string) (*upstream, error) {
	up := &upstream{families: map[string]*family{}}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(root, d)); err != nil {
			continue
		}
		p, err := parseGoDir(root, d)
		if err != nil {
			return nil, err
		}
		p.families(up)
	}
	return up, nil
}

// readGAIE reads the endpoint picker's metrics. GAIE v1.6.0 removed the
// endpoint picker: a checkout without pkg/epp/metrics has none.
func readGAIE(dir string) (*upstream, error) {
	if _, err := os.Stat(filepath.Join(dir, "pkg/epp/metrics/metrics.go")); err != nil {
		return &upstream{absent: "pkg/epp/metrics/metrics.go is not in the checkout: this revision has no endpoint picker"}, nil
	}
	return goMetrics(dir, []string{"pkg/epp/metrics", "pkg/epp/metrics/collectors"})
}

// readLLMD reads llm-d's scheduler: its own counters, and the endpoint
// picker's families it carries since GAIE 1.5.
func readLLMD(dir string) (*upstream, error) {
	return goMetrics(dir, []string{"pkg/metrics", "pkg/epp/metrics", "pkg/epp/metrics/collectors"})
}
