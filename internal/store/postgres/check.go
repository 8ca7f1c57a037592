package postgres

import (
	"context"
	"fmt"
)

// Check implements session.Checker: it reads the database as a server
// starting on it would and returns what is wrong (nil when nothing is):
//   - the schema is SchemaVersion, the state column is stored EXTERNAL
//     and the chunks' data PLAIN;
//   - every byte of every session, chunk, history entry and idempotency
//     key reads (TOAST included);
//   - every session has the chunks its row counts, of seq 0 to chunks−1,
//     and an empty state column if it has any;
//   - every chunk, history entry, idempotency key and lease belongs to a
//     stored session;
//   - every version is from 1 to below 2^63−1 (a bigint: a session at
//     the largest could not be written again);
//   - the leases are sound: generation and index not negative, one lease
//     a candidate, of one generation a session (a claim replaces the
//     leases of its generation and those before). A lease of a generation
//     told is no damage: a claim racing the tell may write one, which the
//     next tell drops.
//
// What the values say is session.Check's to read. Check changes nothing.
// On a Store of ReadSnapshot its statements see one snapshot, so that a
// database in use shows no false damage (a history ahead of its session);
// otherwise each sees its own: check a quiet database.
func (s *Store) Check(ctx context.Context) []error {
	var probs []error
	report := func(format string, args ...any) {
		probs = append(probs, fmt.Errorf(format, args...))
	}
	var v int
	if err := s.db.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v); err != nil {
		report("schema: %v", err)
		return probs
	}
	if v != SchemaVersion {
		report("schema: version %d, this build's is %d (a server starting on it migrates it)", v, SchemaVersion)
		if v < 1 {
			return probs
		}
	}
	var storage string
	err := s.db.QueryRow(ctx, `SELECT attstorage::text FROM pg_attribute
		WHERE attrelid = 'sessions'::regclass AND attname = 'state'`).Scan(&storage)
	switch {
	case err != nil:
		report("schema: the state column: %v", err)
	case storage != "e":
		report("schema: the state column's storage is %q, want EXTERNAL (e): every commit pays pglz's attempt on the incompressible state", storage)
	}

	if v >= 4 {
		err := s.db.QueryRow(ctx, `SELECT attstorage::text FROM pg_attribute
			WHERE attrelid = 'state_chunks'::regclass AND attname = 'data'`).Scan(&storage)
		switch {
		case err != nil:
			report("schema: the chunks' data column: %v", err)
		case storage != "p":
			report("schema: the chunks' data column's storage is %q, want PLAIN (p): a chunk would be compressed or moved out of line", storage)
		}
		s.checkChunks(ctx, report)
	}

	// md5 reads every byte, out of line ones too: a lost TOAST chunk fails.
	for _, q := range []struct{ what, sql string }{
		{"sessions", "SELECT count(*) FROM sessions WHERE md5(meta) IS NULL OR md5(state) IS NULL"},
		{"history", "SELECT count(*) FROM history WHERE md5(data) IS NULL"},
		{"idempotency keys", "SELECT count(*) FROM idempotency_keys WHERE md5(data) IS NULL"},
		{"state chunks", "SELECT count(*) FROM state_chunks WHERE md5(data) IS NULL"},
	} {
		if q.what == "state chunks" && v < 4 {
			continue
		}
		var n int
		if err := s.db.QueryRow(ctx, q.sql).Scan(&n); err != nil {
			report("%s: reading every row: %v", q.what, err)
		} else if n != 0 {
			report("%s: %d rows without data", q.what, n)
		}
	}

	for _, q := range []struct{ what, table, col string }{
		{"history", "history", "convert_to(generation::text, 'UTF8')"},
		{"idempotency key", "idempotency_keys", "key"},
		{"lease", "leases", "convert_to(generation::text, 'UTF8')"},
		{"state chunk", "state_chunks", "convert_to(seq::text, 'UTF8')"},
	} {
		if q.table == "state_chunks" && v < 4 {
			continue
		}
		rows, err := s.db.Query(ctx, fmt.Sprintf(`SELECT t.session, %s FROM %s t
			WHERE NOT EXISTS (SELECT FROM sessions s WHERE s.id = t.session)
			ORDER BY 1, 2 LIMIT 100`, q.col, q.table))
		if err != nil {
			report("%s: %v", q.table, err)
			continue
		}
		for rows.Next() {
			var id, what []byte
			if err := rows.Scan(&id, &what); err != nil {
				report("%s: %v", q.table, err)
				break
			}
			report("%s %s of session %s, which is not stored", q.what, what, id)
		}
		if err := rows.Err(); err != nil {
			report("%s: %v", q.table, err)
		}
		rows.Close()
	}
	s.checkVersions(ctx, report)
	s.checkLeases(ctx, report)
	return probs
}

// checkVersions reports the sessions whose version is out of range.
func (s *Store) checkVersions(ctx context.Context, report func(string, ...any)) {
	rows, err := s.db.Query(ctx, `SELECT id, version FROM sessions
		WHERE version < 1 OR version = 9223372036854775807 ORDER BY 1 LIMIT 100`)
	if err != nil {
		report("sessions: versions: %v", err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var id []byte
		var v int64
		if err := rows.Scan(&id, &v); err != nil {
			report("sessions: versions: %v", err)
			return
		}
		if v < 1 {
			report("session %s: version %d, want 1 or more", id, v)
		} else {
			report("session %s: version %d, the largest a bigint holds: it cannot be written again", id, v)
		}
	}
	if err := rows.Err(); err != nil {
		report("sessions: versions: %v", err)
	}
}

// checkLeases reports lease rows that no claim writes.
func (s *Store) checkLeases(ctx context.Context, report func(string, ...any)) {
	for _, q := range []struct{ what, sql string }{
		{"a negative generation or index", `SELECT session, format('generation %s, index %s', generation, index)
			FROM leases WHERE generation < 0 OR index < 0`},
		{"two leases of one candidate", `SELECT session, format('generation %s, index %s, %s rows', generation, index, count(*))
			FROM leases GROUP BY session, generation, index HAVING count(*) > 1`},
		{"leases of several generations", `SELECT session, format('generations %s', string_agg(DISTINCT generation::text, ', '))
			FROM leases GROUP BY session HAVING count(DISTINCT generation) > 1`},
	} {
		rows, err := s.db.Query(ctx, q.sql+" ORDER BY 1, 2 LIMIT 100")
		if err != nil {
			report("leases: %v", err)
			continue
		}
		for rows.Next() {
			var id []byte
			var what string
			if err := rows.Scan(&id, &what); err != nil {
				report("leases: %v", err)
				break
			}
			report("session %s: %s (%s)", id, q.what, what)
		}
		if err := rows.Err(); err != nil {
			report("leases: %v", err)
		}
		rows.Close()
	}
}

// checkChunks reports the sessions whose chunks are not the ones their
// row counts.
func (s *Store) checkChunks(ctx context.Context, report func(string, ...any)) {
	rows, err := s.db.Query(ctx, `SELECT s.id, s.chunks, coalesce(c.n, 0), c.first, c.last, length(s.state)
		FROM sessions s LEFT JOIN (
			SELECT session, count(*) AS n, min(seq) AS first, max(seq) AS last FROM state_chunks GROUP BY session
		) c ON c.session = s.id
		WHERE s.chunks <> coalesce(c.n, 0) OR (s.chunks > 0 AND (c.first <> 0 OR c.last <> s.chunks - 1 OR length(s.state) > 0))
		ORDER BY 1 LIMIT 100`)
	if err != nil {
		report("state chunks: %v", err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var id []byte
		var want, stateLen int32
		var n int64
		var first, last *int32
		if err := rows.Scan(&id, &want, &n, &first, &last, &stateLen); err != nil {
			report("state chunks: %v", err)
			return
		}
		switch {
		case want > 0 && stateLen > 0:
			report("session %s: a state of %d bytes in its row and %d chunks", id, stateLen, want)
		case first == nil:
			report("session %s: %d chunks counted, none stored", id, want)
		default:
			report("session %s: %d chunks counted, %d stored, of seq %d to %d", id, want, n, *first, *last)
		}
	}
	if err := rows.Err(); err != nil {
		report("state chunks: %v", err)
	}
}
