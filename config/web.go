package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v3"
)

// webConfigFile checks web.config_file: an exporter-toolkit web
// configuration (tls_server_config, basic_auth_users, http_server_config),
// validated as Prometheus's --web.config.file is, certificates and bcrypt
// hashes included. A relative path resolves against dir.
func (d *decoder) webConfigFile(dst *string, dir string) func(*yaml.Node, string) {
	return func(n *yaml.Node, key string) {
		v, ok := d.scalar(n, key)
		if !ok || v == "" {
			return
		}
		if !filepath.IsAbs(v) {
			v = filepath.Join(dir, v)
		}
		if err := ValidateWebConfig(v); err != nil {
			d.errorf(n, key, "%v", err)
			return
		}
		*dst = v
	}
}

// ValidateWebConfig runs exporter-toolkit's own validation of a web
// configuration file (web.Validate: the YAML, the bcrypt hashes, the
// certificates and keys). The error names the file and never quotes a
// value from it: a TLS key can be inline.
func ValidateWebConfig(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("invalid web configuration file %s: %w", path, errors.Unwrap(err))
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("invalid web configuration file %s: not a regular file", path)
	}
	if err := web.Validate(path); err != nil {
		// yaml lists its errors on indented lines: keep them on one.
		msg := strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n")
		lines := strings.Split(msg, "\n")
		for i, l := range lines {
			lines[i] = redactTypeError(strings.TrimSpace(l))
		}
		return fmt.Errorf("invalid web configuration file %s: %s", path, strings.Join(lines, "; "))
	}
	return nil
}
