package session

import (
	"context"
	"time"
)

// Claims hand out the candidates of the pending generation one at a time,
// to workers that each evaluate one point and tell its value with a partial
// tell: a candidate is claimed for a lease, and handed out again, the same
// point, only when the lease has run out before its value arrived.
//
// Leases live in the Manager's memory, not in the store: after a restart
// of the server every candidate without a value can be claimed again, so a
// restart may cost an evaluation twice but never a value. The values
// themselves are persisted by the partial tells.

// Lease bounds.
const (
	DefaultLease = time.Hour
	MaxLease     = 30 * 24 * time.Hour
)

// Claim is a candidate handed out to one worker.
type Claim struct {
	Generation int
	Index      int       // the candidate's index in the batch; -1 if none is free
	X          []float64 // the candidate (shared with the batch: read only); nil if none is free
	// Expires is the end of the lease; if no candidate is free, the end of
	// the first lease to run out (one may be free sooner: when a value
	// arrives the generation may complete).
	Expires time.Time
}

// leases are the unexpired claims of a session's pending generation.
type leases struct {
	generation int
	until      map[int]time.Time // by index
}

// Claim leases a candidate of session id's pending generation that has no
// value and no unexpired lease (the one of lowest index) for lease (0 =
// DefaultLease). If every candidate without a value is leased, the Claim
// has Index -1.
func (m *Manager) Claim(ctx context.Context, id string, lease time.Duration) (Claim, error) {
	if lease == 0 {
		lease = DefaultLease
	}
	if lease < time.Second || lease > MaxLease {
		return Claim{}, errorf(CodeOutOfRange, "lease %v, want 1s to %v", lease, MaxLease)
	}
	e := m.acquire(id)
	defer m.release(e)
	l, err := m.load(ctx, e, id)
	if err != nil {
		return Claim{}, err
	}
	if err := stoppedError(l.opt); err != nil {
		return Claim{}, err
	}
	g := l.opt.Generation()
	if e.leases.generation != g || e.leases.until == nil {
		e.leases = leases{generation: g, until: map[int]time.Time{}}
	}
	told := map[int]bool{}
	if p := l.meta.Partial; p != nil && p.Generation == g {
		for _, i := range p.Indices {
			told[i] = true
		}
	}
	now := m.now()
	if l.cand == nil {
		l.cand = l.opt.Ask()
	}
	c := Claim{Generation: g, Index: -1}
	for i := range l.cand {
		until, leased := e.leases.until[i]
		switch {
		case told[i]:
			delete(e.leases.until, i)
		case !leased || !until.After(now):
			c.Index, c.X, c.Expires = i, l.cand[i], now.Add(lease)
			e.leases.until[i] = c.Expires
			m.mu.Lock()
			if c.Expires.After(e.leasedUntil) {
				e.leasedUntil = c.Expires // the cache keeps the leases
			}
			m.mu.Unlock()
			return c, nil
		case c.Expires.IsZero() || until.Before(c.Expires):
			c.Expires = until
		}
	}
	return c, nil
}
