package server

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/engine"
	"github.com/pagedhq/paged/history"
)

// restartBlocks are the parts of paged.yaml the engine's datasource, its
// storage, the notifier and its cluster peer are built from; a reload
// cannot change them.
var restartBlocks = []string{"datasource", "storage", "runbook_base_url", "cluster"}

// ReloadError is a reload that failed; the previous configuration and
// rules keep running.
type ReloadError struct {
	Err error
}

func (e *ReloadError) Error() string {
	return "reload failed, previous configuration kept: " + e.Err.Error()
}

func (e *ReloadError) Unwrap() error { return e.Err }

// Reload re-reads the configuration file and applies it: rule files (the
// engine keeps the state of unchanged groups), the notifier block, the auth
// token and the runbooks. It applies everything or nothing: on any error the
// previous configuration and rules keep running and the error says why.
func (s *Server) Reload() error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	err := s.reload()
	now := time.Now()
	if err != nil {
		s.metrics.lastReloadOK.Set(0)
		s.metrics.reloads.WithLabelValues("failure").Inc()
		s.reloads.failed(s.opts.ConfigFile, err, now)
		s.history.Record(history.Event{Time: now, Type: history.TypeReload, Outcome: history.OutcomeFailure,
			Details: history.Details(map[string]string{"file": s.opts.ConfigFile, "error": err.Error()})})
		return &ReloadError{Err: err}
	}
	s.history.Record(history.Event{Time: now, Type: history.TypeReload, Outcome: history.OutcomeSuccess,
		Details: history.Details(map[string]string{"file": s.opts.ConfigFile})})
	s.reloads.succeeded()
	s.metrics.reloadSuccess(now)
	s.metrics.reloads.WithLabelValues("success").Inc()
	s.logger.Info("configuration reloaded", "file", s.opts.ConfigFile, "rule_files", len(s.Config().RuleFilePaths), "packs", len(s.Config().Packs))
	return nil
}

// reloadStatus is the outcome of the reloads since the last good one,
// for PagedReloadFailed: the engine asks at every check.
type reloadStatus struct {
	mu      sync.Mutex
	failing bool
	last    engine.ReloadFailure
}

func (r *reloadStatus) failed(file string, err error, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.failing {
		r.failing, r.last.Since = true, now
	}
	r.last.File, r.last.Err = file, err.Error()
}

func (r *reloadStatus) succeeded() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failing, r.last = false, engine.ReloadFailure{}
}

// failure is Deps.ReloadFailed.
func (r *reloadStatus) failure() (engine.ReloadFailure, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last, r.failing
}

func (s *Server) reload() error {
	old := s.Config()
	cfg, err := config.Load(s.opts.ConfigFile, s.opts.Getenv)
	if err != nil {
		return err
	}
	cfg.UseWebConfig(s.opts.WebConfigFile)
	if changed := restartRequired(old, cfg); len(changed) > 0 {
		return fmt.Errorf("%s changed: restart paged to apply (reload applies rule_files, packs, datasource.embedded.scrape_configs and keep, global.evaluation_interval, global.external_labels, global.no_series_after, notifier, report, web.auth_token_file, web.runbooks_dir, the web.max_* limits, web.read_timeout and web.regexp_query_timeout)", strings.Join(changed, ", "))
	}
	if (old.NotifierConfig == nil) != (cfg.NotifierConfig == nil) {
		return errors.New("notifier block added or removed: restart paged to apply")
	}
	if err := s.eng.ApplyRules(cfg); err != nil {
		return fmt.Errorf("rules: %w", err)
	}
	if s.notifier != nil && cfg.NotifierConfig != nil {
		if err := s.notifier.ApplyConfig(cfg.NotifierConfig); err != nil {
			// Put the old rules back so nothing of the new config runs.
			if rerr := s.eng.ApplyRules(old); rerr != nil {
				s.logger.Error("restoring previous rules failed", "err", rerr)
			}
			return fmt.Errorf("notifier: %w", err)
		}
	}
	s.cfg.Store(cfg)
	if s.digest != nil {
		s.digest.Wake() // report.digest may have changed
	}
	return nil
}

// restartRequired lists the blocks that differ between two configurations
// and that only a restart applies.
func restartRequired(old, cfg *config.Config) []string {
	var out []string
	for _, b := range restartBlocks {
		if old.Section(b) != cfg.Section(b) {
			out = append(out, b)
		}
	}
	if old.Web.ListenAddress != cfg.Web.ListenAddress {
		out = append(out, "web.listen_address")
	}
	if old.Web.ConfigFile != cfg.Web.ConfigFile {
		out = append(out, "web.config_file")
	}
	if old.Web.MaxHeaderBytes != cfg.Web.MaxHeaderBytes {
		out = append(out, "web.max_header_bytes")
	}
	if old.Web.IdleTimeout != cfg.Web.IdleTimeout {
		out = append(out, "web.idle_timeout")
	}
	if old.Global.ExternalURL.String() != cfg.Global.ExternalURL.String() {
		out = append(out, "global.external_url")
	}
	if old.Global.ResendDelay != cfg.Global.ResendDelay {
		out = append(out, "global.resend_delay")
	}
	if old.Global.AlignEvaluations != cfg.Global.AlignEvaluations {
		out = append(out, "global.align_evaluations")
	}
	slices.Sort(out)
	return out
}
