package session

import (
	"context"
	"errors"
)

// Record is what a Store keeps of one session: whole records, never parts of
// them, with a version that every write compares and swaps.
type Record struct {
	ID      string
	Version uint64 // the stored version, 1 for a new session; 0 = not stored yet
	Meta    []byte // the session record without the optimizer state (small; List returns it)
	State   []byte // the optimizer state, opaque to the store

	// Key, in the write of a new record (Version 0), is the idempotency
	// key of the create: the store keeps it with KeyData until the record
	// is deleted, and refuses a second record with the same key. Writes of
	// a stored record ignore both; Get and List leave them empty.
	Key     string
	KeyData []byte
}

// HistoryEntry is the record of one told generation, opaque to the store.
type HistoryEntry struct {
	Generation uint64
	Data       []byte
}

// Store persists sessions. Every method is safe for concurrent use; byte
// slices handed in are not retained after the call and those returned are
// the caller's.
//
// A write is a compare-and-swap on the version of the record, in one
// transaction with the history entry of the generation, durable before
// the method returns. That is all Manager needs, so a store shared by several
// servers (PostgreSQL, say) fits the same interface.
type Store interface {
	// Get returns the record of id, or an error wrapping ErrNoRecord.
	Get(ctx context.Context, id string) (Record, error)

	// List returns up to limit records (Meta only, State nil) with ids
	// greater than after, in ascending order of id.
	List(ctx context.Context, after string, limit int) ([]Record, error)

	// Put writes rec if the stored version equals rec.Version (0: the id
	// must not exist) and returns the new version, rec.Version+1; with a
	// history entry, the entry is written in the same transaction.
	// A mismatch gives an error wrapping ErrVersion and writes nothing; so
	// does a new record whose Key another record holds, wrapping ErrKeyTaken.
	Put(ctx context.Context, rec Record, hist *HistoryEntry) (uint64, error)

	// Key returns the id of the record that was written new with
	// idempotency key key, and the KeyData written with it; an error
	// wrapping ErrNoRecord if no stored record holds key.
	Key(ctx context.Context, key string) (id string, data []byte, err error)

	// Delete removes the record of id and its history if its stored version
	// is version; errors wrap ErrNoRecord or ErrVersion.
	Delete(ctx context.Context, id string, version uint64) error

	// History returns up to limit entries (limit ≤ 0: all) of id with
	// generations ≥ from, in ascending order of generation. A session
	// without history, or an unknown one, gives none.
	History(ctx context.Context, id string, from uint64, limit int) ([]HistoryEntry, error)
}

// Errors of a Store.
var (
	ErrNoRecord = errors.New("no such record")
	ErrVersion  = errors.New("version mismatch")
	ErrKeyTaken = errors.New("idempotency key taken")
)
