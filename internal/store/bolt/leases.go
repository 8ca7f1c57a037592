package bolt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/selfcma/selfcma/internal/session"
	bbolt "go.etcd.io/bbolt"
)

// The leases bucket holds one value a session: the generation its leases
// are of, then each lease (see the layout in store.go). A session holds
// leases of one generation at a time: a write of a later generation's
// replaces them, one of an earlier generation's fails, and Put of a told
// generation's history drops them.

// errLeasesUnchanged ends an UpdateLeases whose fn returned the leases it
// was given: nothing is written, and a transaction of such writes only is
// not committed (a claim with no candidate free, a renewal that moves no
// expiry).
var errLeasesUnchanged = errors.New("leases unchanged")

// leaseFnError carries the error of an UpdateLeases fn through the commit,
// which takes it for an expected one (nothing written yet): the other
// writes of the transaction go on.
type leaseFnError struct{ err error }

func (e *leaseFnError) Error() string { return e.err.Error() }

// UpdateLeases implements session.Store. The leases are timed by the
// store's clock (Options.Now); the write is group committed with the
// others. Leases of a generation above g stay: the write fails with
// session.ErrVersion (g was told meanwhile). If fn returns the leases it
// was given (in any order), nothing is written.
func (s *Store) UpdateLeases(ctx context.Context, id string, g uint64, fn func(now time.Time, cur []session.Lease) ([]session.Lease, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	key := []byte(id)
	err := s.write(func(tx *bbolt.Tx) error {
		if storedVersion(tx, key) == 0 {
			return fmt.Errorf("store: leases %s: %w", id, session.ErrNoRecord)
		}
		if v := tx.Bucket(bucketLeases).Get(key); len(v) >= 8 && binary.BigEndian.Uint64(v) > g {
			return fmt.Errorf("store: leases %s of generation %d: generation %d has leases: %w", id, g, binary.BigEndian.Uint64(v), session.ErrVersion)
		}
		now := s.now()
		cur, err := leasesOf(tx, key, g, now)
		if err != nil {
			return err
		}
		next, err := fn(now, slices.Clone(cur))
		if err != nil {
			return &leaseFnError{err}
		}
		if session.SameLeases(cur, next) {
			return errLeasesUnchanged
		}
		if len(next) == 0 {
			return tx.Bucket(bucketLeases).Delete(key)
		}
		v, err := appendLeases(nil, g, next)
		if err != nil {
			return err
		}
		return tx.Bucket(bucketLeases).Put(key, v)
	})
	if fe := (*leaseFnError)(nil); errors.As(err, &fe) {
		return fe.err
	}
	if errors.Is(err, errLeasesUnchanged) {
		return nil
	}
	if err != nil && !expected(err) {
		return fmt.Errorf("store: leases %s: %w", id, err)
	}
	return err
}

// Leases implements session.Store.
func (s *Store) Leases(ctx context.Context, id string, g uint64) ([]session.Lease, time.Time, error) {
	if err := ctx.Err(); err != nil {
		return nil, time.Time{}, err
	}
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
