package notifier

import (
	"context"
	"log/slog"
	"sync"
)

// deferAttrs wraps h so that Logger.With and WithGroup only record what
// they were given; h formats it the first time a record passes Enabled.
//
// Alertmanager's dispatcher and pipeline call With on every aggregation
// group and on every flush, to log at debug level, which is off. A text or
// JSON handler formats those attributes eagerly: in a burst of 2,000 new
// groups that was 6% of the notifier's allocations, for lines never
// written.
func deferAttrs(h slog.Handler) slog.Handler {
	if _, ok := h.(*deferred); ok {
		return h
	}
	return &deferred{base: h}
}

// deferred is one With (attrs) or WithGroup (group) call on top of
// parent; the chain is replayed on base, oldest first, when built.
type deferred struct {
	base   slog.Handler
	parent *deferred
	group  string
	attrs  []slog.Attr

	once sync.Once
	h    slog.Handler
}

// Enabled asks the wrapped handler: levels do not depend on attributes.
func (d *deferred) Enabled(ctx context.Context, l slog.Level) bool { return d.base.Enabled(ctx, l) }

func (d *deferred) Handle(ctx context.Context, r slog.Record) error {
	return d.build().Handle(ctx, r)
}

func (d *deferred) build() slog.Handler {
	d.once.Do(func() {
		switch {
		case d.parent == nil:
			d.h = d.base
		case d.attrs != nil:
			d.h = d.parent.build().WithAttrs(d.attrs)
		default:
			d.h = d.parent.build().WithGroup(d.group)
		}
	})
	return d.h
}

func (d *deferred) WithAttrs(as []slog.Attr) slog.Handler {
	if len(as) == 0 {
		return d
	}
	return &deferred{base: d.base, parent: d, attrs: as}
}

func (d *deferred) WithGroup(name string) slog.Handler {
	if name == "" {
		return d
	}
	return &deferred{base: d.base, parent: d, group: name}
}
