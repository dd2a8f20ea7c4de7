package ruletest

import (
	"sync"

	pagedrules "github.com/pagedhq/paged/rules"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

// LoadRulesFunc parses one rule file. It is the seam to the rule-file parser.
type LoadRulesFunc func(path string, ignoreUnknownFields bool, p parser.Parser) (*rulefmt.RuleGroups, []error)

// ParseRuleFile is the default LoadRulesFunc: paged's rule-file parser
// (Prometheus groups: files and PrometheusRule CRDs, validated as
// Prometheus 3 does), with every problem reported at its position.
func ParseRuleFile(path string, ignoreUnknownFields bool, p parser.Parser) (*rulefmt.RuleGroups, []error) {
	f, err := pagedrules.ReadFile(path, pagedrules.ParseOptions{IgnoreUnknownFields: ignoreUnknownFields, Parser: p})
	if err != nil {
		return nil, []error{err}
	}
	if errs := f.Errors(); len(errs) > 0 {
		return nil, errs
	}
	return f.RuleGroups(), nil
}

// ruleCache is the rules.GroupLoader of one run: each rule file is parsed
// once, however many test groups load it.
type ruleCache struct {
	load   LoadRulesFunc
	parser parser.Parser
	files  map[ruleKey]ruleEntry
	order  []ruleKey // first-load order, for reports

	mu      sync.Mutex
	loading map[ruleKey]*sync.Once
}

type ruleKey struct {
	path   string
	ignore bool
}

type ruleEntry struct {
	groups *rulefmt.RuleGroups
	errs   []error
}

func newRuleCache(load LoadRulesFunc, p parser.Parser) *ruleCache {
	return &ruleCache{load: load, parser: p, files: map[ruleKey]ruleEntry{}, loading: map[ruleKey]*sync.Once{}}
}

// Load implements rules.GroupLoader.
func (c *ruleCache) Load(path string, ignoreUnknownFields bool, _ model.ValidationScheme) (*rulefmt.RuleGroups, []error) {
	k := ruleKey{path, ignoreUnknownFields}
	c.mu.Lock()
	once := c.loading[k]
	if once == nil {
		once = &sync.Once{}
		c.loading[k] = once
		c.order = append(c.order, k)
	}
	c.mu.Unlock()
	once.Do(func() {
		var e ruleEntry
		e.groups, e.errs = c.load(path, ignoreUnknownFields, c.parser)
		c.mu.Lock()
		c.files[k] = e
		c.mu.Unlock()
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.files[k]
	return e.groups, e.errs
}

// Parse implements rules.GroupLoader.
func (c *ruleCache) Parse(query string) (parser.Expr, error) { return c.parser.ParseExpr(query) }
