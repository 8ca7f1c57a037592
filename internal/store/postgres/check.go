package postgres

import (
	"context"
	"fmt"
)

// Check implements session.Checker: it reads the database as a server
// starting on it would and returns what is wrong (nil when nothing is):
//   - the schema is SchemaVersion, and the state column is stored
//     EXTERNAL;
//   - every byte of every session, history entry and idempotency key
//     reads (TOAST included);
//   - every history entry, idempotency key and lease belongs to a stored
//     session.
//
// What the values say is session.Check's to read. Check changes nothing;
// it reads each table in a statement of its own, so on a database in use
// a session deleted meanwhile may show as an orphan: check a quiet
// database, or read such a report again.
func (s *Store) Check(ctx context.Context) []error {
	var probs []error
	report := func(format string, args ...any) {
		probs = append(probs, fmt.Errorf(format, args...))
	}
	var v int
	if err := s.pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v); err != nil {
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
	err := s.pool.QueryRow(ctx, `SELECT attstorage::text FROM pg_attribute
		WHERE attrelid = 'sessions'::regclass AND attname = 'state'`).Scan(&storage)
	switch {
	case err != nil:
		report("schema: the state column: %v", err)
	case storage != "e":
		report("schema: the state column's storage is %q, want EXTERNAL (e): every commit pays pglz's attempt on the incompressible state", storage)
	}

	// md5 reads every byte, out of line ones too: a lost TOAST chunk fails.
	for _, q := range []struct{ what, sql string }{
		{"sessions", "SELECT count(*) FROM sessions WHERE md5(meta) IS NULL OR md5(state) IS NULL"},
		{"history", "SELECT count(*) FROM history WHERE md5(data) IS NULL"},
		{"idempotency keys", "SELECT count(*) FROM idempotency_keys WHERE md5(data) IS NULL"},
	} {
		var n int
		if err := s.pool.QueryRow(ctx, q.sql).Scan(&n); err != nil {
			report("%s: reading every row: %v", q.what, err)
		} else if n != 0 {
			report("%s: %d rows without data", q.what, n)
		}
	}

	for _, q := range []struct{ what, table, col string }{
		{"history", "history", "convert_to(generation::text, 'UTF8')"},
		{"idempotency key", "idempotency_keys", "key"},
		{"lease", "leases", "convert_to(generation::text, 'UTF8')"},
	} {
		rows, err := s.pool.Query(ctx, fmt.Sprintf(`SELECT t.session, %s FROM %s t
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
	return probs
}
