package main

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// progressEvery is how often, at most, a long command's progress lines
// are written when its output is not a terminal.
const progressEvery = 10 * time.Second

// throttled is a handler that passes on an info record only when every
// has passed since the command started or since the last record it
// passed, so that a long command prints a progress line about every 10 s
// and a short one prints none. Warnings and errors always pass.
type throttled struct {
	h     slog.Handler
	every time.Duration
	mu    *sync.Mutex
	last  *time.Time
}

// throttle returns l with its info records thinned to one per every.
func throttle(l *slog.Logger, every time.Duration) *slog.Logger {
	start := time.Now()
	return slog.New(&throttled{h: l.Handler(), every: every, mu: &sync.Mutex{}, last: &start})
}

func (t *throttled) Enabled(ctx context.Context, lv slog.Level) bool { return t.h.Enabled(ctx, lv) }

func (t *throttled) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		t.mu.Lock()
		due := r.Time.Sub(*t.last) >= t.every
		if due {
			*t.last = r.Time
		}
		t.mu.Unlock()
		if !due {
			return nil
		}
	}
	return t.h.Handle(ctx, r)
}

func (t *throttled) WithAttrs(as []slog.Attr) slog.Handler {
	return &throttled{h: t.h.WithAttrs(as), every: t.every, mu: t.mu, last: t.last}
}

func (t *throttled) WithGroup(name string) slog.Handler {
	return &throttled{h: t.h.WithGroup(name), every: t.every, mu: t.mu, last: t.last}
}
