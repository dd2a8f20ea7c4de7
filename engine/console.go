package engine

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/pagedhq/paged/rules"
)

// ConsoleSink returns a NotifyFunc that writes one line per alert to w:
//
//	FIRING PagedDatasourceDown{severity="critical"} stale since=... summary="..."
//
// It stands in for the notifier. now tells resolved from firing; nil
// means time.Now.
func ConsoleSink(w io.Writer, now func() time.Time) rules.NotifyFunc {
	if now == nil {
		now = time.Now
	}
	var mu sync.Mutex
	return func(_ context.Context, alerts []*rules.Alert) {
		t := now()
		var b strings.Builder
		for _, a := range alerts {
			status := "FIRING"
			if a.Resolved(t) {
				status = "RESOLVED"
			}
			name := a.Labels.Get(labels.AlertName)
			rest := labels.NewBuilder(a.Labels).Del(labels.AlertName).Labels()
			fmt.Fprintf(&b, "%s %s%s", status, name, rest.String())
			if a.Stale {
				b.WriteString(" stale")
			}
			if !a.StartsAt.IsZero() {
				fmt.Fprintf(&b, " since=%s", a.StartsAt.UTC().Format(time.RFC3339))
			}
			if s := a.Annotations.Get("summary"); s != "" {
				fmt.Fprintf(&b, " summary=%q", s)
			}
			b.WriteByte('\n')
		}
		mu.Lock()
		defer mu.Unlock()
		_, _ = io.WriteString(w, b.String())
	}
}
