package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// maxAttempts bounds the loads and writes of one update: each failed
// attempt means another writer changed the session meanwhile.
const maxAttempts = 8

// A change is what an operation does to a session: a function of the
// loaded session only (the protocol's functions are pure; a tell advances
// l.opt in place, which is why a failed write drops the cached session).
// It returns the write to make, nil for none.
type change func(l *loaded) (*write, error)

// write is the outcome of a change.
type write struct {
	// meta is the next record's meta (stamped and summarized by the
	// write); nil = the record stays.
	meta *meta
	// state: the optimizer changed, its state is written too (else the
	// meta only: a partial tell, a stop).
	state bool
	hist  *HistoryEntry // the told generation's history, with state

	// leases, when not nil, is the Store.UpdateLeases of generation
	// leaseGen that the change makes (a claim, a renewal) instead of a
	// record.
	leases   func(now time.Time, cur []Lease) ([]Lease, error)
	leaseGen int

	del bool // the session is deleted

	// For Options.OnEvent: the generation applied, if any; a stop request.
	told *HistoryRecord
	stop bool
}

// stateBufs holds the buffers states are encoded in for a write: the store
// keeps no byte of a record after Put, so a buffer serves again once the
// write has returned (half a megabyte a tell at n = 100).
var stateBufs = sync.Pool{New: func() any { return new([]byte) }}

// update is the one way a session changes: with e held (the session's
// lock in this process), it loads session id (the cached one only if the
// store's version is still its own), applies fn and writes the outcome
// with a compare-and-swap on the version; when another writer came first
// it starts over from the store, up to maxAttempts times. It returns the
// session as written (nil once deleted). what names the operation in
// errors.
//
// A cached session is first tried as it is: a write's compare-and-swap
// confirms the version as Store.Version would, so a tell on a current cache
// costs one round trip to the store, not two. An outcome that writes
// nothing (an error, a retried tell) rests on the cache alone, and a lease
// is written without a compare-and-swap, so these go ahead only once the
// store confirms the cache (Store.Version, or NewerGetter.GetNewer, which
// returns the stored session at once when the cache is stale); else the
// update starts over from the store.
func (m *Manager) update(ctx context.Context, e *entry, id, what string, fn change) (*loaded, error) {
	optimistic := e.l != nil
	var fresh *loaded // loaded by the check of an optimistic attempt
	pendingGen := -1  // as last loaded
	for range maxAttempts {
		var (
			l   *loaded
			err error
		)
		switch {
		case fresh != nil:
			l, fresh = fresh, nil
		case optimistic:
			l = e.l
		default:
			if l, err = m.load(ctx, e, id); err != nil {
				return nil, err
			}
		}
		pendingGen = l.opt.Status().Generation
		w, err := fn(l)
		// Leases are not written with a compare-and-swap of the version:
		// they too need the check first.
		if optimistic && (err != nil || w == nil || w.leases != nil) {
			optimistic = false
			cur, lerr := m.load(ctx, e, id) // e.l is l: l if current
			if lerr != nil {
				return nil, lerr
			}
			if cur != l {
				fresh = cur // stale: apply fn again to the stored session
				continue
			}
		}
		optimistic = false
		if err != nil {
			var se *Error
			if !errors.As(err, &se) {
				e.l = nil // the change may have left l half way
				return nil, internal(what, err)
			}
			return nil, err
		}
		if w == nil {
			return l, nil
		}
		err = m.write(ctx, id, l, w)
		if err == nil {
			m.written(id, l, w)
			if w.del {
				e.l = nil
				return nil, nil
			}
			return l, nil
		}
		var se *Error
		if errors.As(err, &se) {
			return nil, se // a lease function refused: nothing was written
		}
		e.l = nil
		switch {
		case errors.Is(err, ErrVersion):
			continue // written by someone else: start over from the store
		case errors.Is(err, ErrNoRecord):
			return nil, errorf(CodeNotFound, "no session %q", id)
		}
		return nil, internal(what, err)
	}
	ce := errorf(CodeConflict, "session %s was changed by other writers %d times while it was being changed (%s): try again", id, maxAttempts, what)
	ce.Generation = pendingGen // at the last attempt: the others may have told it since
	return nil, ce
}

// write makes w of l, a session of version l.version, and brings l up to
// the version written. The write must not be abandoned half way by a
// client that goes away: ctx's cancellation does not reach it.
func (m *Manager) write(ctx context.Context, id string, l *loaded, w *write) error {
	ctx = context.WithoutCancel(ctx)
	switch {
	case w.del:
		return m.store.Delete(ctx, id, l.version)
	case w.leases != nil:
		if err := m.store.UpdateLeases(ctx, id, uint64(w.leaseGen), w.leases); err != nil {
			return err
		}
		// The leases are of the generation l holds pending only if no
		// other writer told it meanwhile.
		v, err := m.store.Version(ctx, id)
		if err == nil && v != l.version {
			return fmt.Errorf("leases of generation %d: %w", w.leaseGen, ErrVersion)
		}
		return err
	}
	md := w.meta
	md.UpdatedAt = m.now().UTC()
	md.summarize(l.opt)
	mb, err := encodeMeta(md)
	if err != nil {
		return fmt.Errorf("encode session record: %w", err)
	}
	rec := Record{ID: id, Version: l.version, Meta: mb}
	if w.state {
		buf := stateBufs.Get().(*[]byte)
		defer stateBufs.Put(buf)
		state, err := l.opt.AppendBinary((*buf)[:0])
		*buf = state
		if err != nil {
			return fmt.Errorf("encode state: %w", err)
		}
		rec.State = state
	}
	v, err := m.store.Put(ctx, rec, w.hist)
	if err != nil {
		return err
	}
	l.version, l.meta = v, md
	if w.state {
		l.cand = nil // of the batch told
		l.size = heldBytes(l.opt)
	}
	return nil
}

// nextMeta is a copy of l's meta to change for the next write.
func nextMeta(l *loaded) *meta {
	md := *l.meta
	return &md
}

// Delete removes session id, its history and its leases.
func (m *Manager) Delete(ctx context.Context, id string) error {
	e := m.acquire(id)
	defer m.release(e)
	_, err := m.update(ctx, e, id, "delete session", func(*loaded) (*write, error) {
		return &write{del: true}, nil
	})
	return err
}
