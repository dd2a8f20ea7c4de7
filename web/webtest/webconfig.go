package webtest

import (
	"net/http"
	"testing"

	"github.com/pagedhq/paged/internal/testbin"
)

// TLSWebConfig is a web configuration file serving the certificate that
// WebFiles writes.
const TLSWebConfig = "tls_server_config:\n  cert_file: tls/cert.pem\n  key_file: tls/key.pem\n"

// WebFiles are the files of a server with a web configuration: the rule
// file rules/basic.rules.yaml (BasicRules), a self-signed certificate
// under tls/, webYML as web.yml and a bearer token in token. The client
// trusts the certificate.
func WebFiles(t testing.TB, webYML string) (map[string]string, *http.Client) {
	t.Helper()
	cert := testbin.SelfSignedCert(t)
	return map[string]string{
		"rules/basic.rules.yaml": BasicRules,
		"tls/cert.pem":           string(cert.CertPEM),
		"tls/key.pem":            string(cert.KeyPEM),
		"web.yml":                webYML,
		"token":                  "tok-web-1\n",
	}, cert.Client()
}
