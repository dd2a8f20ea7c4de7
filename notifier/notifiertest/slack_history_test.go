package notifiertest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// historyPage is an answer of conversations.history.
type historyPage struct {
	OK       bool   `json:"ok"`
	Error    string `json:"error"`
	HasMore  bool   `json:"has_more"`
	Messages []struct {
		TS   string `json:"ts"`
		Text string `json:"text"`
	} `json:"messages"`
	Meta struct {
		NextCursor string `json:"next_cursor"`
	} `json:"response_metadata"`
}

func call(t *testing.T, s *Slack, method string, form url.Values) (*http.Response, historyPage) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.APIURL()+method, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := InProcess(s).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p historyPage
	_ = json.NewDecoder(resp.Body).Decode(&p)
	return resp, p
}

// conversations.history pages as Slack does: newest first, limit a page,
// has_more and next_cursor while there are more, the cursor taking the
// same arguments; a cursor it did not give is invalid_cursor.
func TestHistoryPages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewSlackHandler("")
		var all []string
		for range 5 {
			all = append(all, s.PostOther("C1", "m"))
			time.Sleep(time.Millisecond)
		}
		s.PostOther("C2", "elsewhere")
		form := url.Values{"channel": {"C1"}, "limit": {"2"}, "oldest": {all[0]}, "inclusive": {"1"}}
		var got []string
		for page := 0; ; page++ {
			_, p := call(t, s, "conversations.history", form)
			if !p.OK || page > 3 {
				t.Fatalf("page %d: %+v", page, p)
			}
			for _, m := range p.Messages {
				got = append(got, m.TS)
			}
			if p.HasMore != (p.Meta.NextCursor != "") {
				t.Fatalf("page %d: has_more %v, next_cursor %q", page, p.HasMore, p.Meta.NextCursor)
			}
			if !p.HasMore {
				break
			}
			form.Set("cursor", p.Meta.NextCursor)
		}
		want := []string{all[4], all[3], all[2], all[1], all[0]}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("pages gave %v, want %v", got, want)
		}
		form.Set("cursor", "bm9wZQ==")
		if _, p := call(t, s, "conversations.history", form); p.OK || p.Error != "invalid_cursor" {
			t.Errorf("unknown cursor: %+v, want invalid_cursor", p)
		}
	})
}

// SetDelay stores a post at once and answers it later; a reply scripted
// for one method lets the calls of other methods by, and Pass answers as
// usual.
func TestDelayAndMethodScript(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewSlackHandler("")
		s.SetDelay(func(m string) time.Duration {
			if m == "chat.postMessage" {
				return 2 * time.Second
			}
			return 0
		})
		s.Script(
			SlackReply{Method: "conversations.history", Pass: true},
			SlackReply{Method: "conversations.history", Status: http.StatusTooManyRequests, RetryAfter: 7},
		)
		start := time.Now()
		done := make(chan struct{})
		go func() {
			call(t, s, "chat.postMessage", url.Values{"channel": {"C1"}, "text": {"hi"}})
			close(done)
		}()
		synctest.Wait()
		if c := s.Calls(); len(c) != 1 || c[0].TS == "" {
			t.Fatalf("calls before the answer: %+v, want the post recorded", c)
		}
		if _, ok := s.Message("C1", s.Calls()[0].TS); !ok {
			t.Error("the post is not stored before its answer")
		}
		<-done
		if took := time.Since(start); took != 2*time.Second {
			t.Errorf("answered after %v, want 2s", took)
		}
		if _, p := call(t, s, "conversations.history", url.Values{"channel": {"C1"}}); !p.OK || len(p.Messages) != 1 {
			t.Errorf("first history call: %+v, want it answered as usual", p)
		}
		resp, _ := call(t, s, "conversations.history", url.Values{"channel": {"C1"}})
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "7" {
			t.Errorf("second history call: %s, Retry-After %q; want 429, 7", resp.Status, resp.Header.Get("Retry-After"))
		}
	})
}
