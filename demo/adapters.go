package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/pagedhq/paged/config"
	"github.com/pagedhq/paged/notifier"
	"github.com/pagedhq/paged/rules"
	"github.com/pagedhq/paged/server"
)

// The demo runs the daemon's own code (server.New) and changes two things
// through the server's factories: the engine loads time-scaled copies of
// the rule files, and the engine's alerts also reach the console.

// scaledEngineFactory builds the daemon's engine (server.DefaultEngineFactory)
// and makes it load copies of the rule files with their durations divided
// by factor, written under dir.
func scaledEngineFactory(factor float64, dir string) server.EngineFactory {
	return func(cfg *config.Config, deps server.Deps) (server.Engine, error) {
		eng, err := server.DefaultEngineFactory(cfg, deps)
		if err != nil {
			return nil, err
		}
		return &scaledEngine{Engine: eng, ts: timeScaleFor(cfg, factor), dir: dir}, nil
	}
}

// scaledEngine is a server.Engine whose ApplyRules loads scaled copies.
type scaledEngine struct {
	server.Engine
	ts  *timeScale
	dir string
}

func (e *scaledEngine) ApplyRules(cfg *config.Config) error {
	paths, err := e.ts.writeScaled(cfg.RuleFilePaths, e.dir)
	if err != nil {
		return err
	}
	scaled := *cfg
	scaled.RuleFilePaths = paths
	// The packs, with their overrides applied, are scaled in memory and
	// keep their source names (pack:vllm).
	scaled.Packs = make([]*config.PackConfig, 0, len(cfg.Packs))
	for _, pc := range cfg.Packs {
		r := *pc.Rendered
		content, err := e.ts.scaleFile(r.Source, r.Content)
		if err != nil {
			return err
		}
		r.Content = content
		r.File = rules.ParseFile(r.Source, content, rules.ParseOptions{})
		if errs := r.File.Errors(); len(errs) > 0 {
			return fmt.Errorf("scaled %s: %w", r.Source, errors.Join(errs...))
		}
		c := *pc
		c.Rendered = &r
		scaled.Packs = append(scaled.Packs, &c)
	}
	return e.Engine.ApplyRules(&scaled)
}

// Close releases an engine that never ran (server.New calls it when the
// rules fail to load).
func (e *scaledEngine) Close() error {
	if c, ok := e.Engine.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// teeNotifierFactory builds the daemon's notifier (server.NewNotifier) and
// hands every alert the engine sends to also first.
func teeNotifierFactory(also rules.NotifyFunc) server.NotifierFactory {
	return func(cfg *config.Config, deps server.Deps) (server.Notifier, error) {
		n, err := server.NewNotifier(cfg, deps)
		if err != nil {
			return nil, err
		}
		return &teeNotifier{next: n, also: also}, nil
	}
}

// teeNotifier passes alerts to also and then to next, which is nil when
// the configuration has no notifier block.
type teeNotifier struct {
	next server.Notifier
	also rules.NotifyFunc
}

func (t *teeNotifier) Notify(ctx context.Context, alerts []*rules.Alert) {
	t.also(ctx, alerts)
	if t.next != nil {
		t.next.Notify(ctx, alerts)
	}
}

func (t *teeNotifier) Run(ctx context.Context) error {
	if t.next == nil {
		<-ctx.Done()
		return nil
	}
	return t.next.Run(ctx)
}

func (t *teeNotifier) ApplyConfig(c *notifier.Config) error {
	if t.next == nil {
		return nil
	}
	return t.next.ApplyConfig(c)
}

// SlackInteractionsHandler passes Slack's button presses to the notifier.
func (t *teeNotifier) SlackInteractionsHandler() http.Handler {
	if si, ok := t.next.(interface{ SlackInteractionsHandler() http.Handler }); ok {
		return si.SlackInteractionsHandler()
	}
	return http.NotFoundHandler()
}

func (t *teeNotifier) APIHandler() http.Handler {
	if t.next == nil {
		return http.NotFoundHandler()
	}
	return t.next.APIHandler()
}
