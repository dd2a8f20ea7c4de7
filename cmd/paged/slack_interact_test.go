package main

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/internal/testbin"
	"github.com/pagedhq/paged/notifier"
	"github.com/pagedhq/paged/notifier/notifiertest"
)

// The Done-when of issue 34 against real `paged run` processes: the
// buttons of a group's Slack message, pressed in Socket Mode (the
// stand-in's apps.connections.open and WebSocket) and in HTTP mode
// (signed requests to paged's listener), with Debian's Prometheus as the
// datasource.

var interactModes = []string{notifier.InteractSocket, notifier.InteractHTTP}

// TestSlackInteractActions presses paged.ack, paged.silence.1h,
// paged.unsilence, paged.silence.until_resolved and paged.unack on the
// group's message, each by a named Slack user. After each press the
// message shows who did what, the acknowledgement holds the repeats
// back, and the silence is in /api/v2/silences with the Slack user as
// createdBy, in `amtool silence query`, in /api/v2/alerts/groups (the
// alert suppressed) and on the overview page. Last, the alert resolves:
// the silence until resolved expires (API, amtool --expired) and the
// message says so.
//
// The -kill9 variants kill paged with SIGKILL right after each answer it
// gives Slack (the envelope's acknowledgement, the 200) and restart it on
// the same storage path: the restarted process shows the same, editing
// the message again if the edit was lost with the process.
func TestSlackInteractActions(t *testing.T) {
	for _, mode := range interactModes {
		for _, kill := range []bool{false, true} {
			name := mode
			if kill {
				name += "-kill9"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				testSlackActions(t, mode, kill)
			})
		}
	}
}

func testSlackActions(t *testing.T, mode string, kill bool) {
	r := newInteractRig(t, interactOptions{mode: mode, repeat: "3s"})
	m := r.m[0]
	s := r.message()
	for _, b := range []string{notifier.ActionAck, notifier.ActionSilence1h, notifier.ActionSilence4h, notifier.ActionSilence24h, notifier.ActionSilenceUntilResolved} {
		if !s.has(b) {
			t.Fatalf("the first message has no %s button: %v", b, s)
		}
	}
	act := func(action, user string) {
		t.Helper()
		t.Logf("%s: %s presses %s", time.Now().Format("15:04:05.000"), user, action)
		r.press(m, action, user)
		if kill {
			r.kill9(m)
			r.restart(m)
		}
	}

	// Acknowledge.
	act(notifier.ActionAck, userAna)
	r.waitMessage("ana's acknowledgement", func(s shown) bool {
		return s.says("👀 Acknowledged by <@U0ANA> at ") && s.has(notifier.ActionUnack) && !s.has(notifier.ActionAck)
	})
	r.checkAcked(m, "ana (U0ANA)")
	r.checkRepeatsHeld(m)

	// Silence for an hour.
	act(notifier.ActionSilence1h, userBob)
	s = r.waitMessage("bob's silence", func(s shown) bool {
		return s.says("🔕 Silenced by <@U0BOB> until ") && s.has(notifier.ActionUnsilence) && !s.has(notifier.ActionSilence1h)
	})
	if !s.says("Acknowledged by <@U0ANA>") {
		t.Errorf("the silenced message lost the acknowledgement: %v", s)
	}
	sil := r.checkSilenced(m, "bob (U0BOB)")
	if d := sil.EndsAt.Sub(sil.StartsAt); d < time.Hour-time.Minute || d > time.Hour {
		t.Errorf("the 1h silence lasts %v", d)
	}

	// Lift it.
	act(notifier.ActionUnsilence, userAna)
	r.waitMessage("the silence lifted by ana", func(s shown) bool {
		return s.says("lifted by <@U0ANA>") && s.has(notifier.ActionSilence1h) && !s.has(notifier.ActionUnsilence)
	})
	r.checkNotSilenced(m, sil.ID)

	// Silence until the group resolves.
	act(notifier.ActionSilenceUntilResolved, userAna)
	r.waitMessage("ana's silence until resolved", func(s shown) bool {
		return s.says("🔕 Silenced by <@U0ANA> until the group resolves") && s.has(notifier.ActionUnsilence)
	})
	untilResolved := r.checkSilenced(m, "ana (U0ANA)")
	if !strings.Contains(untilResolved.Comment, "until the group resolves") {
		t.Errorf("the silence until resolved says %q", untilResolved.Comment)
	}

	// Withdraw the acknowledgement.
	act(notifier.ActionUnack, userBob)
	r.waitMessage("the acknowledgement withdrawn by bob", func(s shown) bool {
		return s.says("withdrawn by <@U0BOB>") && s.has(notifier.ActionAck) && !s.has(notifier.ActionUnack)
	})
	r.checkAcked(m, "")

	// The alert resolves: the silence until resolved expires.
	r.kv.set("vllm-0", 0.2)
	r.waitFor(90*time.Second, "the silence until resolved to expire", func() bool {
		return slices.ContainsFunc(r.silences(m, "expired"), func(s apiSilence) bool { return s.ID == untilResolved.ID })
	})
	if active := r.silences(m, "active"); len(active) != 0 {
		t.Errorf("active silences after the group resolved: %v", active)
	}
	if am := r.amtoolSilences(m, false); len(am) != 0 {
		t.Errorf("amtool silence query lists %v after the group resolved", am)
	}
	if am := r.amtoolSilences(m, true); !slices.ContainsFunc(am, func(s apiSilence) bool { return s.ID == untilResolved.ID }) {
		t.Errorf("amtool silence query --expired does not list %s: %v", untilResolved.ID, am)
	}
	// The resolution went through muted; the watcher that expired the
	// silence edits the message.
	s = r.waitMessage("the silence ended with the group", func(s shown) bool {
		return s.says("Silence by <@U0ANA> ended: the group resolved")
	})
	if !strings.Contains(s.blocks, "RESOLVED") || len(s.buttons) != 0 {
		t.Errorf("the resolved message: %v\n%s", s, s.blocks)
	}
	if tl := topLevel(r.slack.Calls()); len(tl) != 1 {
		t.Errorf("%d top-level messages for the group, want 1", len(tl))
	}
}

// checkRepeatsHeld waits until m has held back two more repeat
// notifications of the acknowledged group, and checks that no repeat
// reached Slack meanwhile: no new message or reply, and no notification
// counted for the Slack integration. An edit that only brings the
// message up to date is no notification: a paged killed between its
// answer to Slack and the record that the message shows the press makes
// that edit again once restarted, and its HA peer may make it too.
func (r *interactRig) checkRepeatsHeld(m *member) {
	r.t.Helper()
	// From the first repeat held on: a flush that began before the
	// acknowledgement (flushes of a group run one at a time) is over.
	held := r.metric(m, "paged_slack_repeats_held_total")
	r.waitFor(60*time.Second, m.name+" to hold back a repeat", func() bool { return r.metric(m, "paged_slack_repeats_held_total") > held })
	mark, held := len(r.slack.Calls()), r.metric(m, "paged_slack_repeats_held_total")
	sent := r.slackNotifications(m)
	r.waitFor(60*time.Second, m.name+" to hold back two more repeats", func() bool { return r.metric(m, "paged_slack_repeats_held_total") >= held+2 })
	for _, c := range r.since(mark, "chat.postMessage") {
		r.t.Errorf("the acknowledged group was notified again: %s at %s: %.200s", c.Method, c.At.Format(time.TimeOnly), c.Text)
	}
	if now := r.slackNotifications(m); now != sent {
		r.t.Errorf("%s sent %v Slack notifications of the acknowledged group while it held two repeats back", m.name, now-sent)
	}
}

// slackNotifications is how many notifications m delivered to Slack.
func (r *interactRig) slackNotifications(m *member) float64 {
	r.t.Helper()
	v, err := testbin.MetricSum(m.web, "paged_notifier_notifications_total", "integration", "slack", "outcome", "success")
	if err != nil {
		r.t.Fatalf("%s: %v", m.name, err)
	}
	return v
}

// checkAcked checks that the overview page and /api/v1/acknowledgements
// on m show the group acknowledged by who ("name (id)"), or by nobody.
func (r *interactRig) checkAcked(m *member, who string) {
	r.t.Helper()
	var want []string
	if who != "" {
		want = []string{who}
	}
	var got []string
	for _, by := range r.acknowledgements(m) {
		got = append(got, by)
	}
	if !slices.Equal(got, want) {
		r.t.Errorf("/api/v1/acknowledgements on %s: %q, want %q", m.name, got, want)
	}
	// The page reads the alerts the notifier holds: after a restart,
	// once the engine has sent them again.
	var ui uiView
	r.waitFor(60*time.Second, "the alert on the overview page", func() bool { ui = r.ui(m); return len(ui.states) == 1 })
	switch {
	case who == "" && len(ui.acked) != 0:
		r.t.Errorf("the overview page shows %q, want no acknowledgement", ui.acked)
	case who != "" && (len(ui.acked) != 1 || !strings.HasPrefix(ui.acked[0], "👀 acknowledged by "+who+" at ")):
		r.t.Errorf("the overview page shows %q, want 👀 acknowledged by %s at …", ui.acked, who)
	}
}

// checkSilenced checks that m shows one active silence of the group, by
// the Slack user: in /api/v2/silences, amtool silence query, the alert
// groups and the overview page. It returns the silence.
func (r *interactRig) checkSilenced(m *member, createdBy string) apiSilence {
	r.t.Helper()
	active := r.silences(m, "active")
	if len(active) != 1 {
		r.t.Fatalf("%d active silences on %s, want 1: %v", len(active), m.name, active)
	}
	sil := active[0]
	if sil.CreatedBy != createdBy || !strings.Contains(sil.Comment, "Slack") {
		r.t.Errorf("silence %v, want created by %q with a comment that it came from Slack", sil, createdBy)
	}
	if len(sil.Matchers) != 1 || sil.Matchers[0].Name != "alertname" || sil.Matchers[0].Value != kvAlert || sil.Matchers[0].IsRegex {
		r.t.Errorf("silence matchers %+v, want alertname=%q (the group's labels)", sil.Matchers, kvAlert)
	}
	am := r.amtoolSilences(m, false)
	if len(am) != 1 || am[0].ID != sil.ID || am[0].CreatedBy != createdBy {
		r.t.Errorf("amtool silence query: %v, want %s by %q", am, sil.ID, createdBy)
	}
	r.waitFor(60*time.Second, "the alert suppressed by "+sil.ID+" in /api/v2/alerts/groups", func() bool {
		as := r.groupAlerts(m)
		return len(as) == 1 && as[0].Status.State == "suppressed" && slices.Equal(as[0].Status.SilencedBy, []string{sil.ID})
	})
	ui := r.ui(m)
	if !slices.Equal(ui.states, []string{"silenced"}) {
		r.t.Errorf("the overview shows the alert %v, want silenced", ui.states)
	}
	if len(ui.silences) != 1 || len(ui.silences[0]) != 6 || ui.silences[0][3] != createdBy || ui.silences[0][5] != sil.ID {
		r.t.Errorf("the overview's active silences: %q, want %s created by %q", ui.silences, sil.ID, createdBy)
	}
	return sil
}

// checkNotSilenced checks that m shows silence id expired and the alert
// active: in /api/v2/silences, amtool silence query (--expired), the
// alert groups and the overview page.
func (r *interactRig) checkNotSilenced(m *member, id string) {
	r.t.Helper()
	if active := r.silences(m, "active"); len(active) != 0 {
		r.t.Errorf("active silences after paged.unsilence: %v", active)
	}
	if !slices.ContainsFunc(r.silences(m, "expired"), func(s apiSilence) bool { return s.ID == id }) {
		r.t.Errorf("silence %s is not expired: %v", id, r.silences(m, "expired"))
	}
	if am := r.amtoolSilences(m, false); len(am) != 0 {
		r.t.Errorf("amtool silence query lists %v after paged.unsilence", am)
	}
	if am := r.amtoolSilences(m, true); !slices.ContainsFunc(am, func(s apiSilence) bool { return s.ID == id }) {
		r.t.Errorf("amtool silence query --expired does not list %s: %v", id, am)
	}
	r.waitFor(60*time.Second, "the alert active in /api/v2/alerts/groups", func() bool {
		as := r.groupAlerts(m)
		return len(as) == 1 && as[0].Status.State == "active"
	})
	ui := r.ui(m)
	if !slices.Equal(ui.states, []string{"firing"}) || len(ui.silences) != 0 {
		r.t.Errorf("the overview shows the alert %v and silences %q, want firing and none", ui.states, ui.silences)
	}
}

// TestSlackInteractAckHoldsRepeats: with a repeat_interval of two
// seconds, an acknowledged group gets no repeat notification (the
// stand-in's log: no reply in the thread, no edit) while paged counts
// the repeats it held back; a second replica's alert joining the group
// ends the acknowledgement, the message says so and the notification
// goes out; acknowledged again, the group's resolution ends it and the
// message says that.
func TestSlackInteractAckHoldsRepeats(t *testing.T) {
	for _, mode := range interactModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			r := newInteractRig(t, interactOptions{mode: mode, repeat: "2s"})
			m := r.m[0]
			r.group()
			// Without an acknowledgement the repeats go out.
			r.waitFor(60*time.Second, "a repeat notification", func() bool { return len(r.since(0, "chat.postMessage")) > 0 })

			r.press(m, notifier.ActionAck, userAna)
			r.waitMessage("ana's acknowledgement", func(s shown) bool { return s.says("👀 Acknowledged by <@U0ANA> at ") })
			r.checkRepeatsHeld(m)

			mark := len(r.slack.Calls())
			r.kv.set("vllm-1", 0.95)
			s := r.waitMessage("the acknowledgement ended by the new alert", func(s shown) bool {
				return s.says("👀 Acknowledgement by <@U0ANA>") && s.says("ended: a new alert joined the group") && s.has(notifier.ActionAck)
			})
			if !strings.Contains(s.blocks, "vllm-1") {
				t.Errorf("the message does not show the new alert: %s", s.blocks)
			}
			r.waitFor(30*time.Second, "the notification of the new alert in the thread", func() bool {
				return slices.ContainsFunc(r.since(mark, "chat.postMessage"), func(c notifiertest.SlackCall) bool { return strings.Contains(c.Text, "2 firing") })
			})

			r.press(m, notifier.ActionAck, userBob)
			r.waitMessage("bob's acknowledgement", func(s shown) bool { return s.says("👀 Acknowledged by <@U0BOB> at ") })
			mark = len(r.slack.Calls())
			r.kv.set("vllm-0", 0.1)
			r.kv.set("vllm-1", 0.1)
			s = r.waitMessage("the acknowledgement ended by the resolution", func(s shown) bool {
				return s.says("👀 Acknowledged by <@U0BOB>") && s.says("ended: the group resolved")
			})
			if !strings.Contains(s.blocks, "RESOLVED") || s.has(notifier.ActionAck) || s.has(notifier.ActionUnack) {
				t.Errorf("the resolved message: %v\n%s", s, s.blocks)
			}
			if !slices.ContainsFunc(r.since(mark, "chat.postMessage"), func(c notifiertest.SlackCall) bool { return strings.HasPrefix(c.Text, "✅ Resolved") }) {
				t.Errorf("no notification of the resolution in the thread")
			}
		})
	}
}

// TestSlackInteractRefusals: with allowed_users and allowed_user_groups,
// a user in neither changes nothing and gets the ephemeral refusal, while
// a member of the allowed user group acts. The same press delivered three
// times (the envelope redelivered; in HTTP mode the request signed
// anew, as Slack retries it) acts once: one silence, one edit. In HTTP
// mode a forged, unsigned, stale or replayed request gets 401 and changes
// nothing.
func TestSlackInteractRefusals(t *testing.T) {
	for _, mode := range interactModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			r := newInteractRig(t, interactOptions{mode: mode, repeat: "1h",
				allowed: "    allowed_users: [U0ANA, U0BOB]\n    allowed_user_groups: [S0ONCALL]\n"})
			m := r.m[0]
			ts := r.group().TS
			before := r.message()
			mark := len(r.slack.Calls())

			// Eve is in no allowed list.
			r.press(m, notifier.ActionSilence1h, userEve)
			r.waitFor(30*time.Second, "the refusal to eve", func() bool {
				for _, c := range r.slack.Calls()[mark:] {
					if c.Method == "chat.postEphemeral" {
						return true
					}
				}
				return false
			})
			for _, c := range r.slack.Calls()[mark:] {
				switch c.Method {
				case "chat.postEphemeral":
					if c.User != userEve || c.Channel != interactChannel || !strings.HasPrefix(c.Text, "You are not allowed to silence") {
						t.Errorf("ephemeral to %s in %s: %q, want to %s in %s: You are not allowed to silence…", c.User, c.Channel, c.Text, userEve, interactChannel)
					}
				case "chat.update", "chat.postMessage":
					t.Errorf("a refused press changed the message: %s %.200s", c.Method, c.Blocks)
				}
			}
			if n := r.metricWith(m, "paged_slack_actions_total", `action="paged.silence.1h",outcome="refused"`); n != 1 {
				t.Errorf("refused presses counted: %v, want 1", n)
			}
			r.checkNoSilence(m)
			if after := r.message(); after.String() != before.String() {
				t.Errorf("the message changed after a refusal: %v, was %v", after, before)
			}

			// Carol is allowed through the user group.
			r.press(m, notifier.ActionAck, userCarol)
			r.waitMessage("carol's acknowledgement", func(s shown) bool { return s.says("👀 Acknowledged by <@U0CAROL> at ") })

			// Ana silences; Slack delivers the press three times.
			if mode == notifier.InteractHTTP {
				r.checkBadRequests(m)
			}
			payload := r.payload(notifier.ActionSilence1h, userAna)
			mark = len(r.slack.Calls())
			var first string // the first request's body, in HTTP mode
			var firstHdr http.Header
			if mode == notifier.InteractSocket {
				id := r.deliver(m, payload)
				for n := 2; n <= 3; n++ {
					if err := r.slack.Redeliver(id); err != nil {
						t.Fatal(err)
					}
					if !r.slack.WaitAckCount(id, n, 30*time.Second) {
						r.dump()
						t.Fatalf("delivery %d of envelope %s not acknowledged (%d acks)", n, id, r.slack.AckCount(id))
					}
				}
			} else {
				now := time.Now()
				for i := range 3 {
					// Slack signs each retry anew, with a new timestamp,
					// and says which retry it is.
					body, hdr := notifiertest.SignedInteraction(interactSecret, payload, now.Add(time.Duration(i)*time.Second))
					if i == 0 {
						first, firstHdr = body, hdr.Clone()
					} else {
						hdr.Set("X-Slack-Retry-Num", strconv.Itoa(i))
						hdr.Set("X-Slack-Retry-Reason", "http_timeout")
					}
					if code, text := r.postInteraction(m, body, hdr); code != http.StatusOK {
						t.Fatalf("delivery %d: %d %s", i+1, code, text)
					}
				}
			}
			if n := r.metricWith(m, "paged_slack_actions_total", `action="paged.silence.1h",outcome="applied"`); n != 1 {
				t.Errorf("silences applied: %v, want 1", n)
			}
			if n := r.metricWith(m, "paged_slack_actions_total", `action="paged.silence.1h",outcome="duplicate"`); n != 2 {
				t.Errorf("deliveries taken for duplicates: %v, want 2", n)
			}
			r.waitMessage("ana's silence", func(s shown) bool { return s.says("🔕 Silenced by <@U0ANA> until ") })
			if all := r.silences(m, "active"); len(all) != 1 || all[0].CreatedBy != "ana (U0ANA)" {
				t.Errorf("silences after three deliveries: %v, want one by ana (U0ANA)", all)
			}
			// The duplicates were told apart before any edit followed
			// them; only the first edits the message.
			if ups := r.since(mark, "chat.update"); len(ups) != 1 {
				t.Errorf("%d edits of the message (%s) for one press, want 1", len(ups), ts)
			}

			if mode == notifier.InteractHTTP {
				// Lifted, then the first request of the silence replayed
				// byte for byte: refused.
				r.press(m, notifier.ActionUnsilence, userBob)
				r.waitMessage("the silence lifted", func(s shown) bool { return s.says("lifted by <@U0BOB>") })
				if code, _ := r.postInteraction(m, first, firstHdr); code != http.StatusUnauthorized {
					t.Errorf("replayed request: %d, want 401", code)
				}
				if n := r.metricWith(m, "paged_slack_actions_total", `action="paged.silence.1h",outcome="duplicate"`); n != 2 {
					t.Errorf("the replayed request reached the actions: %v duplicates, want 2", n)
				}
				if active := r.silences(m, "active"); len(active) != 0 {
					t.Errorf("active silences after the replay: %v", active)
				}
			}
		})
	}
}

// checkNoSilence checks that m has no silence at all.
func (r *interactRig) checkNoSilence(m *member) {
	r.t.Helper()
	var all []apiSilence
	r.getJSON(m, "/api/v2/silences", &all)
	if len(all) != 0 {
		r.t.Errorf("silences: %v, want none", all)
	}
}

// checkBadRequests posts a silence press by an allowed user forged
// (another secret), unsigned and stale (six minutes old): each gets 401
// and nothing changes.
func (r *interactRig) checkBadRequests(m *member) {
	r.t.Helper()
	payload := r.payload(notifier.ActionSilence1h, userAna)
	before, mark := r.message(), len(r.slack.Calls())
	silences := r.actionCount(m, notifier.ActionSilence1h)
	forged, forgedHdr := notifiertest.SignedInteraction("not-the-signing-secret", payload, time.Now())
	unsigned, unsignedHdr := notifiertest.SignedInteraction(interactSecret, payload, time.Now())
	unsignedHdr.Del("X-Slack-Signature")
	unsignedHdr.Del("X-Slack-Request-Timestamp")
	stale, staleHdr := notifiertest.SignedInteraction(interactSecret, payload, time.Now().Add(-6*time.Minute))
	tampered, tamperedHdr := notifiertest.SignedInteraction(interactSecret, r.payload(notifier.ActionAck, userAna), time.Now())
	tampered = strings.Replace(tampered, "paged.ack", "paged.silence.1h", 1)
	for _, req := range []struct {
		name string
		body string
		hdr  map[string][]string
	}{
		{"forged", forged, forgedHdr},
		{"unsigned", unsigned, unsignedHdr},
		{"stale", stale, staleHdr},
		{"tampered", tampered, tamperedHdr},
	} {
		if code, text := r.postInteraction(m, req.body, req.hdr); code != http.StatusUnauthorized {
			r.t.Errorf("%s request: %d %s, want 401", req.name, code, text)
		}
	}
	r.checkNoSilence(m)
	if n := r.actionCount(m, notifier.ActionSilence1h); n != silences {
		r.t.Errorf("a request refused with 401 reached the actions: %v silence presses counted, were %v", n, silences)
	}
	if n := r.metricWith(m, "paged_slack_actions_total", `action="unknown",outcome="unauthorized"`); n != 4 {
		r.t.Errorf("unauthorized requests counted: %v, want 4", n)
	}
	if after := r.message(); after.String() != before.String() {
		r.t.Errorf("the message changed after refused requests: %v, was %v", after, before)
	}
	for _, c := range r.slack.Calls()[mark:] {
		// The chart of the group's first message may be uploaded
		// meanwhile (files.*); a press would post or edit.
		if strings.HasPrefix(c.Method, "chat.") {
			r.t.Errorf("a refused request reached Slack: %s %.200s", c.Method, c.Text)
		}
	}
}

// TestSlackInteractHA runs an HA pair. A member that acknowledges the
// group is killed with SIGKILL right after its answer to Slack: the
// survivor's message shows the acknowledgement and the survivor holds the
// repeats back. Restarted, the member silences the group and is killed
// again right after: the survivor's API has the silence, by the Slack
// user, and its message shows it.
func TestSlackInteractHA(t *testing.T) {
	for _, mode := range interactModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			r := newInteractRig(t, interactOptions{mode: mode, members: 2, repeat: "3s"})
			r.group()

			acting := r.pressOnOne(r.m[0], notifier.ActionAck, userAna)
			r.kill9(acting)
			survivor := r.other(acting)
			r.waitMessage("ana's acknowledgement", func(s shown) bool { return s.says("👀 Acknowledged by <@U0ANA> at ") })
			r.checkAcked(survivor, "ana (U0ANA)")
			r.checkRepeatsHeld(survivor)

			r.restart(acting)
			// In Socket Mode the restarted member has the newest
			// connection, which Slack delivers to.
			acting = r.pressOnOne(acting, notifier.ActionSilence1h, userBob)
			r.kill9(acting)
			survivor = r.other(acting)
			r.waitFor(30*time.Second, "the silence on the survivor", func() bool { return len(r.silences(survivor, "active")) == 1 })
			if sil := r.silences(survivor, "active")[0]; sil.CreatedBy != "bob (U0BOB)" {
				t.Errorf("the survivor's silence: %v, want created by bob (U0BOB)", sil)
			}
			r.waitMessage("bob's silence", func(s shown) bool {
				return s.says("🔕 Silenced by <@U0BOB> until ") && s.says("Acknowledged by <@U0ANA>")
			})
			if tl := topLevel(r.slack.Calls()); len(tl) != 1 {
				t.Errorf("%d top-level messages from the pair, want 1", len(tl))
			}
		})
	}
}

// pressOnOne presses action as user and returns the member that applied
// it: in HTTP mode m, to which the request goes; in Socket Mode the
// member Slack delivered the envelope to, from its log.
func (r *interactRig) pressOnOne(m *member, action, user string) *member {
	r.t.Helper()
	applied := func(m *member) int {
		return logged(m, `msg="slack action"`, "action="+action, "outcome=applied")
	}
	before := map[*member]int{}
	for _, x := range r.m {
		before[x] = applied(x)
	}
	r.press(m, action, user)
	if r.opts.mode == notifier.InteractHTTP {
		return m
	}
	var by *member
	r.waitFor(10*time.Second, "a member to log the action", func() bool {
		for _, x := range r.m {
			if applied(x) > before[x] {
				by = x
				return true
			}
		}
		return false
	})
	return by
}

// other is the member of the pair that is not m.
func (r *interactRig) other(m *member) *member {
	if r.m[0] == m {
		return r.m[1]
	}
	return r.m[0]
}
