package session

import (
	"context"
	"errors"
	"time"
)

// Claims hand out the candidates of the pending generation one at a time,
// to workers that each evaluate one point and tell its value with a partial
// tell: a candidate is claimed for a lease, and handed out again, the same
// point, only when the lease has run out before its value arrived.
//
// Leases live in the store, timed by the store's clock: a lease taken
// through one server is honoured by every server sharing the store. A
// lease write waits for no disk sync (bbolt holds them in memory while
// open): a lease the store loses (a crash) costs an evaluation twice,
// never a value, since the values are persisted by the partial tells.

// Lease bounds, and the longest worker id. The default lease is short, so
// that the candidate of a worker that died is soon handed out again;
// workers that evaluate longer renew their lease every half lease.
const (
	DefaultLease = time.Minute
	MaxLease     = 30 * 24 * time.Hour
	MaxWorkerID  = 128
)

// CheckWorker checks a worker id as Claim does: what a request that claims
// after another change checks before making it.
func CheckWorker(worker string) error {
	return checkToken("worker id", worker, MaxWorkerID)
}

// Claim is a candidate handed out to one worker.
type Claim struct {
	Generation int
	Index      int       // the candidate's index in the batch; -1 if none is free
	X          []float64 // the candidate (shared with the batch: read only); nil if none is free
	Z          []float64 // a mixed session's integer values (mixed.go)
	C          []int     // a mixed session's categories
	// Expires is the end of the lease; if no candidate is free, the end of
	// the first lease to run out (one may be free sooner: when a value
	// arrives the generation may complete).
	Expires time.Time
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
// or leases it to the worker again when it has no running lease (it ran
// out, or the store lost it). Without it a worker's renewal (a Claim with
// its id) then would lease it another candidate and hold that one from the
// others while evaluating its own. The worker holds no other lease of the
// generation after it.
//
// It is a conflict if generation is not pending, the candidate has a
// value, or another worker holds a running lease of it (the lease ran out
// and let that one claim it: both evaluate it, and the first value told
// stays).
func (m *Manager) Renew(ctx context.Context, id string, generation, index int, lease time.Duration, worker string) (Claim, error) {
	if worker == "" {
		return Claim{}, errorf(CodeInvalid, "renewing the lease of candidate %d needs the worker's id", index)
	}
	if index < 0 {
		return Claim{}, errorf(CodeOutOfRange, "index %d, want at least 0", index)
	}
	return m.claim(ctx, id, lease, worker, generation, index)
}

// claim is Claim (index < 0) and Renew: the lease functions of leases.go,
// run by the update primitive inside Store.UpdateLeases.
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
	var (
		got    leased
		gotGen = -1 // the generation of got, once a lease is written
	)
	l, err := m.update(ctx, e, id, "claim", func(l *loaded) (*write, error) {
		if err := stoppedError(l.opt); err != nil {
			return nil, err
		}
		st := l.opt.Status()
		g := st.Generation
		told := toldIndices(l.meta.Partial, g, st.Params.Lambda)
		if gotGen == g && got.Index >= 0 && !told[got.Index] {
			// Another writer changed the session after the lease was
			// written (a partial tell through another server), but the
			// lease is still of a candidate without a value: it stands,
			// and claiming again would lease a second one.
			return nil, nil
		}
		return &write{leaseGen: g, leases: func(now time.Time, cur []Lease) ([]Lease, error) {
			gotGen = g
			if index >= 0 {
				next, r, err := renewLease(now, cur, told, g, generation, index, lease, worker)
				got = r
				return next, err
			}
			next, r := claimLease(now, cur, told, lease, worker)
			got = r
			return next, nil
		}}, nil
	})
	if err != nil {
		return Claim{}, err
	}
	c := Claim{Generation: l.opt.Status().Generation, Index: got.Index, Expires: got.Expires}
	if c.Index >= 0 {
		c.X = pending(l).Candidates[c.Index]
		if sp, ok := mixedSpace(l.opt); ok {
			c.X, c.Z, c.C = sp.split(c.X)
		}
	}
	return c, nil
}

// Release ends worker's lease of candidate index of generation, so that
// the candidate is handed out again at once (a worker that stops, or
// whose evaluation cannot finish). It reports whether the worker held a
// running lease of it; releasing a lease that ran out, was released, or
// whose generation was told since is no error (a release sent again after
// a lost answer answers false).
func (m *Manager) Release(ctx context.Context, id string, generation, index int, worker string) (bool, error) {
	if worker == "" {
		return false, errorf(CodeInvalid, "releasing the lease of candidate %d needs the worker's id", index)
	}
	if index < 0 {
		return false, errorf(CodeOutOfRange, "index %d, want at least 0", index)
	}
	if err := checkToken("worker id", worker, MaxWorkerID); err != nil {
		return false, err
	}
	e := m.acquire(id)
	defer m.release(e)
	released := false
	_, err := m.update(ctx, e, id, "release", func(l *loaded) (*write, error) {
		released = false
		if st := l.opt.Status(); st.Generation != generation || len(st.Stop) > 0 {
			return nil, nil // its generation is told: the lease is gone
		}
		return &write{leaseGen: generation, leases: func(now time.Time, cur []Lease) ([]Lease, error) {
			next, ok := releaseLease(now, cur, index, worker)
			released = ok
			return next, nil
		}}, nil
	})
	if err != nil {
		return false, err
	}
	return released, nil
}

// LeaseView is what a session's page shows of its claims: the running
// leases of the pending generation, and when the first runs out.
type LeaseView struct {
	Generation int
	Held       int       // running leases
	Free       int       // candidates with neither a value nor a running lease
	NextExpiry time.Time // the end of the first lease to run out; zero if none
}

// Leases returns the leases of session id's pending generation.
func (m *Manager) Leases(ctx context.Context, id string) (LeaseView, error) {
	e := m.acquire(id)
	l, err := m.load(ctx, e, id)
	var g, lambda int
	var told []bool
	if err == nil {
		st := l.opt.Status()
		g, lambda = st.Generation, st.Params.Lambda
		told = toldIndices(l.meta.Partial, g, lambda)
	}
	m.release(e)
	if err != nil {
		return LeaseView{}, err
	}
	ls, now, err := m.store.Leases(ctx, id, uint64(g))
	if err != nil {
		if errors.Is(err, ErrNoRecord) {
			return LeaseView{}, errorf(CodeNotFound, "no session %q", id)
		}
		return LeaseView{}, internal("read leases", err)
	}
	v := LeaseView{Generation: g}
	leasedIdx := make(map[int]bool, len(ls))
	for _, x := range ls {
		if x.Index < 0 || x.Index >= lambda || told[x.Index] || !x.Expires.After(now) {
			continue
		}
		leasedIdx[x.Index] = true
		v.Held++
		if v.NextExpiry.IsZero() || x.Expires.Before(v.NextExpiry) {
			v.NextExpiry = x.Expires
		}
	}
	for i, t := range told {
		if !t && !leasedIdx[i] {
			v.Free++
		}
	}
	return v, nil
}
