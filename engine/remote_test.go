package engine_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/config"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/internal/testbin"
)

const (
	secretPassword = "s3cr3t-password"
	secretToken    = "s3cr3t-bearer-token"
)

// fakeAPI answers /api/v1/query with the given status and body, and
// records the request.
func fakeAPI(t *testing.T, status int, body string) (*httptest.Server, *atomic.Pointer[http.Request]) {
	var last atomic.Pointer[http.Request]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		last.Store(r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &last
}

func TestRemoteVectorAndScalar(t *testing.T) {
	srv, last := fakeAPI(t, 200, `{"status":"success","data":{"resultType":"vector","result":[
		{"metric":{"__name__":"up","job":"vllm","instance":"a:8000"},"value":[1700000000.5,"1"]},
		{"metric":{"job":"vllm","instance":"b:8000"},"value":[1700000000.5,"0.25"]}]}}`)
	r, err := engine.NewRemote(engine.RemoteOptions{URL: srv.URL, Timeout: 7 * time.Second,
		HTTPConfig: config.HTTPClientConfig{BasicAuth: &config.BasicAuth{Username: "paged", Password: secretPassword}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(1700000000, 500_000_000)
	v, err := r.Query(context.Background(), `up{job="vllm"}`, ts)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 2 || v[0].F != 1 || v[1].F != 0.25 || v[0].T != ts.UnixMilli() {
		t.Fatalf("vector = %v", v)
	}
	if want := labels.FromStrings("__name__", "up", "instance", "a:8000", "job", "vllm"); !labels.Equal(v[0].Metric, want) {
		t.Errorf("labels = %s", v[0].Metric)
	}
	req := last.Load()
	if got := req.Form.Get("query"); got != `up{job="vllm"}` {
		t.Errorf("query = %q", got)
	}
	if got := req.Form.Get("time"); got != "1700000000.5" {
		t.Errorf("time = %q", got)
	}
	if got := req.Form.Get("timeout"); got != "7s" {
		t.Errorf("timeout = %q", got)
	}
	if got := req.Header.Get("Authorization"); got != "Basic "+base64.StdEncoding.EncodeToString([]byte("paged:"+secretPassword)) {
		t.Errorf("basic auth header = %q", got)
	}

	srv2, _ := fakeAPI(t, 200, `{"status":"success","data":{"resultType":"scalar","result":[1700000000,"3"]}}`)
	r2, _ := engine.NewRemote(engine.RemoteOptions{URL: srv2.URL})
	v, err = r2.Query(context.Background(), "3", ts)
	if err != nil || len(v) != 1 || v[0].F != 3 || !v[0].Metric.IsEmpty() {
		t.Fatalf("scalar: %v %v", v, err)
	}
}

func TestRemoteErrorsAreClassifiedAndLeakNoSecret(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		kind   engine.ErrorKind
		want   string
	}{
		{"bad data", 400, `{"status":"error","errorType":"bad_data","error":"parse error: unexpected end"}`, engine.KindQuery, "parse error"},
		{"execution", 422, `{"status":"error","errorType":"execution","error":"many-to-many matching not allowed"}`, engine.KindQuery, "many-to-many"},
		{"unavailable", 503, `Service Unavailable ` + secretToken, engine.KindUnavailable, "server error: 503"},
		{"unauthorized", 401, `unauthorized`, engine.KindUnavailable, "client error: 401"},
		{"matrix", 200, `{"status":"success","data":{"resultType":"matrix","result":[]}}`, engine.KindQuery, "not a vector"},
		{"garbage", 200, `{"status":"succ`, engine.KindUnavailable, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, _ := fakeAPI(t, c.status, c.body)
			u := strings.Replace(srv.URL, "http://", "http://paged:"+secretPassword+"@", 1)
			r, err := engine.NewRemote(engine.RemoteOptions{URL: u, HTTPConfig: config.HTTPClientConfig{
				Authorization: &config.Authorization{Type: "Bearer", Credentials: secretToken}}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Query(context.Background(), "up", time.Now())
			var de *engine.DatasourceError
			if !errors.As(err, &de) {
				t.Fatalf("want a DatasourceError, got %v", err)
			}
			if de.Kind != c.kind {
				t.Errorf("kind = %v, want %v (%v)", de.Kind, c.kind, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q lacks %q", err, c.want)
			}
			for _, s := range []string{secretPassword, secretToken} {
				if strings.Contains(err.Error(), s) || strings.Contains(r.String(), s) {
					t.Errorf("secret leaked: %q / %q", err, r.String())
				}
			}
		})
	}
}

func TestRemoteBadOptions(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "http://", "http://a b:" + secretPassword + "@x/%zz"} {
		_, err := engine.NewRemote(engine.RemoteOptions{URL: u})
		if err == nil {
			t.Errorf("NewRemote(%q) accepted", u)
			continue
		}
		if strings.Contains(err.Error(), secretPassword) {
			t.Errorf("error leaks the password: %v", err)
		}
	}
}

// TestUnreachableDatasourceAtStart: the engine starts, is not ready, and
// says why; nothing panics; rules still evaluate (and fail) on schedule.
func TestUnreachableDatasourceAtStart(t *testing.T) {
	addr := testbin.FreeAddr(t) // nothing listens there
	r, err := engine.NewRemote(engine.RemoteOptions{URL: "http://paged:" + secretPassword + "@" + addr, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := writeFile(t, dir, "queue.rules.yaml", queueRules)
	e := start(t, engine.Options{Datasource: r, StoragePath: t.TempDir(), ProbeInterval: 100 * time.Millisecond}, []string{file}, settings())
	defer e.stop()
	deadline := time.Now().Add(10 * time.Second)
	var why string
	for time.Now().Before(deadline) {
		var ok bool
		ok, why = e.Ready()
		if ok {
			t.Fatal("ready with an unreachable datasource")
		}
		if strings.Contains(why, "connection refused") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(why, "connection refused") || !strings.Contains(why, addr) || !strings.Contains(why, "has not answered") {
		t.Fatalf("reason = %q", why)
	}
	if strings.Contains(why, secretPassword) {
		t.Fatalf("reason leaks the password: %q", why)
	}
}

func TestNotReadyBeforeRules(t *testing.T) {
	e, err := engine.New(engine.Options{Datasource: engine.DatasourceFunc(nil), StoragePath: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if ok, why := e.Ready(); ok || why != "rules are not loaded yet" {
		t.Fatalf("Ready = %v %q", ok, why)
	}
}

func TestNewValidates(t *testing.T) {
	_, err := engine.New(engine.Options{ResendDelay: -1})
	if err == nil {
		t.Fatal("New accepted empty options")
	}
	for _, want := range []string{"datasource is required", "storage path is required", "resend delay must not be negative"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
