package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// reader is what the reads of a Store need: the pool, or the transaction
// of a snapshot.
type reader interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// errSnapshotWrite is the error of a write of a ReadSnapshot's store.
var errSnapshotWrite = errors.New("postgres: a snapshot's store only reads")

// ReadSnapshot returns a Store whose reads (Get, List, History, Leases,
// Check, ...) all see one snapshot of the database, a transaction
// REPEATABLE READ, READ ONLY, on a connection of its own, and the function
// that ends it: -check reads a database in use as a whole, as it was at one
// instant, so that a tell committed meanwhile shows no false damage (a
// history ahead of its session). The snapshot's store is for one
// goroutine, reads only, and has no deadline.
func (s *Store) ReadSnapshot(ctx context.Context) (*Store, func(), error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: snapshot: %w", err)
	}
	snap := &Store{pool: s.pool, db: tx, getSQL: s.getSQL, newerSQL: s.newerSQL, readOnly: true}
	return snap, func() { tx.Rollback(context.Background()) }, nil
}
