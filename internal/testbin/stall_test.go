package testbin

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"
)

// A wave of stalled bodies against a server with a read timeout: every
// connection is answered and closed after it; against a listener that
// accepts and never answers, every one is still open when the wave's wait
// ends. RSS reads this process's own.
func TestStall(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			w.WriteHeader(http.StatusRequestTimeout)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Config.ReadTimeout = 300 * time.Millisecond
	srv.Start()
	defer srv.Close()
	head := "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
	o, err := Stall{Addr: srv.Listener.Addr().String(), Head: head, Declared: 1 << 20, Payload: "abc", N: 5, Wait: 10 * time.Second}.Run(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if o.Open != 0 || o.Statuses["408"] != 5 || o.LastClose <= 0 || o.PeakRSS <= 0 {
		t.Errorf("against a 300ms read timeout: %+v, want 5 answered 408 and closed, a peak RSS", o)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	o, err = Stall{Addr: ln.Addr().String(), Head: head, Declared: 1 << 20, Payload: "abc", N: 3, Wait: 300 * time.Millisecond}.Run(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if o.Open != 3 || o.Statuses["none"] != 3 {
		t.Errorf("against a server that holds every connection: %+v, want 3 open and unanswered", o)
	}
	if _, err := RSS(1 << 30); err == nil {
		t.Error("RSS of a pid that does not exist: no error")
	}
}
