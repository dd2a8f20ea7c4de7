package notifier

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/prometheus/alertmanager/silence"

	"github.com/pagedhq/paged/history"
)

// silenceChangesDurable holds the answer to a silence change (POST
// /api/v2/silences, DELETE /api/v2/silence/{id}) until the change is on
// disk: the silences' broadcast hook fsyncs it before Set or Expire
// returns, and this checks that it succeeded. When it could not be
// written the answer is 503 with the reason instead of the API's success:
// the silence is in effect in memory and paged retries writing it, but
// the API does not claim it survives a restart.
func (n *Notifier) silenceChangesDurable(next http.Handler) http.Handler {
	if n.silSt == nil || n.silSt.disk == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isSilenceChange(r) {
			next.ServeHTTP(w, r)
			return
		}
		b := &bufferedResponse{header: http.Header{}, status: http.StatusOK}
		next.ServeHTTP(b, r)
		if b.status >= 200 && b.status < 300 {
			n.recordSilenceChange(r, b.body.Bytes())
			if err := n.silSt.disk.Sync(); err != nil {
				n.logger.Error("silence change not written to disk; answering 503", "file", n.statePath("silences"), "err", err)
				w.Header().Set("Retry-After", "5")
				http.Error(w, fmt.Sprintf("the silence change is in effect, but it could not be written to disk, so it would not survive a restart (%v); "+
					"paged keeps retrying the write; check the disk under storage.path", err), http.StatusServiceUnavailable)
				return
			}
		}
		b.writeTo(w)
	})
}

// recordSilenceChange puts a silence the API created, updated or expired
// in the history, with who made it.
func (n *Notifier) recordSilenceChange(r *http.Request, body []byte) {
	if n.opts.History == nil {
		return
	}
	var id string
	outcome := history.OutcomeExpired
	if r.Method == http.MethodPost {
		var answer struct {
			SilenceID string `json:"silenceID"`
		}
		if json.Unmarshal(body, &answer) != nil || answer.SilenceID == "" {
			return
		}
		id, outcome = answer.SilenceID, history.OutcomeCreated
	} else {
		id = path.Base(strings.TrimRight(r.URL.Path, "/"))
	}
	n.recordSilence(r.Context(), id, outcome)
}

// recordSilence puts the silence id, just created or expired, in the
// history.
func (n *Notifier) recordSilence(ctx context.Context, id, outcome string) {
	if n.opts.History == nil {
		return
	}
	sils, _, err := n.silences.Query(ctx, silence.QIDs(id))
	if err != nil || len(sils) != 1 {
		return
	}
	if outcome == history.OutcomeCreated && sils[0].UpdatedAt.AsTime().After(sils[0].StartsAt.AsTime()) {
		outcome = history.OutcomeUpdated // an existing silence changed in place
	}
	n.opts.History.Record(silenceEvent(sils[0], outcome, time.Now()))
}

func isSilenceChange(r *http.Request) bool {
	p := strings.TrimRight(r.URL.Path, "/")
	switch r.Method {
	case http.MethodPost:
		return strings.HasSuffix(p, "/api/v2/silences")
	case http.MethodDelete:
		return strings.Contains(p, "/api/v2/silence/")
	}
	return false
}

// bufferedResponse keeps a handler's answer until it is known to be true.
type bufferedResponse struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(code int) {
	if !b.wrote {
		b.status, b.wrote = code, true
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.wrote = true
	return b.body.Write(p)
}

func (b *bufferedResponse) writeTo(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	w.WriteHeader(b.status)
	_, _ = w.Write(b.body.Bytes())
}
