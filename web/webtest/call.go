package webtest

import (
	"io"
	"net/http"
	"testing"
)

// Call sends one request with c (http.DefaultClient when nil) and returns
// the status and body. A body without a Content-Type header is sent as
// application/json.
func Call(t testing.TB, c *http.Client, method, url string, body io.Reader, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if req.Header.Get("Content-Type") == "" && body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
