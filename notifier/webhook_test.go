package notifier

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

// verifySignature is an independent check of X-Paged-Signature, written
// from the documented format only: t=<unix>,v1=<hex HMAC-SHA256(secret, "<unix>." + body)>.
func verifySignature(header, secret string, body []byte) bool {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	if ts == "" || sig == "" {
		return false
	}
	want, err := hex.DecodeString(sig)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "." + string(body)))
	return hmac.Equal(mac.Sum(nil), want)
}

func TestWebhookHMACAndHeaders(t *testing.T) {
	sink := notifiertest.NewSink(t)
	conf := fmt.Sprintf(tinyRoute, "hook") + fmt.Sprintf(`
receivers:
  - name: hook
    webhook_configs:
      - url: %s/hook
        hmac_secret: s3cr3t-hmac
        headers: {X-Team: llm-platform}
`, sink.URL())
	n := start(t, conf, Options{})
	before := time.Now().Unix()
	n.Notify(context.Background(), []*rules.Alert{firing("KVCacheSaturated")})
	req := sink.Wait(t, 1, 10*time.Second)[0]

	h := req.Header.Get("X-Paged-Signature")
	if !verifySignature(h, "s3cr3t-hmac", req.Body) {
		t.Fatalf("signature %q does not verify", h)
	}
	if verifySignature(h, "wrong-secret", req.Body) {
		t.Fatal("signature verifies with a wrong secret")
	}
	tampered := append([]byte(nil), req.Body...)
	tampered[len(tampered)/2] ^= 1
	if verifySignature(h, "s3cr3t-hmac", tampered) {
		t.Fatal("signature verifies a tampered body")
	}
	var ts int64
	if _, err := fmt.Sscanf(h, "t=%d,", &ts); err != nil || ts < before || ts > time.Now().Unix() {
		t.Errorf("timestamp %d not within the send (%v)", ts, err)
	}
	if got := req.Header.Get("X-Team"); got != "llm-platform" {
		t.Errorf("custom header = %q", got)
	}
	if got := req.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("content type = %q", got)
	}
}

func TestWebhookMaxAlertsAndRetry(t *testing.T) {
	sink := notifiertest.NewSink(t)
	sink.Script(500, 429)
	conf := fmt.Sprintf(tinyRoute, "hook") + fmt.Sprintf(`
receivers:
  - name: hook
    webhook_configs:
      - url: %s/hook
        max_alerts: 2
`, sink.URL())
	n := start(t, conf, Options{})
	n.Notify(context.Background(), []*rules.Alert{
		firing("GPUHot", "gpu", "0"), firing("GPUHot", "gpu", "1"), firing("GPUHot", "gpu", "2"),
	})
	reqs := sink.Wait(t, 3, 20*time.Second)
	var msg struct {
		Version         string            `json:"version"`
		TruncatedAlerts int               `json:"truncatedAlerts"`
		Alerts          []json.RawMessage `json:"alerts"`
	}
	if err := json.Unmarshal(reqs[2].Body, &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Version != "4" || msg.TruncatedAlerts != 1 || len(msg.Alerts) != 2 {
		t.Errorf("payload version=%q truncated=%d alerts=%d, want 4/1/2", msg.Version, msg.TruncatedAlerts, len(msg.Alerts))
	}
	if string(reqs[0].Body) != string(reqs[2].Body) {
		t.Error("the retry sent a different payload")
	}
}

func TestSignKnownVector(t *testing.T) {
	// HMAC-SHA256("key", "1700000000.{}"), computed with openssl:
	// printf '1700000000.{}' | openssl dgst -sha256 -hmac key
	got := Sign([]byte("key"), time.Unix(1700000000, 0), []byte("{}"))
	want := "t=1700000000,v1=9d713ed406bb7076d4123f0dc2c39d2df5c654ed4b0cd56b52c8b4c940bd63ae"
	if got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}
