package server

import (
	"context"
	"time"
)

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
