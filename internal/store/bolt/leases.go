package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/selfcma/selfcma/internal/session"
	bbolt "go.etcd.io/bbolt"
)

// The leases bucket holds one value a session: the generation its leases
// are of, then each lease (see the layout in store.go). A session holds
// leases of one generation at a time: a write of a later generation's
// replaces them, one of an earlier generation's fails, and Put of a told
// generation's history drops them.

// leaseTable holds the leases while the file is open: a lease write
// changes memory only and waits for no commit, let alone an fsync (DESIGN:
// a lost lease costs an evaluation twice, never a value). Open reads the
// leases the file holds, Close writes them back; a crash loses those
// taken since Open, and the file's, older, stand again until they run
// out. Put of a told generation and Delete drop a session's leases here
// as in the file.
type leaseTable struct {
	mu    sync.Mutex
	m     map[string]leaseSet // nil: read-only, the file's leases
	dirty bool                // UpdateLeases changed m since Open
}

// leaseSet is the leases of one session, all of generation g.
type leaseSet struct {
	g  uint64
	ls []session.Lease
}

// dropTo drops id's leases if they are of a generation ≤ g; all of them
// if g is nil.
func (t *leaseTable) dropTo(id string, g *uint64) {
	t.mu.Lock()
	if cur, ok := t.m[id]; ok && (g == nil || cur.g <= *g) {
		delete(t.m, id)
	}
	t.mu.Unlock()
}

// loadLeases reads the file's leases into the table. A value that does
// not read is left out (Check reports it); if the bucket cannot be read at
// all (bbolt panics on some damage), the table starts empty.
func (s *Store) loadLeases() {
	m := make(map[string]leaseSet)
	func() {
		defer func() {
			if recover() != nil {
				m = make(map[string]leaseSet)
			}
		}()
		s.db.View(func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketLeases).ForEach(func(k, v []byte) error {
				if g, ls, err := splitLeases(v); err == nil {
					m[string(k)] = leaseSet{g: g, ls: ls}
				}
				return nil
			})
		})
	}()
	s.leases.m = m
}

// saveLeases writes the table to the file, in place of what it holds, in
// one transaction (Close), if a lease changed since Open: a file whose
// leases nobody touched is left as it is (a server that refuses a damaged
// file must not change it).
func (s *Store) saveLeases() error {
	s.leases.mu.Lock()
	defer s.leases.mu.Unlock()
	if !s.leases.dirty {
		return nil
	}
	return s.updateFolding(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketLeases)
		var stale [][]byte
		b.ForEach(func(k, _ []byte) error {
			stale = append(stale, bytes.Clone(k))
			return nil
		})
		for _, k := range stale {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		now := s.now()
		for id, set := range s.leases.m {
			live := slices.DeleteFunc(slices.Clone(set.ls), func(l session.Lease) bool { return !l.Expires.After(now) })
			if len(live) == 0 || storedVersion(tx, []byte(id)) == 0 {
				continue
			}
			v, err := appendLeases(nil, set.g, live)
			if err != nil {
				return err
			}
			if err := b.Put([]byte(id), v); err != nil {
				return err
			}
		}
		return nil
	})
}

// UpdateLeases implements session.Store. The leases are timed by the
// store's clock (Options.Now) and held in memory (leaseTable): the write
// takes no transaction. Leases of a generation above g stay: the write
// fails with session.ErrVersion (g was told meanwhile).
func (s *Store) UpdateLeases(ctx context.Context, id string, g uint64, fn func(now time.Time, cur []session.Lease) ([]session.Lease, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	t := &s.leases
	t.mu.Lock()
	defer t.mu.Unlock()
	// Under t.mu: a Delete drops the leases after its commit, so that a
	// session deleted meanwhile either is seen gone here or loses what
	// this writes.
	if v, err := s.Version(ctx, id); err != nil {
		return err
	} else if v == 0 {
		return fmt.Errorf("store: leases %s: %w", id, session.ErrNoRecord)
	}
	cur, ok := t.m[id]
	if ok && cur.g > g {
		return fmt.Errorf("store: leases %s of generation %d: generation %d has leases: %w", id, g, cur.g, session.ErrVersion)
	}
	now := s.now()
	var live []session.Lease
	if ok && cur.g == g {
		live = slices.DeleteFunc(slices.Clone(cur.ls), func(l session.Lease) bool { return !l.Expires.After(now) })
	}
	next, err := fn(now, slices.Clone(live))
	if err != nil {
		return err
	}
	for _, l := range next {
		if l.Index < 0 || l.Index > 1<<31-1 || len(l.Worker) > 255 {
			return fmt.Errorf("store: leases %s: lease of candidate %d to a worker of %d bytes", id, l.Index, len(l.Worker))
		}
	}
	if ok && cur.g == g && session.SameLeases(cur.ls, next) {
		return nil
	}
	t.dirty = true
	if len(next) == 0 {
		delete(t.m, id)
		return nil
	}
	t.m[id] = leaseSet{g: g, ls: slices.Clone(next)}
	return nil
}

// Leases implements session.Store.
func (s *Store) Leases(ctx context.Context, id string, g uint64) ([]session.Lease, time.Time, error) {
	if err := ctx.Err(); err != nil {
		return nil, time.Time{}, err
	}
	if s.leases.m == nil { // read-only: the file's
		return s.fileLeases(id, g)
	}
	t := &s.leases
	t.mu.Lock()
	defer t.mu.Unlock()
	if v, err := s.Version(ctx, id); err != nil {
		return nil, time.Time{}, err
	} else if v == 0 {
		return nil, time.Time{}, fmt.Errorf("store: leases %s: %w", id, session.ErrNoRecord)
	}
	now := s.now()
	cur, ok := t.m[id]
	if !ok || cur.g != g {
		return nil, now, nil
	}
	return slices.DeleteFunc(slices.Clone(cur.ls), func(l session.Lease) bool { return !l.Expires.After(now) }), now, nil
}

// fileLeases is Leases of the file (a store opened read-only).
func (s *Store) fileLeases(id string, g uint64) ([]session.Lease, time.Time, error) {
	var (
		out []session.Lease
		now time.Time
	)
	err := s.db.View(func(tx *bbolt.Tx) error {
		key := []byte(id)
		if storedVersion(tx, key) == 0 {
			return fmt.Errorf("store: leases %s: %w", id, session.ErrNoRecord)
		}
		now = s.now()
		var err error
		out, err = leasesOf(tx, key, g, now)
		return err
	})
	return out, now, err
}

// leasesOf returns the leases of generation g of id that run after now.
func leasesOf(tx *bbolt.Tx, id []byte, g uint64, now time.Time) ([]session.Lease, error) {
	v := tx.Bucket(bucketLeases).Get(id)
	if v == nil {
		return nil, nil
	}
	lg, all, err := splitLeases(v)
	if err != nil {
		return nil, fmt.Errorf("store: leases %s: %w", id, err)
	}
	if lg != g {
		return nil, nil
	}
	return slices.DeleteFunc(all, func(l session.Lease) bool { return !l.Expires.After(now) }), nil
}

// dropLeasesTo drops the leases of id if they are of a generation ≤ g.
func dropLeasesTo(tx *bbolt.Tx, id []byte, g uint64) error {
	b := tx.Bucket(bucketLeases)
	v := b.Get(id)
	if len(v) >= 8 && binary.BigEndian.Uint64(v) > g {
		return nil
	}
	if v == nil {
		return nil
	}
	return b.Delete(id)
}

// appendLeases appends the value of generation g's leases ls to dst.
func appendLeases(dst []byte, g uint64, ls []session.Lease) ([]byte, error) {
	dst = binary.BigEndian.AppendUint64(dst, g)
	for _, l := range ls {
		if l.Index < 0 || l.Index > 1<<31-1 || len(l.Worker) > 255 {
			return nil, fmt.Errorf("lease of candidate %d to a worker of %d bytes", l.Index, len(l.Worker))
		}
		dst = binary.BigEndian.AppendUint32(dst, uint32(l.Index))
		dst = binary.BigEndian.AppendUint64(dst, uint64(l.Expires.UnixNano()))
		dst = append(dst, byte(len(l.Worker)))
		dst = append(dst, l.Worker...)
	}
	return dst, nil
}

// splitLeases reads a value of the leases bucket (copying out of it).
func splitLeases(v []byte) (uint64, []session.Lease, error) {
	if len(v) < 8 {
		return 0, nil, fmt.Errorf("value of %d bytes", len(v))
	}
	g, r := binary.BigEndian.Uint64(v), v[8:]
	var out []session.Lease
	for len(r) > 0 {
		if len(r) < 13 || len(r) < 13+int(r[12]) {
			return 0, nil, fmt.Errorf("lease of %d bytes", len(r))
		}
		n := int(r[12])
		out = append(out, session.Lease{
			Index:   int(binary.BigEndian.Uint32(r)),
			Expires: time.Unix(0, int64(binary.BigEndian.Uint64(r[4:]))).UTC(),
			Worker:  string(r[13 : 13+n]),
		})
		r = r[13+n:]
	}
	return g, out, nil
}
