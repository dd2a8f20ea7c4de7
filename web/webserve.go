package web

import (
	"net"
	"net/http"

	"github.com/prometheus/exporter-toolkit/web"

	"github.com/pagedhq/paged/config"
)

// Serve serves srv on ln through exporter-toolkit, exactly as
// Prometheus and Alertmanager serve their --web.config.file: TLS, basic
// auth and response headers come from the web configuration file, which
// the toolkit reads again for every request (users, headers) and every
// TLS handshake (certificates), so rotating a certificate or a password
// needs no reload. Without a file it serves plain HTTP.
func (h *Handler) Serve(srv *http.Server, ln net.Listener) error {
	file := h.webConfig
	addrs := []string{ln.Addr().String()}
	systemd := false
	flags := &web.FlagConfig{WebListenAddresses: &addrs, WebSystemdSocket: &systemd, WebConfigFile: &file}
	return web.Serve(ln, srv, flags, h.logger.With("component", "web"))
}

// passedBasicAuth reports whether exporter-toolkit has authenticated r
// with basic auth: r carries basic credentials and the web configuration
// has basic_auth_users, so the toolkit checked them before r got here (it
// refuses any request without a valid user). The file is read per request,
// as the toolkit reads it, so removing the users turns this off at once.
// (Users added to the file between the toolkit's read and this one would
// let that one request through unchecked: the window is the time between
// two reads of the same small file, while an operator edits it.)
func (h *Handler) passedBasicAuth(r *http.Request) bool {
	if h.webConfig == "" {
		return false
	}
	if _, _, ok := r.BasicAuth(); !ok {
		return false
	}
	f, ok := config.ReadWebFile(h.webConfig)
	return ok && len(f.Users) > 0
}
