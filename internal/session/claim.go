package session

import (
	"context"
	"sync"
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

// Lease bounds, and the longest worker id.
const (
	DefaultLease = time.Hour
	MaxLease     = 30 * 24 * time.Hour
	MaxWorkerID  = 128
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

// leases are the claims of one session's generation: the end of each
// candidate's lease and the worker that holds it (if it said), by index.
type leases struct {
	generation int
	until      map[int]time.Time
	worker     map[int]string
}

// leaseTable holds the leases of every session, apart from the cache of
// decoded sessions, which may forget a session at any time.
type leaseTable struct {
	mu      sync.Mutex
	by      map[string]*leases
	sweepAt int // sweep out the expired when the table grows past this
}

// of returns the leases of session id's generation g, new if it has none.
// It sweeps out sessions whose leases have all run out once the table has
// doubled since the last sweep. t.mu is held.
func (t *leaseTable) of(id string, g int, now time.Time) *leases {
	if t.by == nil {
		t.by = map[string]*leases{}
	}
	if len(t.by) >= t.sweepAt {
		for k, ls := range t.by {
			if ls.lastEnd().Before(now) {
				delete(t.by, k)
			}
		}
		t.sweepAt = 2*len(t.by) + 64
	}
	ls := t.by[id]
	if ls == nil || ls.generation != g {
		ls = &leases{generation: g, until: map[int]time.Time{}, worker: map[int]string{}}
		t.by[id] = ls
	}
	return ls
}

func (t *leaseTable) forget(id string) {
	t.mu.Lock()
	delete(t.by, id)
	t.mu.Unlock()
}

// lastEnd is when the last lease of ls runs out.
func (ls *leases) lastEnd() time.Time {
	var last time.Time
	for _, u := range ls.until {
		if u.After(last) {
			last = u
		}
	}
	return last
}

// Claim leases a candidate of session id's pending generation that has no
// value and no unexpired lease (the one of lowest index) for lease (0 =
// DefaultLease). If every candidate without a value is leased, the Claim
// has Index -1.
//
// A worker that names itself (worker, 1 to MaxWorkerID visible ASCII
// characters; "" = anonymous) holds one lease at a time: while its lease
// runs and the candidate has no value, its claims answer that lease again,
// renewed to lease from now if that is later. So a claim sent again after
// a lost answer leases nothing more, and a worker whose evaluation
// outlasts its lease keeps it by claiming again.
func (m *Manager) Claim(ctx context.Context, id string, lease time.Duration, worker string) (Claim, error) {
	return m.claim(ctx, id, lease, worker, -1, -1)
}

// Renew leases candidate index of generation to worker, which evaluates it:
// it renews the worker's lease of it to lease from now (if that is later),
// or leases it to the worker again when it has no running lease, as after a
// restart of the server, which forgets the leases. Without it a worker's
// renewal (a Claim with its id) after a restart would lease it another
// candidate and hold that one from the others while evaluating its own.
// The worker holds no other lease of the generation after it.
//
// It is a conflict if generation is not pending, the candidate has a
// value, or another worker holds a running lease of it (the restart let
// that one claim it: both evaluate it, and the first value told stays).
func (m *Manager) Renew(ctx context.Context, id string, generation, index int, lease time.Duration, worker string) (Claim, error) {
	if worker == "" {
		return Claim{}, errorf(CodeInvalid, "renewing the lease of candidate %d needs the worker's id", index)
	}
	if index < 0 {
		return Claim{}, errorf(CodeOutOfRange, "index %d, want at least 0", index)
	}
	return m.claim(ctx, id, lease, worker, generation, index)
}

// claim is Claim (index < 0) and Renew.
func (m *Manager) claim(ctx context.Context, id string, lease time.Duration, worker string, generation, index int) (Claim, error) {
	if lease == 0 {
		lease = DefaultLease
	}
	if lease < time.Second || lease > MaxLease {
		return Claim{}, errorf(CodeOutOfRange, "lease %v, want 1s to %v", lease, MaxLease)
	}
	if err := checkToken("worker id", worker, MaxWorkerID); err != nil {
		return Claim{}, err
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
	g, now := l.opt.Generation(), m.now()
	told := map[int]bool{}
	if p := l.meta.Partial; p != nil && p.Generation == g {
		for _, i := range p.Indices {
			told[i] = true
		}
	}
	if l.cand == nil {
		l.cand = l.opt.Ask()
	}
	m.leases.mu.Lock()
	defer m.leases.mu.Unlock()
	ls := m.leases.of(id, g, now)
	if index >= 0 {
		return ls.renew(g, now, lease, worker, generation, index, told, l.cand)
	}
	if worker != "" {
		for i, w := range ls.worker {
			if w == worker && !told[i] && ls.until[i].After(now) {
				if until := now.Add(lease); until.After(ls.until[i]) {
					ls.until[i] = until // renewed
				}
				return Claim{Generation: g, Index: i, X: l.cand[i], Expires: ls.until[i]}, nil
			}
		}
	}
	c := Claim{Generation: g, Index: -1}
	for i := range l.cand {
		until, leased := ls.until[i]
		switch {
		case told[i]:
			delete(ls.until, i)
			delete(ls.worker, i)
		case !leased || !until.After(now):
			c.Index, c.X, c.Expires = i, l.cand[i], now.Add(lease)
			ls.until[i] = c.Expires
			if worker != "" {
				ls.worker[i] = worker
			} else {
				delete(ls.worker, i)
			}
			return c, nil
		case c.Expires.IsZero() || until.Before(c.Expires):
			c.Expires = until
		}
	}
	return c, nil
}

// renew is Renew's lease of candidate index of generation g (pending) to
// worker, until now + lease or its running lease's end if later.
func (ls *leases) renew(g int, now time.Time, lease time.Duration, worker string, generation, index int, told map[int]bool, cand [][]float64) (Claim, error) {
	switch {
	case generation != g:
		return Claim{}, errorf(CodeConflict, "generation %d is not pending (generation %d is)", generation, g)
	case index >= len(cand):
		return Claim{}, errorf(CodeOutOfRange, "index %d, want below the population size %d", index, len(cand))
	case told[index]:
		return Claim{}, errorf(CodeConflict, "candidate %d of generation %d has its value already", index, g)
	case ls.until[index].After(now) && ls.worker[index] != worker:
		return Claim{}, errorf(CodeConflict, "candidate %d of generation %d is leased to another worker until %s", index, g, ls.until[index].UTC().Format(time.RFC3339))
	}
	for i, w := range ls.worker { // one lease at a time
		if w == worker && i != index {
			delete(ls.worker, i)
			delete(ls.until, i)
		}
	}
	until := now.Add(lease)
	if ls.worker[index] == worker && ls.until[index].After(until) {
		until = ls.until[index]
	}
	ls.until[index], ls.worker[index] = until, worker
	return Claim{Generation: g, Index: index, X: cand[index], Expires: until}, nil
}
