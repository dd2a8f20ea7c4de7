package config

import (
	"os"

	"github.com/prometheus/exporter-toolkit/web"
	yamlv2 "go.yaml.in/yaml/v2"
)

// UseWebConfig makes path (--web.config.file) the web configuration of
// cfg, over web.config_file.
func (c *Config) UseWebConfig(path string) {
	if path == "" {
		return
	}
	c.Web.ConfigFile = path
	c.defaultExternalScheme()
}

// defaultExternalScheme makes the default external URL https when the web
// configuration turns TLS on, so that links in alerts work.
func (c *Config) defaultExternalScheme() {
	if !c.externalURLDefault {
		return
	}
	u := *c.Global.ExternalURL
	u.Scheme = "http"
	if webTLSEnabled(c.Web.ConfigFile) {
		u.Scheme = "https"
	}
	c.Global.ExternalURL = &u
}

// WebFile is the part of a web configuration file paged itself reads; the
// toolkit reads the rest.
type WebFile struct {
	TLS   web.TLSConfig     `yaml:"tls_server_config"`
	Users map[string]string `yaml:"basic_auth_users"`
}

// ReadWebFile reads the web configuration file at path (--web.config.file
// or web.config_file); ok is false when there is none or it does not parse.
func ReadWebFile(path string) (WebFile, bool) {
	var f WebFile
	if path == "" {
		return f, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return f, false
	}
	if err := yamlv2.Unmarshal(b, &f); err != nil {
		return f, false
	}
	return f, true
}

// webTLSEnabled reports whether the web configuration file turns TLS on.
func webTLSEnabled(path string) bool {
	f, ok := ReadWebFile(path)
	return ok && f.TLS.IsEnabled()
}
