package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/pagedhq/paged/notifier"
)

// notifierProblems turns the notifier's joined, positioned errors into
// problems.
func (d *decoder) notifierProblems(n *yaml.Node, err error) {
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		var pe *notifier.PosError
		if errors.As(err, &pe) {
			d.problems = append(d.problems, Problem{File: d.file, Line: pe.Line, Column: pe.Column, Key: "notifier", Message: strings.TrimPrefix(pe.Msg, "notifier: ")})
			return
		}
		at, msg := nodeAtLine(n, err.Error())
		d.errorf(at, "notifier", "%s", redactTypeError(msg))
	}
	walk(err)
}

// notifierFiles checks that every *_file in the notifier block (secrets
// such as api_url_file, app_token_file, hmac_secret_file, and http_config
// files) names a readable regular file, relative to the config directory.
func (d *decoder) notifierFiles(n *yaml.Node, key, dir string) {
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, resolve(n.Content[i+1])
			if strings.HasSuffix(k, "_file") && v.Kind == yaml.ScalarNode && v.Value != "" && !isNull(v) {
				if _, err := readSmallFile(joinDir(dir, v.Value)); err != nil {
					d.errorf(v, joinKey(key, k), "cannot read file %s: %v", joinDir(dir, v.Value), err)
				}
				continue
			}
			d.notifierFiles(v, joinKey(key, k), dir)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			d.notifierFiles(c, fmt.Sprintf("%s[%d]", key, i), dir)
		}
	}
}

func joinDir(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// resolveNotifierPaths makes the notifier's file paths relative to the
// configuration file's directory, as Prometheus and Alertmanager do.
func resolveNotifierPaths(c *notifier.Config, dir string) {
	for i, t := range c.Templates {
		c.Templates[i] = joinDir(dir, t)
	}
	for i := range c.Receivers {
		r := &c.Receivers[i]
		for _, s := range r.SlackConfigs {
			s.APIURLFile = joinDir(dir, s.APIURLFile)
			s.AppTokenFile = joinDir(dir, s.AppTokenFile)
			s.HTTPConfig.SetDirectory(dir)
		}
		for _, w := range r.WebhookConfigs {
			w.URLFile = joinDir(dir, w.URLFile)
			w.HMACSecretFile = joinDir(dir, w.HMACSecretFile)
			w.HTTPConfig.SetDirectory(dir)
		}
		r.SetUpstreamDirectory(dir)
	}
	for i := range c.Alertmanagers {
		c.Alertmanagers[i].HTTPConfig.SetDirectory(dir)
	}
	if si := c.SlackInteractivity; si != nil {
		si.AppLevelTokenFile = joinDir(dir, si.AppLevelTokenFile)
		si.SigningSecretFile = joinDir(dir, si.SigningSecretFile)
	}
}
