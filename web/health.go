package web

import (
	"fmt"
	"net/http"
)

func (h *Handler) handleHealthy(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "paged is Healthy.")
}

// handleReady answers 200 once the engine has loaded rules and the
// datasource answered, and 503 with the reason until then.
func (h *Handler) handleReady(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	ok, reason := h.engine().Ready()
	if !ok {
		if reason == "" {
			reason = "starting"
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "paged is not ready: %s\n", reason)
		return
	}
	fmt.Fprintln(w, "paged is Ready.")
}

func (h *Handler) handleStatusConfig(w http.ResponseWriter, r *http.Request) {
	y, err := h.Config().Redacted()
	if err != nil {
		writeAPIError(w, http.StatusInternalServerError, errorInternal, fmt.Errorf("render configuration: %w", err))
		return
	}
	writeAPIData(w, apiConfig{YAML: y})
}
