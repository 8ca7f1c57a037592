package postgres

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// A large state is stored in chunks, rows of the table state_chunks (schema
// 4), not in the session's row. Out of line in the sessions row, every Put
// went through the TOAST table: it inserted a new value's 2 KB chunks, each
// with an entry in the TOAST index, and deleted the old value's. Our own
// chunks are updated in place: the table's fillfactor (50) leaves room for
// a second version of a chunk on its page, so an update of a chunk is a
// HOT update (no index entry, the old version pruned on the page the next
// time it is read). BenchmarkPut, through TOAST and in chunks: 1.13-1.33
// ms against 0.53-0.54 at 91 KB (self-CMA-ES at n = 100), 1.31-1.52
// against 0.72-0.78 at 171 KB, 3.1-3.6 against 1.49-1.61 at 490 KB.
//
// chunkSize is the most bytes of state in one chunk, chosen so that two
// versions of a chunk row fit in one 8 KB page (8192 bytes):
//
//	page header                                    24
//	line pointers: the root's (a redirect once a   3 × 4 = 12
//	  version was pruned), the live version's and
//	  the new one's
//	one version of the row, MAXALIGNed to 8:
//	  tuple header (23, aligned)                   24
//	  session id, 1-byte varlena header            1 + len(id), aligned to 4
//	  seq (integer)                                4
//	  data, 4-byte varlena header                  4 + chunkSize
//
// PostgreSQL puts the new version on the old one's page when the page's
// free space, less a new line pointer (4), holds it: 8192 − 24 − 12 − 4 −
// v ≥ v for a version of v bytes, so v ≤ 4076, and v ≤ 4072 as a multiple
// of 8. With chunkSize = 3900, v = 24 + align4(1 + len(id)) + 8 + 3900
// ≤ 4072 for any id of up to 126 bytes (a session's id is a UUID, 36
// bytes: v = 3976); a longer id still works, its updates are not HOT.
// Checked here with an id of 44 bytes (TestChunkUpdatesStayOnTheirPage):
// chunks of 3992 bytes (v = 4072) stay on their pages, of 4000 they move.
// An insert leaves half of its page free (fillfactor 50), so no two
// chunks share a page.
const chunkSize = 3900

// maxInlineRow is the most bytes of meta and state together that stay in
// the session's row: with the id, the version and the tuple's header the
// row stays under schema 3's toast_tuple_target (8160 bytes), so nothing
// goes to the TOAST table. A larger state goes in chunks.
const maxInlineRow = 8000

// chunkCount is the number of chunks of state beside meta: 0 for a state
// that stays in the session's row.
func chunkCount(meta, state []byte) int {
	if len(meta)+len(state) <= maxInlineRow {
		return 0
	}
	return (len(state) + chunkSize - 1) / chunkSize
}

// cutChunk is chunk i of the state $C, a bytea: the state goes to the
// server whole and is cut there. Sent as a bytea[] of its chunks, a Put
// cost 0.63-0.73 ms at 91 KB, 0.95-1.10 at 171 KB and 3.6-3.8 at 490 KB
// (BenchmarkPut: pgx's encoding of the array and PostgreSQL's reading of
// it), cut by substring 0.54-0.57, 0.78-0.81 and 1.54-1.56.
var cutChunk = fmt.Sprintf("substring($C::bytea FROM i * %[1]d + 1 FOR %[1]d)", chunkSize)

// writeChunks is the part of a Put's CTE that writes the $N chunks of the
// state $C (seq counts from 0) of the session the CTE s returned, if it
// did, in place, and deletes its chunks beyond them: all of them when the
// state went back in the row.
var writeChunks = `c AS (
	INSERT INTO state_chunks (session, seq, data)
	SELECT s.id, i, ` + cutChunk + ` FROM s, generate_series(0, $N::integer - 1) AS i
	ON CONFLICT (session, seq) DO UPDATE SET data = excluded.data
), d AS (
	DELETE FROM state_chunks WHERE session = $1 AND seq >= $N::integer AND EXISTS (SELECT FROM s)
)`

// insertChunks inserts the $3 chunks of the state $2 of the session $1
// (Import).
var insertChunks = strings.NewReplacer("$C", "$2", "$N", "$3").Replace(`INSERT INTO state_chunks (session, seq, data)
	SELECT $1, i, ` + cutChunk + ` FROM generate_series(0, $N::integer - 1) AS i`)

// readSQL is the statements of Get and GetNewer ($1 the id, $2 the version
// cached), on a database with chunks (schema 4) or without. Their columns:
// the version, the meta, the state column, the number of chunks, and if
// the session has any, its chunks in order and their last seq. GetNewer
// reads neither the meta nor the state nor the chunks of the version
// cached.
//
// The chunks are joined by the client: an aggregate would sort them again
// (string_agg(... ORDER BY seq)); array() takes them in the order of the
// index. Measured here (a Get), 0.30-0.32 ms against 0.33-0.34 at 91 KB,
// 23-24.5 ms against 24-24.6 at 4 MB.
func readSQL(chunked bool) (get, newer string) {
	if !chunked {
		return `SELECT version, meta, state, 0, NULL::bytea[], NULL::integer FROM sessions WHERE id = $1`,
			`SELECT version, CASE WHEN version <> $2 THEN meta END, CASE WHEN version <> $2 THEN state END, 0, NULL::bytea[], NULL::integer
			FROM sessions WHERE id = $1`
	}
	const cols = `s.state, s.chunks,
	CASE WHEN s.chunks > 0 THEN array(SELECT data FROM state_chunks c WHERE c.session = s.id ORDER BY seq) END,
	CASE WHEN s.chunks > 0 THEN (SELECT max(seq) FROM state_chunks c WHERE c.session = s.id) END`
	return `SELECT s.version, s.meta, ` + cols + ` FROM sessions s WHERE s.id = $1`,
		`SELECT s.version, s.meta, ` + cols + ` FROM (
			SELECT id, version, CASE WHEN version <> $2 THEN meta END AS meta, CASE WHEN version <> $2 THEN state END AS state,
				CASE WHEN version <> $2 THEN chunks ELSE 0 END AS chunks
			FROM sessions
		) s WHERE s.id = $1`
}

// chunked is the state a read returns: state, or if the session's row says
// it has chunks (want > 0), the chunks joined, which must be want of them,
// the last of seq want−1 (so of seq 0 to want−1: seq is unique and not
// negative). A chunk lost is an error, never a shorter state.
func chunked(state []byte, want int32, chunks [][]byte, last *int32) ([]byte, error) {
	if want == 0 {
		return state, nil
	}
	if len(chunks) != int(want) || last == nil || *last != want-1 {
		return nil, errMissingChunks
	}
	return bytes.Join(chunks, nil), nil
}

// errMissingChunks is the error of a session whose chunks are not all
// stored.
var errMissingChunks = errors.New("the state's chunks are not all stored")
