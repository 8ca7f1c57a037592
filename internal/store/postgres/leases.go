package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/selfcma/selfcma/internal/session"
)

// UpdateLeases implements session.Store. Leases of a generation above g
// mean that g was told meanwhile (another server asks g+1): then it
// writes nothing and returns an error wrapping session.ErrVersion, so
// that a late claim in g does not drop g+1's running leases. Otherwise
// it replaces the leases of generations ≤ g.
//
// A claim makes one: two round trips, the transaction's BEGIN, locks and
// read in one batch, its write and COMMIT in the other (asynchronous
// commit: a lost lease costs an evaluation twice, never a value). A
// failure leaves the connection in the transaction, and the pool drops a
// connection it gets back so.
func (s *Store) UpdateLeases(ctx context.Context, id string, g uint64, fn func(time.Time, []session.Lease) ([]session.Lease, error)) (err error) {
	ctx, done := s.call(ctx)
	defer func() { err = done(err) }()
	if s.readOnly {
		return errSnapshotWrite
	}
	if g > math.MaxInt64 {
		return fmt.Errorf("postgres: leases of %s: generation %d", id, g)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: leases of %s: %w", id, err)
	}
	defer conn.Release()
	cur, now, err := lockLeases(ctx, conn.Conn(), id, g)
	if err == nil {
		var next []session.Lease
		if next, err = fn(now, slices.Clone(cur)); err != nil {
			conn.Exec(ctx, "ROLLBACK")
			return err // fn's, as is
		}
		err = writeLeases(ctx, conn.Conn(), id, g, cur, next)
	}
	if errors.Is(err, session.ErrNoRecord) || errors.Is(err, session.ErrVersion) {
		conn.Exec(ctx, "ROLLBACK")
		return err
	}
	if err != nil {
		return fmt.Errorf("postgres: leases of %s: %w", id, storageFull(rolledBack(err)))
	}
	return nil
}

// lockLeases begins the transaction of an UpdateLeases, takes its locks
// and reads id's unexpired leases of g, in one round trip.
func lockLeases(ctx context.Context, c *pgx.Conn, id string, g uint64) ([]session.Lease, time.Time, error) {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue("SET LOCAL synchronous_commit TO off")
	b.Queue("SELECT pg_advisory_xact_lock($1, $2)", int32(leaseLockClass), idHash(id))
	// The session's row, locked until the commit: a Delete of id waits
	// for this transaction (and drops the leases it writes), or this one
	// waits for the Delete and finds no row. KEY SHARE: a Put of id (an
	// update of the row's other columns) does not wait.
	b.Queue("SELECT 1 FROM sessions WHERE id = $1 FOR KEY SHARE", []byte(id))
	b.Queue(readLeases, []byte(id), int64(g))
	br := c.SendBatch(ctx, b)
	defer br.Close()
	for range 3 {
		if _, err := br.Exec(); err != nil {
			return nil, time.Time{}, err
		}
	}
	tag, err := br.Exec()
	if err != nil {
		return nil, time.Time{}, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, time.Time{}, err
	}
	cur, now, found, later, err := scanLeases(rows)
	if err == nil {
		err = br.Close()
	}
	switch {
	case err != nil:
		return nil, now, err
	case tag.RowsAffected() == 0 || !found:
		return nil, now, fmt.Errorf("postgres: leases of %s: %w", id, session.ErrNoRecord)
	case later:
		return nil, now, fmt.Errorf("postgres: leases of %s: generation %d, leases of a later one are stored: %w", id, g, session.ErrVersion)
	}
	return cur, now, nil
}

// writeLeases stores next as the leases of id's generation g in place of
// cur and commits, in one round trip; if next is cur, it only commits.
func writeLeases(ctx context.Context, c *pgx.Conn, id string, g uint64, cur, next []session.Lease) error {
	if session.SameLeases(next, cur) {
		_, err := c.Exec(ctx, "COMMIT") // nothing to write (a claim with no candidate free, a renewal that moves no expiry)
		return err
	}
	idx := make([]int32, len(next))
	workers := make([][]byte, len(next))
	exps := make([]time.Time, len(next))
	for i, l := range next {
		idx[i], workers[i], exps[i] = int32(l.Index), []byte(l.Worker), l.Expires
	}
	b := &pgx.Batch{}
	b.Queue("DELETE FROM leases WHERE session = $1 AND generation <= $2", []byte(id), int64(g))
	b.Queue(`INSERT INTO leases (session, generation, index, worker, expires_at)
		SELECT $1, $2, u.i, u.w, u.e FROM unnest($3::integer[], $4::bytea[], $5::timestamptz[]) AS u(i, w, e)`,
		[]byte(id), int64(g), idx, workers, exps)
	b.Queue("COMMIT")
	return c.SendBatch(ctx, b).Close()
}
