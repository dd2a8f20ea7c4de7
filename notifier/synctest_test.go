package notifier

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pagedhq/paged/notifier/notifiertest"
	"github.com/pagedhq/paged/rules"
)

// TestSlackRetryAfterSynctest drives the whole pipeline on synctest's fake
// clock, with the Slack stand-in served in-process: a 429 with
// Retry-After: 2 is retried no earlier than 2s later, then delivered.
func TestSlackRetryAfterSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := notifiertest.NewSlackHandler(testToken)
		s.Script(notifiertest.SlackReply{Status: 429, RetryAfter: 2})
		conf := mustConfig(t, slackBotConfig(s, ""))
		n, err := New(Options{Config: conf, Transport: notifiertest.InProcess(s), ExternalURL: "http://paged.example:9095"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- n.Run(ctx) }()

		start := time.Now()
		n.Notify(context.Background(), []*rules.Alert{firing("QueueBacklog")})
		time.Sleep(time.Second) // fake time: the group flushed and met the 429
		synctest.Wait()
		if calls := s.Calls(); len(calls) != 1 || calls[0].Status != 429 {
			t.Fatalf("after 1s: %+v, want just the 429", calls)
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		calls := s.Calls()
		if len(calls) != 2 || calls[1].Method != "chat.postMessage" || calls[1].TS == "" {
			t.Fatalf("calls = %+v, want the 429 then a delivered post", calls)
		}
		if gap := calls[1].At.Sub(calls[0].At); gap < 2*time.Second {
			t.Errorf("retried %v after the 429, want >= 2s", gap)
		}
		if first := calls[0].At.Sub(start); first < 20*time.Millisecond {
			t.Errorf("first attempt %v after the alert, before group_wait (20ms)", first)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
