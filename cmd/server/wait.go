package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/selfcma/selfcma/internal/session"
)

// The backoff of waitStore: the first wait, doubled after each try up to
// the last.
const (
	firstStoreRetry = 250 * time.Millisecond
	maxStoreRetry   = 10 * time.Second
)

// waitStore opens the store of cfg.DB as openStore does, and while the
// database is unavailable (down, restarting, out of connections: an error
// wrapping session.ErrUnavailable) tries again with backoff, logging each
// try, for up to cfg.StoreWait; then, or at any other error (a wrong
// password, a damaged file), it gives up. A server started before its
// database, or during its restart, thus starts with it; meanwhile its
// port accepts connections but answers none.
func waitStore(ctx context.Context, cfg Config, log *slog.Logger, onCommit func(int, time.Duration)) (session.Store, func() error, string, error) {
	start := time.Now()
	delay := firstStoreRetry
	for try := 1; ; try++ {
		st, closeStore, kind, err := openStore(ctx, cfg.DB, onCommit, cfg.StoreTimeout)
		if err == nil {
			if try > 1 {
				log.Info("store reachable", "tries", try, "waited", time.Since(start).Round(time.Millisecond).String())
			}
			return st, closeStore, kind, nil
		}
		waited := time.Since(start)
		if !errors.Is(err, session.ErrUnavailable) || ctx.Err() != nil {
			return nil, nil, "", err
		}
		if waited+delay > cfg.StoreWait {
			if cfg.StoreWait == 0 {
				return nil, nil, "", err
			}
			return nil, nil, "", fmt.Errorf("%w (gave up after %d tries in %v: -store-wait %v)", err, try, waited.Round(time.Millisecond), cfg.StoreWait)
		}
		log.Warn("store unavailable, waiting", "try", try, "retry_in", delay.String(), "waited", waited.Round(time.Millisecond).String(), "error", err)
		select {
		case <-ctx.Done():
			return nil, nil, "", fmt.Errorf("waiting for the store: %w", err)
		case <-time.After(delay):
		}
		delay = min(2*delay, maxStoreRetry)
	}
}

// pinger is a store that can say whether its database answers (the
// PostgreSQL store).
type pinger interface {
	Ping(ctx context.Context) error
}

// readyOf is the Ready of httpapi.Config for st: its Ping, or nil (a
// bbolt file, open, is always ready).
func readyOf(st session.Store) func(context.Context) error {
	if p, ok := st.(pinger); ok {
		return p.Ping
	}
	return nil
}
