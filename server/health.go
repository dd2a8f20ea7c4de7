package server

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

func (s *Server) handleHealthy(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "paged is Healthy.")
}

// handleReady answers 200 once the engine has loaded rules and the
// datasource answered, and 503 with the reason until then.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	ok, reason := s.engine().Ready()
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

func (s *Server) handleStatusConfig(w http.ResponseWriter, r *http.Request) {
	y, err := s.Config().Redacted()
	if err != nil {
		writeAPIError(w, http.StatusInternalServerError, errorInternal, fmt.Errorf("render configuration: %w", err))
		return
	}
	writeAPIData(w, apiConfig{YAML: y})
}

// watchReady logs every change of readiness with its reason, so that an
// operator sees in the logs what /-/ready says.
func (s *Server) watchReady(ctx context.Context) error {
	t := time.NewTicker(s.opts.ReadyCheckInterval)
	defer t.Stop()
	first := true
	var lastOK bool
	var lastReason string
	for {
		ok, reason := s.engine().Ready()
		if first || ok != lastOK || reason != lastReason {
			if ok {
				s.logger.Info("paged is ready")
			} else {
				s.logger.Warn("paged is not ready", "reason", reason)
			}
			first, lastOK, lastReason = false, ok, reason
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
