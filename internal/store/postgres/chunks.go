package postgres

import "errors"

// A large state is stored in chunks, rows of the table state_chunks (schema
// 4), not in the session's row. Out of line in the sessions row, every Put
// went through the TOAST table: it inserted a new value's 2 KB chunks, each
// with an entry in the TOAST index, and deleted the old value's, 0.95 ms a
// Put for the 91 KB state of self-CMA-ES at n = 100. Our own chunks are
// updated in place: the table's fillfactor (50) leaves room for a second
// version of a chunk on its page, so an update of a chunk is a HOT update
// (no index entry, the old version pruned on the page the next time it is
// read), 0.6 ms for the same state.
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
const chunkSize = 3900

// maxInlineRow is the most bytes of meta and state together that stay in
// the session's row: with the id, the version and the tuple's header the
// row stays under schema 3's toast_tuple_target (8160 bytes), so nothing
// goes to the TOAST table. A larger state goes in chunks.
const maxInlineRow = 8000

// splitState is what a Put writes of state: the bytes for the session's
// state column and the chunks for state_chunks, one of them empty. The
// chunks alias state. Never nil: pgx would send NULL.
func splitState(meta, state []byte) (inline []byte, chunks [][]byte) {
	if len(meta)+len(state) <= maxInlineRow {
		return state, [][]byte{}
	}
	chunks = make([][]byte, 0, (len(state)+chunkSize-1)/chunkSize)
	for i := 0; i < len(state); i += chunkSize {
		chunks = append(chunks, state[i:min(len(state), i+chunkSize)])
	}
	return []byte{}, chunks
}

// The parts of the statements that write and read chunks.
const (
	// writeChunks upserts the chunks $C (a bytea[]; seq counts from 0) of
	// the session the CTE s returned, if it did, and deletes its chunks
	// beyond them: all of them when the state went back in line.
	writeChunks = `c AS (
	INSERT INTO state_chunks (session, seq, data)
	SELECT s.id, x.seq - 1, x.data FROM s, unnest($C::bytea[]) WITH ORDINALITY AS x(data, seq)
	ON CONFLICT (session, seq) DO UPDATE SET data = excluded.data
), d AS (
	DELETE FROM state_chunks WHERE session = $1 AND seq >= cardinality($C::bytea[]) AND EXISTS (SELECT FROM s)
)`

	// readState is the state of the session row s: its state column, or
	// its chunks (c.state, c.n, c.last of the lateral join joinChunks)
	// joined in order.
	readState  = `CASE WHEN s.chunks = 0 THEN s.state ELSE c.state END, s.chunks, c.n, c.last`
	joinChunks = `LEFT JOIN LATERAL (
	SELECT string_agg(data, ''::bytea ORDER BY seq) AS state, count(*) AS n, max(seq) AS last
	FROM state_chunks WHERE session = s.id AND s.chunks > 0
) c ON true`
)

// chunked is the state a read returns: state, or if the session's row says
// it has chunks (want > 0), the chunks joined, which must be want of them,
// of seq 0 to want−1. A chunk lost is an error, never a shorter state.
func chunked(state []byte, want int32, n int64, last *int32) ([]byte, error) {
	if want == 0 {
		return state, nil
	}
	if n != int64(want) || last == nil || *last != want-1 {
		return nil, errMissingChunks
	}
	return state, nil
}

// errMissingChunks is the error of a session whose chunks are not all
// stored.
var errMissingChunks = errors.New("the state's chunks are not all stored")
