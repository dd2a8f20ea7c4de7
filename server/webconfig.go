package server

import (
	"net"
	"net/http"
	"os"

	"github.com/prometheus/exporter-toolkit/web"
	yamlv2 "go.yaml.in/yaml/v2"
)

// serveHTTP serves srv on ln through exporter-toolkit, exactly as
// Prometheus and Alertmanager serve their --web.config.file: TLS, basic
// auth and response headers come from the web configuration file, which
// the toolkit reads again for every request (users, headers) and every
// TLS handshake (certificates), so rotating a certificate or a password
// needs no reload. Without a file it serves plain HTTP.
func (s *Server) serveHTTP(srv *http.Server, ln net.Listener) error {
	file := s.webConfig
	addrs := []string{ln.Addr().String()}
	systemd := false
	flags := &web.FlagConfig{WebListenAddresses: &addrs, WebSystemdSocket: &systemd, WebConfigFile: &file}
	return web.Serve(ln, srv, flags, s.logger.With("component", "web"))
}

// useWebConfig makes path (--web.config.file) the web configuration of
// cfg, over web.config_file.
func (c *Config) useWebConfig(path string) {
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

// webFile is the part of a web configuration file paged itself reads; the
// toolkit reads the rest.
type webFile struct {
	TLS   web.TLSConfig     `yaml:"tls_server_config"`
	Users map[string]string `yaml:"basic_auth_users"`
}

func readWebFile(path string) (webFile, bool) {
	var f webFile
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
	f, ok := readWebFile(path)
	return ok && f.TLS.IsEnabled()
}

// passedBasicAuth reports whether exporter-toolkit has authenticated r
// with basic auth: r carries basic credentials and the web configuration
// has basic_auth_users, so the toolkit checked them before r got here (it
// refuses any request without a valid user). The file is read per request,
// as the toolkit reads it, so removing the users turns this off at once.
// (Users added to the file between the toolkit's read and this one would
// let that one request through unchecked: the window is the time between
// two reads of the same small file, while an operator edits it.)
func (s *Server) passedBasicAuth(r *http.Request) bool {
	if s.webConfig == "" {
		return false
	}
	if _, _, ok := r.BasicAuth(); !ok {
		return false
	}
	f, ok := readWebFile(s.webConfig)
	return ok && len(f.Users) > 0
}
