package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations are the schema's versions: migrations[i] takes the database
// from version i to i+1, in one transaction with its row of
// schema_migrations. Append; never edit one that has shipped.
var migrations = [...]string{
	// 1: the sessions, their history, idempotency keys and leases. Ids and
	// keys are bytea: any bytes the server hands a store (text would refuse
	// a NUL or bytes that are not UTF-8, a 500 for a bad URL), sorted as
	// bbolt sorts its keys. The state is
	// incompressible (floats and a generator's state): STORAGE EXTERNAL
	// keeps it out of line without pglz's attempt to compress it, which
	// cost 1.1 ms at 12 KB and 6.6 ms at 490 KB per commit here. No foreign
	// keys: a Put's CTE writes the history only with the session row, and
	// Delete removes all of a session in one transaction; Check looks for
	// orphans.
	`CREATE TABLE sessions (
		id      bytea PRIMARY KEY,
		version bigint NOT NULL CHECK (version > 0),
		meta    bytea NOT NULL,
		state   bytea NOT NULL
	);
	ALTER TABLE sessions ALTER COLUMN state SET STORAGE EXTERNAL;
	CREATE TABLE history (
		session    bytea NOT NULL,
		generation bigint NOT NULL CHECK (generation >= 0),
		data       bytea NOT NULL,
		PRIMARY KEY (session, generation)
	);
	CREATE TABLE idempotency_keys (
		key     bytea PRIMARY KEY,
		session bytea NOT NULL UNIQUE,
		data    bytea NOT NULL
	);
	CREATE TABLE leases (
		session    bytea NOT NULL,
		generation bigint NOT NULL,
		index      integer NOT NULL,
		worker     bytea NOT NULL,
		expires_at timestamptz NOT NULL
	);
	CREATE INDEX leases_session ON leases (session, generation);`,

	// 2: a lease belongs to a stored session. Before UpdateLeases locked
	// the session's row, a claim racing a Delete could leave its lease
	// behind (and -check reported it for ever): drop those, and let the
	// database keep it so (a Delete's cascade; Delete drops them itself
	// too). An insert checks the session's row FOR KEY SHARE, the lock
	// UpdateLeases takes anyway.
	`DELETE FROM leases l WHERE NOT EXISTS (SELECT FROM sessions s WHERE s.id = l.session);
	ALTER TABLE leases ADD CONSTRAINT leases_session_fkey
		FOREIGN KEY (session) REFERENCES sessions (id) ON DELETE CASCADE;`,

	// 3: a session row of up to 8 KB keeps its state in line. With the
	// default threshold (2 KB) the state of a small session (6 KB for
	// CMA-ES at n = 10) went to the TOAST table: every Put inserted its
	// chunks there, with their index entries, and deleted the old ones.
	// Rows written before keep their place until their next Put.
	`ALTER TABLE sessions SET (toast_tuple_target = 8160);`,

	// 4: a large state in chunks of its own (chunks.go): a session row
	// whose meta and state are over 8000 bytes holds an empty state and
	// the number of its chunks, rows of state_chunks written in place by
	// HOT updates (fillfactor 50: room for a second version of a chunk on
	// its page) instead of a new TOAST value a Put. Both columns PLAIN and
	// toast_tuple_target at its most: a chunk row is never compressed nor
	// moved out of line, its session id included. The foreign key costs a
	// Put nothing once its chunks exist (an update that keeps the key
	// checks nothing: BenchmarkPut at 91 KB, 0.64-0.71 ms with it,
	// 0.65-0.69 without) and lets a Delete drop them. Rows written before
	// keep chunks = 0 and their state where it is until their next Put.
	`ALTER TABLE sessions ADD COLUMN chunks integer NOT NULL DEFAULT 0;
	CREATE TABLE state_chunks (
		session bytea NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
		seq     integer NOT NULL CHECK (seq >= 0),
		data    bytea NOT NULL,
		PRIMARY KEY (session, seq)
	) WITH (fillfactor = 50, toast_tuple_target = 8160);
	ALTER TABLE state_chunks ALTER COLUMN session SET STORAGE PLAIN,
		ALTER COLUMN data SET STORAGE PLAIN;`,
}

// SchemaVersion is the schema this package writes: the number of
// migrations (a constant: migrations is an array).
const SchemaVersion = len(migrations)

// migrationLock is the key of the advisory lock that serializes the
// migrations of servers starting at once on one database.
const migrationLock = 0x73656c66636d61 // "selfcma"

// migrate brings the database to SchemaVersion under the advisory lock; a
// database of a later schema is refused.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	pc, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection of its own, closed at the end: the session's advisory
	// lock goes with it whatever happens, and never back into the pool.
	conn := pc.Hijack()
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLock); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return err
	}
	v, err := schemaVersion(ctx, conn)
	if err != nil {
		return err
	}
	if v > SchemaVersion {
		return fmt.Errorf("the database is of schema %d, later than this build's %d", v, SchemaVersion)
	}
	for ; v < SchemaVersion; v++ {
		tx, err := conn.Begin(ctx)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, migrations[v]); err != nil {
			tx.Rollback(ctx)
			return fmt.Errorf("migration %d: %w", v+1, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version) VALUES ($1)", v+1); err != nil {
			tx.Rollback(ctx)
			return fmt.Errorf("migration %d: %w", v+1, err)
		}
		if err := tx.Commit(ctx); err != nil {
			return fmt.Errorf("migration %d: %w", v+1, err)
		}
	}
	return nil
}

// schemaVersion is the database's version, 0 for a new one.
func schemaVersion(ctx context.Context, conn *pgx.Conn) (int, error) {
	var v int
	err := conn.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v)
	return v, err
}
