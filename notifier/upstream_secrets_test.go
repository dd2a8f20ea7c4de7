package notifier

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
)

type failingTransport struct{}

func (failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("connection reset by stand-in")
}

// Every Alertmanager integration fails with its URL in the error (the
// request is cut): no secret of any type reaches the errors or the logs,
// although a Telegram token or a Teams webhook is part of the URL.
func TestUpstreamSecretsNeverLeak(t *testing.T) {
	text, err := os.ReadFile("testdata/receivers/every_type.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// A refused SMTP connection instead of a DNS lookup.
	conf := mustConfig(t, strings.Replace(string(text), "mail.example.org:587", "127.0.0.1:1", 1))
	var logs syncBuffer
	var outputs []string
	for _, r := range conf.Receivers {
		res, err := SendTest(context.Background(), Options{
			Config: conf, Transport: failingTransport{}, ExternalURL: "http://paged.example:9095",
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		}, r.Name)
		if err != nil {
			t.Fatalf("%s: %v", r.Name, err)
		}
		if len(res) != 1 || res[0].Err == nil {
			t.Fatalf("%s: %+v, want one failure", r.Name, res)
		}
		outputs = append(outputs, res[0].Integration+": "+res[0].Err.Error())
	}
	all := strings.Join(outputs, "\n") + "\n" + logs.String()
	t.Log(strings.Join(outputs, "\n"))
	for _, want := range []string{"telegram[0]: ", "msteamsv2[0]: ", "email[0]: ", "connection refused"} {
		if !strings.Contains(all, want) {
			t.Errorf("the failures did not happen as planned: no %q in\n%s", want, all)
		}
	}
	for i := strings.Index(all, "s3cr3t"); i >= 0; i = -1 {
		t.Errorf("a secret leaked: ...%s...\n\nall:\n%s", all[max(0, i-200):min(len(all), i+50)], all)
	}
}
