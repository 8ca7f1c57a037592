// Package postgres is the PostgreSQL implementation of session.Store: the
// store that several servers share. It uses pgx (pgxpool).
//
// Tables (schema version 4; migrate.go keeps the versions, in the table
// schema_migrations):
//
//	sessions          id, version, meta, state (STORAGE EXTERNAL), chunks
//	                  (the number of the state's chunks; 0: the state is
//	                  in the row, as it is while meta and state take up
//	                  to 8000 bytes, under toast_tuple_target)
//	state_chunks      session, seq, data (a larger state in chunks of
//	                  3900 bytes, updated in place: chunks.go)
//	history           session, generation, data
//	idempotency_keys  key, session, data
//	leases            session, generation, index, worker, expires_at
//
// The session column of state_chunks and leases references sessions, ON
// DELETE CASCADE. A Put is one statement, so one round trip and one
// transaction: a CTE that updates the session row where its version is the
// one read (or inserts a new one), and, only if it did, writes the state's
// chunks and deletes those beyond them, inserts the history entry and
// drops the leases of the told generations. Zero rows is a version
// conflict; a unique violation on idempotency_keys is a key taken. A Put
// without a state leaves the state column and the chunks alone, so a
// partial tell or a stop rewrites only the small meta. A read takes the
// session row and its chunks in one statement, one snapshot.
//
// Leases are timed by the database's clock (clock_timestamp()), so that
// every server judges them alike; an UpdateLeases is a transaction that
// takes an advisory lock on the session's id (its hash) and a KEY SHARE lock
// on the session's row (a Delete waits for it, or it for the Delete; a Put
// does not), and commits with synchronous_commit off: a lease lost in a crash of the database costs an
// evaluation twice, never a value.
//
// The Puts of stored sessions that arrive together are written in one
// transaction (group.go), as the bbolt store groups its commits.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/selfcma/selfcma/internal/session"
)

// Store is a session.Store in a PostgreSQL database. It is safe for
// concurrent use, by any number of processes sharing the database.
type Store struct {
	pool     *pgxpool.Pool
	db       reader // the reads' pool, or a snapshot's transaction (ReadSnapshot)
	onCommit func(writes int, took time.Duration)
	group    *grouper // the Puts of stored sessions (group.go)
	// The statements of Get and GetNewer (readSQL): of a schema before 4,
	// without chunks, for a database opened with NoMigrate.
	getSQL, newerSQL string
	timeout          time.Duration // Options.CallTimeout
	readOnly         bool          // a ReadSnapshot's: every write fails
}

var (
	_ session.Store       = (*Store)(nil)
	_ session.Importer    = (*Store)(nil)
	_ session.Checker     = (*Store)(nil)
	_ session.NewerGetter = (*Store)(nil)
)

// Options tune Open.
type Options struct {
	// OnCommit, when not nil, is called after every Put and Delete that
	// committed, with 1 and the time it took (cmd/server makes metrics of
	// it, as of the bbolt store's commits).
	OnCommit func(writes int, took time.Duration)
	// GroupWriters is the most groups of Puts written at once (group.go);
	// 0 means DefaultGroupWriters.
	GroupWriters int
	// NoMigrate leaves the schema as it is (the server's -check, which
	// changes nothing): Open fails on a database without the tables, and
	// Check reports a schema other than SchemaVersion. The reads of such
	// a store work on a database of schema 1 to 3 too; its writes need
	// SchemaVersion.
	NoMigrate bool
	// CallTimeout, when positive, is the deadline of every call of the
	// Store (Get, Put, ...), connecting included: past it the call fails
	// with an error wrapping session.ErrUnavailable, so that a database
	// that answers nothing (frozen, or a network that drops packets)
	// holds no request for longer. 0: the caller's context only.
	CallTimeout time.Duration
}

// DefaultMaxConns is the size of the pool unless the URL says otherwise
// (pool_max_conns=N): enough concurrent commits for the database to group
// their WAL flushes, and few enough that several servers stay under
// PostgreSQL's default max_connections (100) with room for pg_dump and
// -check.
const DefaultMaxConns = 16

// DefaultMaxConnLifetime is how long a connection of the pool lives unless
// the URL says otherwise (pool_max_conn_lifetime=5m): a connection
// outlives no switchover for long, even one the store's errors did not
// reveal (pgx's default is an hour).
const DefaultMaxConnLifetime = 5 * time.Minute

// DefaultGroupWriters is the most groups of Puts a Store writes at once,
// unless Options.GroupWriters says otherwise. One: the fewer groups, the
// larger each and the fewer commits. Measured with scripts/aggregate.sh
// (64 sessions of CMA-ES at n = 10), generations/s with 1, 2 and 4
// writers: one server 5708, 5166, 4724; three servers 4641, 4076, 3697;
// and with 16 sessions at n = 100 one writer was as fast as four. A large
// state does not wait for a group (maxGroupedState).
const DefaultGroupWriters = 1

// maxGroupedState is the largest state whose Put joins a group: a larger
// one (n above about 140) is written at once on its own connection, so
// that it never holds up the small Puts queued behind it, and its commit
// costs little beside its bytes.
const maxGroupedState = 256 << 10

// IsURL reports whether db names a PostgreSQL database rather than a file.
func IsURL(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// Open connects to the database at url (postgres://...) and migrates its
// schema to SchemaVersion, under an advisory lock so that servers starting
// at once do not race.
func Open(ctx context.Context, url string, opt *Options) (*Store, error) {
	if opt == nil {
		opt = &Options{}
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err) // pgx leaves the password out
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns
	}
	if !strings.Contains(url, "pool_max_conn_lifetime") {
		cfg.MaxConnLifetime = DefaultMaxConnLifetime
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "selfcma"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	pctx, cancel := ctx, context.CancelFunc(func() {})
	if opt.CallTimeout > 0 {
		pctx, cancel = context.WithTimeout(ctx, opt.CallTimeout)
	}
	err = pool.Ping(pctx)
	cancel()
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect: %w", markUnavailable(ctx, err))
	}
	chunked := true
	if !opt.NoMigrate {
		if err := migrate(ctx, pool); err != nil {
			pool.Close()
			return nil, fmt.Errorf("postgres: migrate: %w", markUnavailable(ctx, err))
		}
	} else {
		var v int
		err := pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v)
		chunked = err != nil || v >= 4
	}
	writers := opt.GroupWriters
	if writers <= 0 {
		writers = DefaultGroupWriters
	}
	st := &Store{
		pool:     pool,
		db:       pool,
		onCommit: opt.OnCommit,
		timeout:  opt.CallTimeout,
		group:    &grouper{pool: pool, writers: writers, onCommit: opt.OnCommit, timeout: opt.CallTimeout},
	}
	st.getSQL, st.newerSQL = readSQL(chunked)
	return st, nil
}

// Close closes the pool's connections, after the queries under way.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Get implements session.Store.
func (s *Store) Get(ctx context.Context, id string) (_ session.Record, err error) {
	ctx, done := s.call(ctx)
	defer func() { err = done(err) }()
	return s.get(ctx, id, s.getSQL, []byte(id))
}

// get reads one record with sql (getSQL or newerSQL).
func (s *Store) get(ctx context.Context, id, sql string, args ...any) (session.Record, error) {
	r := session.Record{ID: id}
	var want int32
	var chunks [][]byte
	var last *int32
	err := s.db.QueryRow(ctx, sql, args...).Scan(&r.Version, &r.Meta, &r.State, &want, &chunks, &last)
	if errors.Is(err, pgx.ErrNoRows) {
		return session.Record{ID: id}, fmt.Errorf("postgres: get %s: %w", id, session.ErrNoRecord)
	}
	if err == nil {
		if r.State, err = chunked(r.State, want, chunks, last); err != nil {
			err = &session.DamagedError{ID: id, What: err.Error(), Err: err}
		}
	}
	if err != nil {
		return session.Record{ID: id}, fmt.Errorf("postgres: get %s: %w", id, err)
	}
	return r, nil
}

// Version implements session.Store.
func (s *Store) Version(ctx context.Context, id string) (_ uint64, err error) {
	ctx, done := s.call(ctx)
	defer func() { err = done(err) }()
	var v uint64
	err = s.db.QueryRow(ctx, "SELECT version FROM sessions WHERE id = $1", []byte(id)).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("postgres: version of %s: %w", id, session.ErrNoRecord)
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: version of %s: %w", id, err)
	}
	return v, nil
}

// GetNewer implements session.NewerGetter: the version, and the meta and
// state only if the version is not the one cached.
func (s *Store) GetNewer(ctx context.Context, id string, version uint64) (_ session.Record, err error) {
	ctx, done := s.call(ctx)
	defer func() { err = done(err) }()
	r, err := s.get(ctx, id, s.newerSQL, []byte(id), int64(version))
	if err != nil {
		return session.Record{}, err
	}
	return r, nil
}

// List implements session.Store.
func (s *Store) List(ctx context.Context, after string, limit int) (_ []session.Record, err error) {
	ctx, done := s.call(ctx)
	defer func() { err = done(err) }()
	var lim *int64 // NULL: no limit
	if limit > 0 {
		l := int64(limit)
		lim = &l
	}
	rows, err := s.db.Query(ctx, "SELECT id, version, meta FROM sessions WHERE id > $1 ORDER BY id LIMIT $2", []byte(after), lim)
	if err != nil {
		return nil, fmt.Errorf("postgres: list: %w", err)
	}
	recs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (session.Record, error) {
		var r session.Record
		var id []byte
		err := row.Scan(&id, &r.Version, &r.Meta)
		r.ID = string(id)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list: %w", err)
	}
	return recs, nil
}

// The statements of Put. $1 id, then the record's parts, the state in
// the row (putNewInline, putStateInline) or in chunks (putNewChunks,
// putStateChunks, the number of chunks last); the history entry's
// generation and data come after the record, data NULL for none. A state
// in the row has statements of its own, without writeChunks's: those cost
// a small state's Put 10% (BenchmarkPut at 4 KB, 0.34-0.36 ms against
// 0.32).
var (
	putNewInline = `WITH s AS (
	INSERT INTO sessions (id, version, meta, state) VALUES ($1, 1, $2, $3)
	ON CONFLICT (id) DO NOTHING RETURNING id
), ` + keyPart("$4", "$5") + `, ` + historyPart("$6", "$7") + `
SELECT count(*) FROM s`

	// putStateInline deletes the chunks of a state that was in chunks
	// before.
	putStateInline = `WITH s AS (
	UPDATE sessions SET version = version + 1, meta = $3, state = $4, chunks = 0
	WHERE id = $1 AND version = $2 RETURNING id
), d AS (
	DELETE FROM state_chunks WHERE session = $1 AND EXISTS (SELECT FROM s)
), ` + tellParts("$5", "$6") + `
SELECT count(*) FROM s`

	putNewChunks = `WITH s AS (
	INSERT INTO sessions (id, version, meta, state, chunks) VALUES ($1, 1, $2, '', $8)
	ON CONFLICT (id) DO NOTHING RETURNING id
), ` + strings.NewReplacer("$C", "$3", "$N", "$8").Replace(writeChunks) + `, ` + keyPart("$4", "$5") + `, ` + historyPart("$6", "$7") + `
SELECT count(*) FROM s`

	putStateChunks = `WITH s AS (
	UPDATE sessions SET version = version + 1, meta = $3, state = '', chunks = $7
	WHERE id = $1 AND version = $2 RETURNING id
), ` + strings.NewReplacer("$C", "$4", "$N", "$7").Replace(writeChunks) + `, ` + tellParts("$5", "$6") + `
SELECT count(*) FROM s`

	// putMeta is putStateInline without the state: the row's state and its
	// chunks stay as they are, unwritten.
	putMeta = `WITH s AS (
	UPDATE sessions SET version = version + 1, meta = $3
	WHERE id = $1 AND version = $2 RETURNING id
), ` + tellParts("$4", "$5") + `
SELECT count(*) FROM s`
)

// keyPart is the CTE that stores the idempotency key key (NULL: none) of
// the session the CTE s created, with its answer data.
func keyPart(key, data string) string {
	return strings.NewReplacer("$K", key, "$D", data).Replace(`k AS (
	INSERT INTO idempotency_keys (key, session, data) SELECT $K, id, $D FROM s WHERE $K::bytea IS NOT NULL
)`)
}

// historyPart is the CTE that writes the history entry of generation gen,
// data (NULL: none), of the session the CTE s wrote.
func historyPart(gen, data string) string {
	return strings.NewReplacer("$G", gen, "$D", data).Replace(`h AS (
	INSERT INTO history (session, generation, data) SELECT id, $G, $D FROM s WHERE $D::bytea IS NOT NULL
	ON CONFLICT (session, generation) DO UPDATE SET data = excluded.data
)`)
}

// tellParts is historyPart and, with a history entry (a told generation),
// the drop of the leases of the generations up to it, of the session $1
// if the CTE s wrote it.
func tellParts(gen, data string) string {
	return historyPart(gen, data) + strings.NewReplacer("$G", gen, "$D", data).Replace(`, l AS (
	DELETE FROM leases WHERE $D::bytea IS NOT NULL AND session = $1 AND generation <= $G AND EXISTS (SELECT FROM s)
)`)
}

// Put implements session.Store.
func (s *Store) Put(ctx context.Context, rec session.Record, hist *session.HistoryEntry) (_ uint64, err error) {
	ctx, done := s.call(ctx)
	defer func() { err = done(err) }()
	if s.readOnly {
		return 0, errSnapshotWrite
	}
	if rec.ID == "" {
		return 0, errors.New("postgres: put: an empty id")
	}
	var g int64
	var data []byte // nil: no history entry (NULL)
	if hist != nil {
		if hist.Generation > math.MaxInt64 {
			return 0, fmt.Errorf("postgres: put %s: generation %d", rec.ID, hist.Generation)
		}
		g, data = int64(hist.Generation), hist.Data
		if data == nil {
			data = []byte{}
		}
	}
	if rec.Version >= math.MaxInt64 {
		return 0, fmt.Errorf("postgres: put %s: %w", rec.ID, &session.DamagedError{ID: rec.ID,
			What: fmt.Sprintf("version %d, the largest a bigint holds: it cannot be written again", rec.Version)})
	}
	meta := rec.Meta
	if meta == nil {
		meta = []byte{}
	}
	start := time.Now()
	var n int
	switch {
	case rec.Version == 0:
		if rec.State == nil {
			return 0, fmt.Errorf("postgres: put %s: a new record without a state", rec.ID)
		}
		var key []byte // NULL: none
		if rec.Key != "" {
			key = []byte(rec.Key)
		}
		kd := rec.KeyData
		if kd == nil {
			kd = []byte{}
		}
		sql, args := putNewInline, []any{[]byte(rec.ID), meta, rec.State, key, kd, g, data}
		if c := chunkCount(meta, rec.State); c > 0 {
			sql, args = putNewChunks, append(args, int32(c))
		}
		err = s.pool.QueryRow(ctx, sql, args...).Scan(&n)
		if err == nil && n > 0 && s.onCommit != nil {
			s.onCommit(1, time.Since(start))
		}
	case rec.State == nil:
		n, err = s.group.put(ctx, &groupPut{id: rec.ID, sql: putMeta,
			args: []any{[]byte(rec.ID), int64(rec.Version), meta, g, data}})
	case len(rec.State) > maxGroupedState:
		sql, args := putState(rec, meta, g, data)
		err = s.pool.QueryRow(ctx, sql, args...).Scan(&n)
		if err == nil && n > 0 && s.onCommit != nil {
			s.onCommit(1, time.Since(start))
		}
	default:
		sql, args := putState(rec, meta, g, data)
		n, err = s.group.put(ctx, &groupPut{id: rec.ID, sql: sql, args: args})
	}
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "idempotency_keys_pkey" {
			return 0, fmt.Errorf("postgres: put %s: key %q: %w", rec.ID, rec.Key, session.ErrKeyTaken)
		}
		return 0, fmt.Errorf("postgres: put %s: %w", rec.ID, storageFull(rolledBack(err)))
	}
	if n == 0 {
		return 0, s.conflict(ctx, "put", rec.ID, rec.Version)
	}
	return rec.Version + 1, nil
}

// putState is the statement and arguments of a Put of rec's state at
// rec.Version, with meta and the history entry (g, data).
func putState(rec session.Record, meta []byte, g int64, data []byte) (string, []any) {
	args := []any{[]byte(rec.ID), int64(rec.Version), meta, rec.State, g, data}
	if c := chunkCount(meta, rec.State); c > 0 {
		return putStateChunks, append(args, int32(c))
	}
	return putStateInline, args
}

// conflict is the error of a write of id at version that changed nothing:
// ErrNoRecord if id is not stored (and version was not 0), else ErrVersion.
func (s *Store) conflict(ctx context.Context, op, id string, version uint64) error {
	got, err := s.Version(ctx, id)
	switch {
	case errors.Is(err, session.ErrNoRecord) && version != 0:
		return fmt.Errorf("postgres: %s %s: %w", op, id, session.ErrNoRecord)
	case errors.Is(err, session.ErrNoRecord):
		// Written and deleted again meanwhile: still a conflict.
		return fmt.Errorf("postgres: %s %s: version 0, deleted meanwhile: %w", op, id, session.ErrVersion)
	case err != nil:
		return fmt.Errorf("postgres: %s %s: %w", op, id, err)
	}
	return fmt.Errorf("postgres: %s %s: version %d, stored %d: %w", op, id, version, got, session.ErrVersion)
}

// Key implements session.Store.
func (s *Store) Key(ctx context.Context, key string) (_ string, _ []byte, err error) {
	ctx, done := s.call(ctx)
	defer func() { err = done(err) }()
	var id, data []byte
	err = s.db.QueryRow(ctx, "SELECT session, data FROM idempotency_keys WHERE key = $1", []byte(key)).Scan(&id, &data)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil, fmt.Errorf("postgres: key %q: %w", key, session.ErrNoRecord)
	}
	if err != nil {
		return "", nil, fmt.Errorf("postgres: key %q: %w", key, err)
	}
	return string(id), data, nil
}

// Delete implements session.Store. The session row goes first, and its
// state's chunks with it (ON DELETE CASCADE): its row lock makes a
// concurrent Put or UpdateLeases of id (which locks the row FOR KEY SHARE)
// wait, and the statements after it see what they committed; one that
// comes after the Delete finds no row.
func (s *Store) Delete(ctx context.Context, id string, version uint64) (err error) {
	ctx, done := s.call(ctx)
	defer func() { err = done(err) }()
	if s.readOnly {
		return errSnapshotWrite
	}
	start := time.Now()
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM sessions WHERE id = $1 AND version = $2", []byte(id), int64(version))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return errNothing
		}
		b := &pgx.Batch{}
		b.Queue("DELETE FROM history WHERE session = $1", []byte(id))
		b.Queue("DELETE FROM idempotency_keys WHERE session = $1", []byte(id))
		b.Queue("DELETE FROM leases WHERE session = $1", []byte(id))
		return tx.SendBatch(ctx, b).Close()
	})
	switch {
	case errors.Is(err, errNothing):
		return s.conflict(ctx, "delete", id, max(version, 1))
	case err != nil:
		return fmt.Errorf("postgres: delete %s: %w", id, storageFull(rolledBack(err)))
	}
	if s.onCommit != nil {
		s.onCommit(1, time.Since(start))
	}
	return nil
}

var errNothing = errors.New("nothing written")

// History implements session.Store.
func (s *Store) History(ctx context.Context, id string, from uint64, limit int) (_ []session.HistoryEntry, err error) {
	ctx, done := s.call(ctx)
	defer func() { err = done(err) }()
	if from > math.MaxInt64 {
		return nil, nil
	}
	var lim *int64 // NULL: no limit
	if limit > 0 {
		l := int64(limit)
		lim = &l
	}
	rows, err := s.db.Query(ctx, "SELECT generation, data FROM history WHERE session = $1 AND generation >= $2 ORDER BY generation LIMIT $3", []byte(id), int64(from), lim)
	if err != nil {
		return nil, fmt.Errorf("postgres: history of %s: %w", id, err)
	}
	ents, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (session.HistoryEntry, error) {
		var e session.HistoryEntry
		err := row.Scan(&e.Generation, &e.Data)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: history of %s: %w", id, err)
	}
	return ents, nil
}

// leaseLockClass is the first key of the advisory locks of UpdateLeases
// (the second is the hash of the session's id).
const leaseLockClass = 0x6c65 // "le"

// readLeases is the database's time, whether id is stored, whether id has
// leases (expired or not) of a generation above $2, and id's unexpired
// leases of generation $2 (one row with NULL leases if none).
const readLeases = `WITH t AS (SELECT clock_timestamp() AS now)
SELECT t.now, EXISTS (SELECT FROM sessions WHERE id = $1),
	EXISTS (SELECT FROM leases WHERE session = $1 AND generation > $2),
	l.index, l.worker, l.expires_at
FROM t LEFT JOIN leases l ON l.session = $1 AND l.generation = $2 AND l.expires_at > t.now`

func scanLeases(rows pgx.Rows) (leases []session.Lease, now time.Time, found, later bool, err error) {
	defer rows.Close()
	for rows.Next() {
		var idx *int32
		var worker []byte
		var exp *time.Time
		if err := rows.Scan(&now, &found, &later, &idx, &worker, &exp); err != nil {
			return nil, now, false, false, err
		}
		if idx != nil {
			leases = append(leases, session.Lease{Index: int(*idx), Worker: string(worker), Expires: *exp})
		}
	}
	return leases, now, found, later, rows.Err()
}

// idHash is the second key of the advisory lock of id's leases.
func idHash(id string) int32 {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int32(h.Sum32())
}

// Leases implements session.Store.
func (s *Store) Leases(ctx context.Context, id string, g uint64) (_ []session.Lease, _ time.Time, err error) {
	ctx, done := s.call(ctx)
	defer func() { err = done(err) }()
	if g > math.MaxInt64 {
		return nil, time.Time{}, fmt.Errorf("postgres: leases of %s: generation %d", id, g)
	}
	rows, err := s.db.Query(ctx, readLeases, []byte(id), int64(g))
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("postgres: leases of %s: %w", id, err)
	}
	leases, now, found, _, err := scanLeases(rows)
	switch {
	case err != nil:
		return nil, now, fmt.Errorf("postgres: leases of %s: %w", id, err)
	case !found:
		return nil, now, fmt.Errorf("postgres: leases of %s: %w", id, session.ErrNoRecord)
	}
	return leases, now, nil
}

// Import implements session.Importer: the record keeps its version (1 if
// it has none), its idempotency key and all its history.
func (s *Store) Import(ctx context.Context, rec session.Record, hist []session.HistoryEntry) (err error) {
	ctx, done := s.call(ctx)
	defer func() { err = done(err) }()
	if s.readOnly {
		return errSnapshotWrite
	}
	if rec.ID == "" || rec.State == nil {
		return fmt.Errorf("postgres: import %q: a record needs an id and a state", rec.ID)
	}
	v := max(rec.Version, 1)
	meta := rec.Meta
	if meta == nil {
		meta = []byte{}
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		c, state := chunkCount(meta, rec.State), rec.State
		if c > 0 {
			state = []byte{}
		}
		tag, err := tx.Exec(ctx, "INSERT INTO sessions (id, version, meta, state, chunks) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
			[]byte(rec.ID), int64(v), meta, state, int32(c))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("postgres: import %s: already stored: %w", rec.ID, session.ErrVersion)
		}
		if c > 0 {
			if _, err := tx.Exec(ctx, insertChunks, []byte(rec.ID), rec.State, int32(c)); err != nil {
				return err
			}
		}
		if rec.Key != "" {
			kd := rec.KeyData
			if kd == nil {
				kd = []byte{}
			}
			if _, err := tx.Exec(ctx, "INSERT INTO idempotency_keys (key, session, data) VALUES ($1, $2, $3)", []byte(rec.Key), []byte(rec.ID), kd); err != nil {
				var pe *pgconn.PgError
				if errors.As(err, &pe) && pe.Code == "23505" {
					return fmt.Errorf("postgres: import %s: key %q: %w", rec.ID, rec.Key, session.ErrKeyTaken)
				}
				return err
			}
		}
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"history"}, []string{"session", "generation", "data"},
			pgx.CopyFromSlice(len(hist), func(i int) ([]any, error) {
				if hist[i].Generation > math.MaxInt64 {
					return nil, fmt.Errorf("generation %d", hist[i].Generation)
				}
				d := hist[i].Data
				if d == nil {
					d = []byte{}
				}
				return []any{[]byte(rec.ID), int64(hist[i].Generation), d}, nil
			}))
		return err
	})
	if err != nil && !errors.Is(err, session.ErrVersion) && !errors.Is(err, session.ErrKeyTaken) {
		return fmt.Errorf("postgres: import %s: %w", rec.ID, storageFull(err))
	}
	return err
}

// SQLSTATEs of a lack of resources, and of a transaction PostgreSQL rolled
// back because of another one.
const (
	codeInsufficientResources = "53000"
	codeDiskFull              = "53100"
	codeSerializationFailure  = "40001"
	codeDeadlockDetected      = "40P01"
)

// rolledBack is err wrapping session.ErrVersion too when PostgreSQL rolled
// the transaction back for another one that changed the same rows (a
// deadlock between a tell's Put and a claim's lease write deleting
// overlapping lease rows, say): nothing was written, and the caller starts
// over from the store as after any version conflict, instead of answering
// 500.
func rolledBack(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == codeDeadlockDetected || pe.Code == codeSerializationFailure) {
		return fmt.Errorf("%w: %w", session.ErrVersion, err)
	}
	return err
}

// storageFull is err wrapping session.ErrStorageFull too when PostgreSQL
// refused the write for lack of space: SQLSTATE 53100 disk_full (a write
// or an extension of a file that met ENOSPC), or 53000
// insufficient_resources whose message names a full disk or quota (53000
// is also too many open files: no lack of space). Class 54 (a program
// limit: a row, an array or an index entry too big) is none either and
// stays as it is; so does err otherwise.
func storageFull(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return err
	}
	if pe.Code == codeDiskFull || pe.Code == codeInsufficientResources && noSpace(pe.Message+" "+pe.Detail) {
		return fmt.Errorf("%w: %w", session.ErrStorageFull, err)
	}
	return err
}

// noSpace reports whether msg names ENOSPC or EDQUOT, in any case (in
// English, as PostgreSQL's messages are unless lc_messages says otherwise).
func noSpace(msg string) bool {
	msg = strings.ToLower(msg)
	return strings.Contains(msg, strings.ToLower(syscall.ENOSPC.Error())) || strings.Contains(msg, strings.ToLower(syscall.EDQUOT.Error()))
}
