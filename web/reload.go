package web

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/pagedhq/paged/config"
)

// handleReload is POST /-/reload: 200 when the new configuration runs,
// 400 when it is invalid (the old one keeps running), 500 when applying it
// failed.
func (h *Handler) handleReload(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	err := h.opts.Reload()
	if err == nil {
		fmt.Fprintln(w, "configuration reloaded")
		return
	}
	h.logger.Error("reload failed", "err", err)
	code := http.StatusInternalServerError
	var ce *config.Error
	if errors.As(err, &ce) {
		code = http.StatusBadRequest
	}
	w.WriteHeader(code)
	fmt.Fprintln(w, err.Error())
}
