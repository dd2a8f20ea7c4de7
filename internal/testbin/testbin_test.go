package testbin

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestStartPrometheus(t *testing.T) {
	p := StartPrometheus(t, "global:\n  scrape_interval: 1s\n")
	resp, err := http.Get(p.URL + "/api/v1/status/buildinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"version"`) {
		t.Fatalf("unexpected buildinfo: %s", b)
	}
}

func TestStartAlertmanager(t *testing.T) {
	p := StartAlertmanager(t, "route:\n  receiver: blackhole\nreceivers:\n  - name: blackhole\n")
	resp, err := http.Get(p.URL + "/api/v2/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"versionInfo"`) {
		t.Fatalf("unexpected status: %s", b)
	}
}

func TestSharedDir(t *testing.T) {
	d := SharedDir(t)
	if !strings.HasSuffix(strings.TrimRight(d, "/"), "shared") {
		t.Fatalf("shared dir %q", d)
	}
}
