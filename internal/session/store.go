package session

import (
	"cmp"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"time"
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

// Lease is a worker's hold on one candidate of a session's pending
// generation, judged by the store's clock.
type Lease struct {
	Index   int       // the candidate's index in the batch
	Worker  string    // "" = anonymous
	Expires time.Time // the end of the lease, by the store's clock
}

// Store persists sessions. Every method is safe for concurrent use, from
// one process or from several servers sharing the store; byte slices
// handed in are not retained after the call and those returned are the
// caller's.
type Store interface {
	// Get returns the record of id, or an error wrapping ErrNoRecord.
	Get(ctx context.Context, id string) (Record, error)

	// Version returns the stored version of id (one cheap read: neither
	// meta nor state), or an error wrapping ErrNoRecord. A server trusts a
	// cached decoded session only while Version says it is current.
	Version(ctx context.Context, id string) (uint64, error)

	// List returns up to limit records (limit ≤ 0: all; Meta only, State
	// nil) with ids greater than after, in ascending order of id.
	List(ctx context.Context, after string, limit int) ([]Record, error)

	// Put writes rec if the stored version equals rec.Version (0: the id
	// must not exist) and returns the new version, rec.Version+1; with a
	// history entry, the entry is written in the same transaction, durable
	// before Put returns. A mismatch gives an error wrapping ErrVersion and
	// writes nothing; so does a new record whose Key another record holds,
	// wrapping ErrKeyTaken.
	//
	// A write of a stored record (rec.Version > 0) with State nil keeps the
	// stored state and replaces only the meta: a partial tell or a stop
	// must not rewrite the state blob. A new record needs a State.
	//
	// A Put that writes a history entry of generation g also drops the
	// session's leases of generations ≤ g (they are of a told generation).
	Put(ctx context.Context, rec Record, hist *HistoryEntry) (uint64, error)

	// Key returns the id of the record that was written new with
	// idempotency key key, and the KeyData written with it; an error
	// wrapping ErrNoRecord if no stored record holds key.
	Key(ctx context.Context, key string) (id string, data []byte, err error)

	// Delete removes the record of id, its history and its leases if its
	// stored version is version; errors wrap ErrNoRecord or ErrVersion.
	Delete(ctx context.Context, id string, version uint64) error

	// History returns up to limit entries (limit ≤ 0: all) of id with
	// generations ≥ from, in ascending order of generation. A session
	// without history, or an unknown one, gives none.
	History(ctx context.Context, id string, from uint64, limit int) ([]HistoryEntry, error)

	// UpdateLeases changes the leases of generation g of session id
	// atomically: it calls fn with the store's current time and the
	// leases of g that have not expired (any order), and stores the leases
	// fn returns as the whole set of g's leases (fn's error aborts and is
	// returned as is). No other UpdateLeases of id runs between the read
	// and the write, on any server. Leases of an earlier generation of id
	// are dropped; if leases of a later generation are stored, nothing is
	// written and the error wraps ErrVersion (g was told meanwhile). If fn
	// returns the leases it was given (in any order), the store may skip
	// the write. fn may be called more than once (a store may retry); it
	// must be a pure function of its arguments. The write need not be
	// durable at once: a lost lease costs an evaluation twice, never a
	// value. An unknown id gives an error wrapping ErrNoRecord.
	UpdateLeases(ctx context.Context, id string, g uint64, fn func(now time.Time, cur []Lease) ([]Lease, error)) error

	// Leases returns the unexpired leases of generation g of id and the
	// store's current time (for views: the page of a session, metrics).
	Leases(ctx context.Context, id string, g uint64) ([]Lease, time.Time, error)
}

// Errors of a Store.
var (
	ErrNoRecord = errors.New("no such record")
	ErrVersion  = errors.New("version mismatch")
	ErrKeyTaken = errors.New("idempotency key taken")
)

// Snapshotter is a store that can stream a consistent copy of itself
// (bbolt: a read transaction's WriteTo). PostgreSQL has none: /v1/backup
// answers an error naming pg_dump.
type Snapshotter interface {
	Snapshot() (io.ReadCloser, int64, error) // as today's store.Store.Snapshot
}

// Importer writes a session copied from another store exactly: the record
// (its Meta, State, Key and KeyData as they were; the version may differ)
// and all its history, in one transaction. A record with that id already
// present gives an error wrapping ErrVersion. Used by the command that
// copies a bbolt file into PostgreSQL.
type Importer interface {
	Import(ctx context.Context, rec Record, hist []HistoryEntry) error
}

// NewerGetter is a store that can check a cached version and read the
// record in one round trip: what a server does on every request that
// another server's write made stale (several servers, requests spread
// over them).
type NewerGetter interface {
	// GetNewer returns the record of id if its stored version is not
	// version, and a Record with only ID and Version (Meta and State nil)
	// if it is; an error wrapping ErrNoRecord if id is not stored.
	GetNewer(ctx context.Context, id string, version uint64) (Record, error)
}

// Checker reads the whole store for what a restart could trip on (the
// server's -check): every problem found, never a panic.
type Checker interface {
	Check(ctx context.Context) []error
}

// SameLeases reports whether a and b hold the same leases, in any order: a
// store need not write a lease set that fn returned unchanged.
func SameLeases(a, b []Lease) bool {
	if len(a) != len(b) {
		return false
	}
	byIndex := func(x, y Lease) int {
		if c := cmp.Compare(x.Index, y.Index); c != 0 {
			return c
		}
		if c := strings.Compare(x.Worker, y.Worker); c != 0 {
			return c
		}
		return x.Expires.Compare(y.Expires)
	}
	a, b = slices.SortedFunc(slices.Values(a), byIndex), slices.SortedFunc(slices.Values(b), byIndex)
	return slices.EqualFunc(a, b, func(x, y Lease) bool { return byIndex(x, y) == 0 })
}
