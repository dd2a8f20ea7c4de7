package notifier

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"sync"
	"time"

	commoncfg "github.com/prometheus/common/config"
)

// transportOptions make the HTTP clients that Alertmanager's integrations
// build from their http_config carry every request through rt
// (Options.Transport, used by RenderPayloads and tests), as paged's own
// integrations do. Each connection is an in-memory pipe; one goroutine,
// owned by the connection, reads the request, answers it through rt and
// closes the pipe. HTTPS is spoken over the pipe with a throwaway
// certificate the client is told to accept.
func transportOptions(rt http.RoundTripper) []commoncfg.HTTPClientOption {
	return []commoncfg.HTTPClientOption{
		commoncfg.WithKeepAlivesDisabled(),
		commoncfg.WithHTTP2Disabled(),
		commoncfg.WithDialContextFunc(func(context.Context, string, string) (net.Conn, error) {
			client, server := net.Pipe()
			go servePipe(server, rt)
			return client, nil
		}),
		commoncfg.WithNewTLSConfigFunc(func(context.Context, *commoncfg.TLSConfig, ...commoncfg.TLSConfigOption) (*tls.Config, error) {
			return &tls.Config{InsecureSkipVerify: true}, nil //nolint:gosec // an in-memory pipe to rt
		}),
	}
}

type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c bufConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func servePipe(conn net.Conn, rt http.RoundTripper) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	var c net.Conn = bufConn{conn, br}
	scheme := "http"
	if first[0] == 0x16 { // a TLS handshake record
		cert, err := pipeCert()
		if err != nil {
			return
		}
		tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{cert}})
		c, br, scheme = tc, bufio.NewReader(tc), "https"
	}
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	req.URL.Scheme, req.URL.Host, req.RequestURI = scheme, req.Host, ""
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	resp.Close = true
	_ = resp.Write(c)
}

// pipeCert is a self-signed certificate for the pipes' HTTPS.
var pipeCert = sync.OnceValues(func() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "paged transport"},
		NotBefore:    time.Unix(0, 0),
		NotAfter:     time.Unix(1<<33, 0),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
})
