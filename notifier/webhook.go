package notifier

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/notify"
	"github.com/prometheus/alertmanager/template"
	commoncfg "github.com/prometheus/common/config"
)

// signatureHeader carries the HMAC-SHA256 signature of a webhook body:
// "t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<unix>." + body)>".
const signatureHeader = "X-Paged-Signature"

// Sign returns the X-Paged-Signature value for body at time t.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// webhookNotifier posts Alertmanager's version 4 payload.
type webhookNotifier struct {
	conf    *WebhookConfig
	tmpl    *template.Template
	client  *http.Client
	logger  *slog.Logger
	retrier notify.Retrier
	now     func() time.Time
	// sem bounds the requests in flight to this receiver.
	sem chan struct{}
}

func newWebhook(c *WebhookConfig, tmpl *template.Template, rt http.RoundTripper, logger *slog.Logger) (*webhookNotifier, error) {
	client, err := httpClient(c.HTTPConfig, "webhook", rt)
	if err != nil {
		return nil, err
	}
	return &webhookNotifier{
		conf: c, tmpl: tmpl, client: client, logger: logger, now: time.Now,
		sem: make(chan struct{}, cmp.Or(c.MaxConcurrentRequests, DefaultWebhookMaxConcurrent)),
		// 429 is retried too, honouring Retry-After (Alertmanager does not).
		retrier: notify.Retrier{RetryCodes: []int{http.StatusTooManyRequests}},
	}, nil
}

// httpClient builds the client of an integration; rt, when set, replaces
// the network (Options.Transport).
func httpClient(c *commoncfg.HTTPClientConfig, name string, rt http.RoundTripper) (*http.Client, error) {
	if rt != nil {
		return &http.Client{Transport: rt}, nil
	}
	hc := commoncfg.DefaultHTTPClientConfig
	if c != nil {
		hc = *c
	}
	client, err := commoncfg.NewClientFromConfig(hc, name)
	if err != nil {
		return nil, fmt.Errorf("http_config: %w", err)
	}
	return client, nil
}

// SendResolved implements notify.ResolvedSender.
func (w *webhookNotifier) SendResolved() bool { return boolOr(w.conf.SendResolved, true) }

// Notify implements notify.Notifier.
func (w *webhookNotifier) Notify(ctx context.Context, alerts ...*alert.Alert) notify.NotifyVerdict {
	truncated := uint64(0)
	if m := w.conf.MaxAlerts; m > 0 && uint64(len(alerts)) > m {
		truncated = uint64(len(alerts)) - m
		alerts = alerts[:m]
	}
	key, err := notify.ExtractGroupKey(ctx)
	if err != nil {
		return notify.Unrecoverable(err, notify.MissingContextReason)
	}
	body, err := webhookBody(ctx, nil, w.tmpl, alerts, string(key), truncated, w.logger)
	if err != nil {
		return notify.Unrecoverable(err, notify.EncodingErrorReason)
	}
	return w.post(ctx, body)
}

// post sends body to the webhook: signed when it has an HMAC secret,
// with its headers, within its timeout and its bound on requests in
// flight.
func (w *webhookNotifier) post(ctx context.Context, body []byte) notify.NotifyVerdict {
	u, err := secretOrFile(string(w.conf.URL), w.conf.URLFile)
	if err != nil {
		return notify.Unrecoverable(fmt.Errorf("url_file: %w", err), notify.FileReadErrorReason)
	}
	secret, err := secretOrFile(string(w.conf.HMACSecret), w.conf.HMACSecretFile)
	if err != nil {
		return notify.Unrecoverable(fmt.Errorf("hmac_secret_file: %w", err), notify.FileReadErrorReason)
	}
	// The wait for a free slot counts against the flush's deadline, not
	// the request's timeout.
	select {
	case w.sem <- struct{}{}:
	case <-ctx.Done():
		return notify.Retry(0, fmt.Errorf("webhook: %d requests in flight, none finished: %w", cap(w.sem), ctx.Err()), notify.RequestErrorReason)
	}
	defer func() { <-w.sem }()
	timeout := time.Duration(w.conf.Timeout)
	if timeout <= 0 {
		timeout = DefaultWebhookTimeout
	}
	// The flush's own deadline is usually the nearer one; a context of
	// the request's own is only needed when the timeout ends first.
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > timeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return notify.Unrecoverable(errors.New("webhook: invalid url"), notify.ConfigErrorReason)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "paged")
	for k, v := range w.conf.Headers {
		req.Header.Set(k, v)
	}
	if secret != "" {
		req.Header.Set(signatureHeader, Sign([]byte(secret), w.now(), body))
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return notify.Retry(0, fmt.Errorf("webhook: %w", notify.RedactURL(err)), notify.RequestErrorReason)
	}
	defer notify.Drain(resp)
	retry, err := w.retrier.Check(resp.StatusCode, resp.Body)
	if err != nil {
		reason := notify.GetFailureReasonFromStatusCode(resp.StatusCode)
		if retry {
			return notify.Retry(notify.ParseRetryAfter(resp.Header, time.Now()), err, reason)
		}
		return notify.Unrecoverable(err, reason)
	}
	return notify.Success()
}

// secretOrFile returns the inline value, or the trimmed content of file.
func secretOrFile(inline, file string) (string, error) {
	if inline != "" || file == "" {
		return inline, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		// The path is configuration, not a secret; the content never shows.
		return "", fmt.Errorf("read %s: %w", file, errors.Unwrap(err))
	}
	return strings.TrimSpace(string(b)), nil
}
