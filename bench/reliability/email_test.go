//go:build reliability

package reliability

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pagedhq/paged/notifier/notifiertest"
)

// mail is an SMTP server (STARTTLS, AUTH PLAIN) whose refusals are
// switched on and off.
type mail struct{ *notifiertest.SMTP }

func newMail(t *testing.T) mail { return mail{notifiertest.NewSMTP(t, "paged", "smtp-pass")} }

// config is an email_configs entry for the receiver of notifierConfig.
func (m mail) config() string {
	return fmt.Sprintf(`      email_configs:
        - to: oncall@example.org
          from: paged@example.org
          smarthost: %s
          auth_username: paged
          auth_password: smtp-pass
          send_resolved: true
          tls_config: {ca_file: %s}
`, m.Addr(), m.CAFile())
}

// runFaults is runFaults for the SMTP server: each step refuses every
// MAIL command with a transient reply for a while.
func (m mail) runFaults(steps []faultStep) []window {
	replies := map[fault]string{faultSMTP421: "421 4.3.2 Service not available", faultSMTP451: "451 4.3.0 Try again later"}
	var ws []window
	for _, st := range steps {
		w := window{f: st.f, from: time.Now()}
		m.Refuse(replies[st.f])
		time.Sleep(st.for_)
		m.Refuse("")
		w.to = time.Now()
		ws = append(ws, w)
		time.Sleep(st.gapAfter)
	}
	return ws
}

// deliveries returns the mails about episodes: a [FIRING subject is a
// firing one, a [RESOLVED] one a resolved one, the episode read from the
// summary in the body.
func (m mail) deliveries() []delivery {
	var out []delivery
	for _, ml := range m.Mails() {
		in, id := episodeOf(ml.HTML)
		if id < 0 {
			continue
		}
		status := "firing"
		if strings.HasPrefix(ml.Subject, "[RESOLVED]") {
			status = "resolved"
		}
		out = append(out, delivery{instance: in, ep: id, status: status, at: ml.At})
	}
	return out
}
