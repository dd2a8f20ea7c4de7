package notifiertest

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Mail is one message an SMTP stand-in accepted.
type Mail struct {
	From    string
	To      []string
	Data    []byte // the message as sent, headers and body
	TLS     bool   // sent after STARTTLS
	User    string // the AUTH PLAIN user
	Subject string
	HTML    string    // the text/html part, decoded
	Text    string    // the text/plain part, decoded
	At      time.Time // when the server accepted it
}

// SMTP is a mail server on loopback that records what it accepts. It
// speaks SMTP as a submission server does: EHLO, STARTTLS with a
// certificate for 127.0.0.1 (CAFile), AUTH PLAIN (only after STARTTLS),
// MAIL, RCPT, DATA, RSET, NOOP, QUIT. Replies queued with Script answer
// the next MAIL commands (e.g. 421 or 451, which a sender retries).
type SMTP struct {
	ln     net.Listener
	tls    *tls.Config
	caFile string
	user   string
	pass   string

	mu       sync.Mutex
	mails    []Mail
	script   []string
	refuse   string
	attempts int
	changed  chan struct{}
	wg       sync.WaitGroup
}

// NewSMTP starts a server that requires AUTH PLAIN as user and pass (no
// AUTH when user is empty) and stops at the end of the test.
func NewSMTP(t testing.TB, user, pass string) *SMTP {
	t.Helper()
	cert, caPEM, err := loopbackCert()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &SMTP{ln: ln, user: user, pass: pass, changed: make(chan struct{}),
		tls:    &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		caFile: filepath.Join(t.TempDir(), "smtp-ca.pem")}
	if err := os.WriteFile(s.caFile, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

// Addr is host:port, for email_configs' smarthost.
func (s *SMTP) Addr() string { return s.ln.Addr().String() }

// CAFile is the PEM file of the certificate the server presents, for
// email_configs' tls_config.ca_file.
func (s *SMTP) CAFile() string { return s.caFile }

// Script queues replies ("451 4.3.0 Try again later") for the next MAIL
// commands.
func (s *SMTP) Script(replies ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// Refuse answers every MAIL command with reply (a 4xx one, say) until
// Refuse("") is called: a server down for a while, where Script fails a
// number of attempts.
func (s *SMTP) Refuse(reply string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = reply
}

// Attempts is the number of MAIL commands received.
func (s *SMTP) Attempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attempts
}

// Mails returns the messages accepted so far.
func (s *SMTP) Mails() []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.mails)
}

// Wait waits until cond holds, failing the test after timeout.
func (s *SMTP) Wait(t testing.TB, timeout time.Duration, cond func(*SMTP) bool) {
	t.Helper()
	waitFor(t, timeout, "smtp", &s.mu, &s.changed, func() bool { return cond(s) })
}

func (s *SMTP) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(time.Minute))
			s.session(c)
		}()
	}
}

func (s *SMTP) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *SMTP) session(conn net.Conn) {
	tp := textproto.NewConn(conn)
	reply := func(format string, args ...any) bool { return tp.PrintfLine(format, args...) == nil }
	var (
		secure, authed bool
		m              Mail
	)
	reply("220 127.0.0.1 ESMTP paged stand-in")
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO", "HELO":
			lines := []string{"127.0.0.1 greets " + arg, "8BITMIME", "PIPELINING"}
			if !secure {
				lines = append(lines, "STARTTLS")
			} else if s.user != "" {
				lines = append(lines, "AUTH PLAIN")
			}
			for i, l := range lines {
				sep := "-"
				if i == len(lines)-1 {
					sep = " "
				}
				reply("250%s%s", sep, l)
			}
		case "STARTTLS":
			if secure {
				reply("503 5.5.1 TLS already active")
				continue
			}
			reply("220 2.0.0 Ready to start TLS")
			tc := tls.Server(conn, s.tls)
			if tc.Handshake() != nil {
				return
			}
			conn, secure, authed, m = tc, true, false, Mail{}
			tp = textproto.NewConn(tc)
		case "AUTH":
			mech, initial, _ := strings.Cut(arg, " ")
			switch {
			case !secure:
				reply("538 5.7.11 Encryption required for requested authentication mechanism")
				continue
			case !strings.EqualFold(mech, "PLAIN"):
				reply("504 5.5.4 Unrecognized authentication type")
				continue
			}
			if initial == "" {
				reply("334 ")
				if initial, err = tp.ReadLine(); err != nil {
					return
				}
			}
			raw, _ := base64.StdEncoding.DecodeString(initial)
			parts := strings.Split(string(raw), "\x00")
			if len(parts) != 3 || parts[1] != s.user || parts[2] != s.pass {
				reply("535 5.7.8 Authentication credentials invalid")
				continue
			}
			authed, m.User = true, parts[1]
			reply("235 2.7.0 Authentication successful")
		case "MAIL":
			s.mu.Lock()
			s.attempts++
			var scripted string
			if len(s.script) > 0 {
				scripted, s.script = s.script[0], s.script[1:]
			} else if s.refuse != "" {
				scripted = s.refuse
			}
			s.notify()
			s.mu.Unlock()
			switch {
			case scripted != "":
				reply("%s", scripted)
			case s.user != "" && !authed:
				reply("530 5.7.0 Authentication required")
			default:
				m.From, m.To = addrArg(arg), nil
				reply("250 2.1.0 Ok")
			}
		case "RCPT":
			if m.From == "" {
				reply("503 5.5.1 Need MAIL command")
				continue
			}
			m.To = append(m.To, addrArg(arg))
			reply("250 2.1.5 Ok")
		case "DATA":
			if len(m.To) == 0 {
				reply("503 5.5.1 Need RCPT command")
				continue
			}
			reply("354 End data with <CR><LF>.<CR><LF>")
			data, err := io.ReadAll(tp.DotReader())
			if err != nil {
				return
			}
			m.Data, m.TLS, m.At = data, secure, time.Now()
			parseMail(&m)
			s.mu.Lock()
			s.mails = append(s.mails, m)
			s.notify()
			s.mu.Unlock()
			m = Mail{User: m.User}
			reply("250 2.0.0 Ok: queued")
		case "RSET":
			m = Mail{User: m.User}
			reply("250 2.0.0 Ok")
		case "NOOP":
			reply("250 2.0.0 Ok")
		case "QUIT":
			reply("221 2.0.0 Bye")
			return
		default:
			reply("502 5.5.2 Error: command not recognized")
		}
	}
}

func addrArg(arg string) string {
	_, a, _ := strings.Cut(arg, ":")
	a = strings.TrimSpace(a)
	if i := strings.Index(a, ">"); i >= 0 {
		a = a[:i+1]
	}
	return strings.Trim(a, "<>")
}

// parseMail fills the subject and the decoded parts of m.
func parseMail(m *Mail) {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		return
	}
	dec := new(mime.WordDecoder)
	if subj, err := dec.DecodeHeader(msg.Header.Get("Subject")); err == nil {
		m.Subject = subj
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return
	}
	if !strings.HasPrefix(mt, "multipart/") {
		b, _ := io.ReadAll(msg.Body)
		if mt == "text/html" {
			m.HTML = string(b)
		} else {
			m.Text = string(b)
		}
		return
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart() // decodes quoted-printable
		if err != nil {
			return
		}
		b, _ := io.ReadAll(bufio.NewReader(p))
		switch ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type")); ct {
		case "text/html":
			m.HTML = string(b)
		case "text/plain":
			m.Text = string(b)
		}
	}
}

// loopbackCert makes a self-signed certificate for 127.0.0.1 and
// localhost, and its PEM.
func loopbackCert() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "paged SMTP stand-in"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}
