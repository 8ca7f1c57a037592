// Package bolt is the bbolt implementation of session.Store.
//
// Layout of the file (bbolt buckets), version 6:
//
//	meta      "schema" -> the layout's version, decimal;
//	          "toldepoch" -> the epoch of the told-value log (8 bytes)
//	sessions  id -> a bucket: "r" -> version (8 bytes) ‖ len(meta) (4 bytes) ‖ meta ‖ state
//	hist      len(id) (2 bytes) ‖ id ‖ generation (8 bytes) -> entry
//	keys      idempotency key -> len(id) (2 bytes) ‖ id ‖ key data
//	keyof     id -> idempotency key (the sessions created with one)
//	metas     id -> version (8 bytes) ‖ meta: the record's version and meta
//	          when its last write was of the meta only (a partial tell, a
//	          stop); they override those of "r", whose state stays
//	leases    id -> generation (8 bytes) ‖ the leases of that generation,
//	          each index (4) ‖ expiry in Unix nanoseconds (8) ‖ len(worker) (1) ‖ worker
//
// Integers are big endian. A write of the meta only puts one small value
// in metas, apart from the state's pages (bbolt rewrites a leaf whole: a
// meta beside the state in the session's bucket would rewrite the state
// too). A tell puts two values: the record (removing the meta of metas)
// and the generation's history entry, whose key sorts after the session's earlier
// ones, so a tell dirties the record's pages and a few small ones. Each
// record has a bucket of its own because bbolt splits no leaf of four
// values or fewer, however large they are: when layout 3 kept the records
// as values of one bucket, a tell rewrote two to four sessions' records,
// a megabyte or two at n = 100. (Layout 1 kept the meta, the state and a
// history bucket per session apart; layout 2 had no keys and keyof;
// layout 4 no metas and leases, which are all layout 5 adds; layout 6
// adds the told-value log and its epoch. Open migrates a file of an earlier
// layout in one transaction.)
//
// A write of the meta only goes to the told-value log beside the file
// (toldlog.go), one fdatasync, instead of a bbolt commit (two); the next
// commit folds the log into metas.
//
// Writes are group committed: a write that finds no commit under way
// commits itself, on its own goroutine (a lone tell hands nothing to another
// goroutine, which on a virtual machine can cost a processor's wake-up);
// writes that arrive meanwhile queue, and when the commit is done the first
// of them commits all the queue holds in one transaction, so concurrent
// tells to different sessions share an fsync. bbolt's DB.Batch would group
// too but holds every batch for MaxBatchDelay, which a lone tell would pay
// on every generation.
//
// The store stores bytes and decodes nothing. Check reads a whole file for
// what a restart on it could trip on (the server's -check, with a read-only
// Open).
package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/selfcma/selfcma/internal/session"
	bbolt "go.etcd.io/bbolt"
)

// SchemaVersion is the version of the file's layout, kept in the meta
// bucket. Bump it with any change of the layout, and migrate.
const SchemaVersion = 6

var (
	bucketMeta     = []byte("meta")
	bucketSessions = []byte("sessions")
	bucketHist     = []byte("hist")
	bucketKeys     = []byte("keys")
	bucketKeyOf    = []byte("keyof")
	bucketMetas    = []byte("metas")
	bucketLeases   = []byte("leases")
	keySchema      = []byte("schema")
	keyRecord      = []byte("r") // the one key of a session's bucket

	// dataBuckets are the buckets of the layout besides meta.
	dataBuckets = [][]byte{bucketSessions, bucketHist, bucketKeys, bucketKeyOf, bucketMetas, bucketLeases}

	// Layout 1's buckets, read by the migration only.
	bucketStatesV1  = []byte("states")
	bucketHistoryV1 = []byte("history")
)

// maxBatch is the most writes one transaction takes.
const maxBatch = 256

// ErrClosed is returned by writes after Close. It wraps
// session.ErrUnavailable: a request that raced the server's shutdown is
// answered 503, to be sent again (to the server that takes over).
var ErrClosed = fmt.Errorf("store: closed: %w", session.ErrUnavailable)

// ErrEarlierLayout is the error of a read-only Open of a file of an earlier
// layout, which only a writable Open migrates.
var ErrEarlierLayout = fmt.Errorf("an earlier layout than %d, which a read-only open does not migrate", SchemaVersion)

// Store is a session.Store in a bbolt file. It is safe for concurrent use.
type Store struct {
	db *bbolt.DB

	mu      sync.Mutex // guards closed, queue and leading
	closed  bool
	queue   []*op      // writes waiting for the next commit, in order
	leading bool       // a writer is committing; it hands on to queue[0]
	idle    *sync.Cond // signalled when leading turns false

	commits  atomic.Int64 // write transactions committed
	onCommit func(writes int, took time.Duration)
	now      func() time.Time // the store's clock, which times the leases
	leases   leaseTable       // the leases while the file is open (not read-only)

	log         *toldLog          // the told-value log, appended to by the committing writer; nil read-only
	heldMu      sync.RWMutex      // guards held
	held        map[string][]byte // id -> version ‖ meta: the told values of the log, not yet folded into metas
	unfolded    atomic.Bool       // the log holds records since the last fold
	logProblems []error           // the log's damage, for Check (read-only)
}

var _ session.Store = (*Store)(nil)

// Options tune Open.
type Options struct {
	// NoSync skips the fsync of each commit: for benchmarks that measure
	// everything but the disk. Never in the server.
	NoSync bool
	// OnCommit, when not nil, is called after every write transaction with
	// the number of writes it committed together and the time it took
	// (fsync included): cmd/server makes metrics of it.
	OnCommit func(writes int, took time.Duration)
	// ReadOnly opens the file for reading only (Check, the server's
	// -check): it shares the file with other readers, never creates or
	// migrates it, and every write fails.
	ReadOnly bool
	// Now is the clock that times the leases; nil = time.Now. Servers
	// sharing a file share its clock: tests set it to move time on.
	Now func() time.Time
}

// Open opens or creates the file at path, and reads its told-value log at
// path + LogSuffix: the first write folds the told values of the log into
// the file (toldLog); until then the reads take them from memory. It fails if another process
// holds the file (after a second: ErrInUse), if its pages or its log are
// damaged (a *DamagedError), or if the file's layout is later than
// SchemaVersion. A file of an earlier layout is copied to path.layoutN,
// then migrated in one transaction.
func Open(path string, opt *Options) (*Store, error) {
	bo := &bbolt.Options{Timeout: time.Second}
	bo.OpenFile = openChecked(bo.Timeout) // the lock, and the pages checked before bbolt maps them
	if opt != nil {
		bo.NoSync, bo.ReadOnly = opt.NoSync, opt.ReadOnly
	}
	db, err := bbolt.Open(path, 0o600, bo)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	init := db.Update
	if bo.ReadOnly || db.View(initSchema) == nil {
		init = db.View // nothing to write: a file of this layout is left as it is until a write
	} else if err := keepEarlierLayout(db, path); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := init(initSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	s := &Store{db: db, now: time.Now}
	if opt != nil {
		s.onCommit = opt.OnCommit
		if opt.Now != nil {
			s.now = opt.Now
		}
	}
	s.idle = sync.NewCond(&s.mu)
	if err := s.startLog(path, bo.NoSync, bo.ReadOnly); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if !bo.ReadOnly {
		s.loadLeases()
	}
	return s, nil
}

// maxIDLen is the longest id the history keys can hold.
const maxIDLen = 1<<16 - 1

// recordValue is the value of a session: version ‖ len(meta) ‖ meta ‖ state,
// appended to dst.
func recordValue(dst []byte, version uint64, meta, state []byte) []byte {
	v := slices.Grow(dst, 12+len(meta)+len(state))
	v = binary.BigEndian.AppendUint64(v, version)
	v = binary.BigEndian.AppendUint32(v, uint32(len(meta)))
	return append(append(v, meta...), state...)
}

// values holds the buffers Put builds a record's value in. bbolt copies a
// value into its pages when it commits and keeps no reference after the
// transaction, so a buffer is free again once Put's write has returned:
// at n = 100 that saves half a megabyte of fresh memory per tell.
var values = sync.Pool{New: func() any { return new([]byte) }}

// splitRecord returns the parts of a session's value (aliasing it).
func splitRecord(id, v []byte) (version uint64, meta, state []byte, err error) {
	if len(v) < 12 {
		return 0, nil, nil, fmt.Errorf("store: record %s of %d bytes", id, len(v))
	}
	n := binary.BigEndian.Uint32(v[8:])
	if uint64(n) > uint64(len(v)-12) {
		return 0, nil, nil, fmt.Errorf("store: record %s: meta of %d bytes in %d", id, n, len(v))
	}
	return binary.BigEndian.Uint64(v), v[12 : 12+n], v[12+n:], nil
}

// histPrefix is the start of the history keys of id; histKey is the key of
// its generation g. The length in front keeps every id's keys together.
func histPrefix(id string) []byte {
	k := make([]byte, 2, 2+len(id)+8)
	binary.BigEndian.PutUint16(k, uint16(len(id)))
	return append(k, id...)
}

func histKey(id string, g uint64) []byte {
	return binary.BigEndian.AppendUint64(histPrefix(id), g)
}

// Close waits for the writes under way and queued, folds the told-value
// log into the file, then closes both. Writes after Close return ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closed = true
	for s.leading {
		s.idle.Wait()
	}
	s.mu.Unlock()
	lerr := s.saveLeases()
	if s.log != nil {
		if lerr == nil && s.log.seq > 0 {
			lerr = s.updateFolding(func(*bbolt.Tx) error { return nil })
		}
		s.log.close()
	}
	if err := s.db.Close(); err != nil {
		return err
	}
	if lerr != nil {
		return fmt.Errorf("store: close: leases: %w", lerr)
	}
	return nil
}

// record returns the stored record of id, nil if there is none.
func record(tx *bbolt.Tx, id []byte) []byte {
	b := tx.Bucket(bucketSessions).Bucket(id)
	if b == nil {
		return nil
	}
	return b.Get(keyRecord)
}

// storedVersion returns the version of id, 0 if there is none.
func storedVersion(tx *bbolt.Tx, id []byte) uint64 {
	v := record(tx, id)
	if len(v) < 8 {
		return 0
	}
	if m := tx.Bucket(bucketMetas).Get(id); len(m) >= 8 {
		return binary.BigEndian.Uint64(m)
	}
	return binary.BigEndian.Uint64(v)
}

// current returns the parts of id's stored record (aliasing bbolt's
// pages): those of its value, the version and meta of metas overriding
// them. v is the session's value, nil if there is none.
func current(tx *bbolt.Tx, id []byte) (v []byte, version uint64, meta, state []byte, err error) {
	v = record(tx, id)
	if v == nil {
		return nil, 0, nil, nil, nil
	}
	version, meta, state, err = splitRecord(id, v)
	if m := tx.Bucket(bucketMetas).Get(id); m != nil && err == nil {
		if len(m) < 8 {
			return v, 0, nil, nil, fmt.Errorf("store: meta of %s: %d bytes", id, len(m))
		}
		version, meta = binary.BigEndian.Uint64(m), m[8:]
	}
	return v, version, meta, state, err
}

// Put implements session.Store.
func (s *Store) Put(ctx context.Context, rec session.Record, hist *session.HistoryEntry) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if rec.ID == "" || len(rec.ID) > maxIDLen {
		return 0, fmt.Errorf("store: put: id of %d bytes", len(rec.ID))
	}
	id := []byte(rec.ID)
	next := rec.Version + 1
	keepState := rec.State == nil // the meta only: the stored state stays
	if keepState && rec.Version == 0 {
		return 0, fmt.Errorf("store: put %s: a new record without a state", rec.ID)
	}
	buf := values.Get().(*[]byte)
	var val []byte
	if keepState {
		val = append(binary.BigEndian.AppendUint64((*buf)[:0], next), rec.Meta...)
	} else {
		val = recordValue((*buf)[:0], next, rec.Meta, rec.State)
	}
	defer func() {
		*buf = val
		values.Put(buf)
	}()
	var hk []byte
	if hist != nil {
		hk = histKey(rec.ID, hist.Generation)
	}
	var key, keyVal []byte
	if rec.Version == 0 && rec.Key != "" {
		if len(rec.Key) > bbolt.MaxKeySize {
			return 0, fmt.Errorf("store: put %s: idempotency key of %d bytes", rec.ID, len(rec.Key))
		}
		// len(id) ‖ id, as histPrefix writes it, then the data.
		key, keyVal = []byte(rec.Key), append(histPrefix(rec.ID), rec.KeyData...)
	}
	var lm *metaWrite // the log takes a meta of no history and no key
	if keepState && hist == nil && key == nil {
		lm = &metaWrite{id: rec.ID, version: rec.Version, val: val}
	}
	err := s.write(func(tx *bbolt.Tx) error {
		if got := storedVersion(tx, id); got != rec.Version {
			return putVersionError(rec.ID, rec.Version, got)
		}
		if key != nil && tx.Bucket(bucketKeys).Get(key) != nil {
			return fmt.Errorf("store: put %s: key %q: %w", rec.ID, rec.Key, session.ErrKeyTaken)
		}
		if keepState {
			if err := tx.Bucket(bucketMetas).Put(id, val); err != nil {
				return err
			}
		} else {
			b, err := tx.Bucket(bucketSessions).CreateBucketIfNotExists(id)
			if err != nil {
				return err
			}
			if err := b.Put(keyRecord, val); err != nil {
				return err
			}
			if err := tx.Bucket(bucketMetas).Delete(id); err != nil {
				return err
			}
		}
		if key != nil {
			if err := tx.Bucket(bucketKeys).Put(key, keyVal); err != nil {
				return err
			}
			if err := tx.Bucket(bucketKeyOf).Put(id, key); err != nil {
				return err
			}
		}
		if hist == nil {
			return nil
		}
		if err := dropLeasesTo(tx, id, hist.Generation); err != nil {
			return err
		}
		return tx.Bucket(bucketHist).Put(hk, hist.Data)
	}, lm)
	if err != nil {
		if expected(err) {
			return 0, err
		}
		return 0, fmt.Errorf("store: put %s: %w", rec.ID, err)
	}
	if hist != nil {
		s.leases.dropTo(rec.ID, &hist.Generation)
	}
	return next, nil
}

// putVersionError is Put's error for id, of version want, stored at got
// (0: no record).
func putVersionError(id string, want, got uint64) error {
	if got == 0 {
		return fmt.Errorf("store: put %s: %w", id, session.ErrNoRecord)
	}
	return fmt.Errorf("store: put %s: version %d, stored %d: %w", id, want, got, session.ErrVersion)
}

// Delete implements session.Store: the record (its meta in metas too), its
// history, its idempotency key and its leases go.
func (s *Store) Delete(ctx context.Context, id string, version uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	key := []byte(id)
	err := s.write(func(tx *bbolt.Tx) error {
		got := storedVersion(tx, key)
		switch {
		case got == 0:
			return fmt.Errorf("store: delete %s: %w", id, session.ErrNoRecord)
		case got != version:
			return fmt.Errorf("store: delete %s: version %d, stored %d: %w", id, version, got, session.ErrVersion)
		}
		if err := tx.Bucket(bucketSessions).DeleteBucket(key); err != nil {
			return err
		}
		if k := tx.Bucket(bucketKeyOf).Get(key); k != nil {
			k = bytes.Clone(k) // bbolt's memory, not to be held across writes
			if err := tx.Bucket(bucketKeys).Delete(k); err != nil {
				return err
			}
			if err := tx.Bucket(bucketKeyOf).Delete(key); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketLeases).Delete(key); err != nil {
			return err
		}
		if err := tx.Bucket(bucketMetas).Delete(key); err != nil {
			return err
		}
		c := tx.Bucket(bucketHist).Cursor()
		prefix := histPrefix(id)
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return nil
	}, nil)
	if err == nil {
		s.leases.dropTo(id, nil)
	}
	if err != nil && !expected(err) {
		return fmt.Errorf("store: delete %s: %w", id, err)
	}
	return err
}

// Snapshot returns a consistent copy of the whole file, taken while writes
// go on, as a stream of its bytes, with its size: a file that Open opens.
// The told values of the log are folded into the file first (a commit).
// Nothing else is written to disk: one read transaction's WriteTo sends the
// pages as the caller reads them, and the transaction stays open until
// the copy is read whole or the reader is closed, which the caller must
// do. bbolt grows its memory map only when no read is open, so a commit
// that needs a larger file waits for the copy to end: the caller bounds
// how long a slow reader may take.
func (s *Store) Snapshot() (io.ReadCloser, int64, error) {
	if s.unfolded.Load() { // the told values of the log go into the copy
		if err := s.write(func(*bbolt.Tx) error { return nil }, nil); err != nil {
			return nil, 0, fmt.Errorf("store: snapshot: %w", err)
		}
	}
	tx, err := s.db.Begin(false)
	if err != nil {
		return nil, 0, fmt.Errorf("store: snapshot: %w", err)
	}
	size := tx.Size()
	pr, pw := io.Pipe()
	go func() {
		_, err := tx.WriteTo(pw)
		tx.Rollback()
		if err != nil {
			err = fmt.Errorf("store: snapshot: %w", err)
		}
		pw.CloseWithError(err)
	}()
	return pr, size, nil
}

// Version implements session.Store.
func (s *Store) Version(ctx context.Context, id string) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var v uint64
	h := s.heldOf(id) // before the transaction (toldheld.go)
	err := s.db.View(func(tx *bbolt.Tx) error {
		v = storedVersion(tx, []byte(id))
		if v == 0 {
			return fmt.Errorf("store: version %s: %w", id, session.ErrNoRecord)
		}
		v, _ = overHeld(h, v, nil)
		return nil
	})
	return v, err
}

// Get implements session.Store.
func (s *Store) Get(ctx context.Context, id string) (session.Record, error) {
	if err := ctx.Err(); err != nil {
		return session.Record{}, err
	}
	var rec session.Record
	h := s.heldOf(id)
	err := s.db.View(func(tx *bbolt.Tx) error {
		v, version, meta, state, err := current(tx, []byte(id))
		if v == nil {
			return fmt.Errorf("store: get %s: %w", id, session.ErrNoRecord)
		}
		if err != nil {
			return err
		}
		version, meta = overHeld(h, version, meta)
		rec = session.Record{ID: id, Version: version, Meta: bytes.Clone(meta), State: bytes.Clone(state)}
		return nil
	})
	return rec, err
}

// Key implements session.Store.
func (s *Store) Key(ctx context.Context, key string) (string, []byte, error) {
	if err := ctx.Err(); err != nil {
		return "", nil, err
	}
	var (
		id   string
		data []byte
	)
	err := s.db.View(func(tx *bbolt.Tx) error {
		v := tx.Bucket(bucketKeys).Get([]byte(key))
		if v == nil {
			return fmt.Errorf("store: key %q: %w", key, session.ErrNoRecord)
		}
		if len(v) < 2 || int(binary.BigEndian.Uint16(v)) > len(v)-2 {
			return fmt.Errorf("store: key %q: value of %d bytes", key, len(v))
		}
		n := 2 + int(binary.BigEndian.Uint16(v))
		id, data = string(v[2:n]), bytes.Clone(v[n:])
		return nil
	})
	return id, data, err
}

// List implements session.Store.
func (s *Store) List(ctx context.Context, after string, limit int) ([]session.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []session.Record
	held := s.heldAll()
	err := s.db.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucketSessions).Cursor()
		k, _ := c.Seek([]byte(after))
		if k != nil && string(k) == after {
			k, _ = c.Next()
		}
		for ; k != nil && (limit <= 0 || len(out) < limit); k, _ = c.Next() {
			_, version, meta, _, err := current(tx, k)
			if err != nil {
				return err
			}
			version, meta = overHeld(held[string(k)], version, meta)
			out = append(out, session.Record{ID: string(k), Version: version, Meta: bytes.Clone(meta)})
		}
		return nil
	})
	return out, err
}

// History implements session.Store.
func (s *Store) History(ctx context.Context, id string, from uint64, limit int) ([]session.HistoryEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []session.HistoryEntry
	err := s.db.View(func(tx *bbolt.Tx) error {
		prefix := histPrefix(id)
		c := tx.Bucket(bucketHist).Cursor()
		for k, v := c.Seek(histKey(id, from)); k != nil && bytes.HasPrefix(k, prefix) && (limit <= 0 || len(out) < limit); k, v = c.Next() {
			if len(k) != len(prefix)+8 {
				return fmt.Errorf("store: history %s: key of %d bytes", id, len(k))
			}
			out = append(out, session.HistoryEntry{Generation: binary.BigEndian.Uint64(k[len(prefix):]), Data: bytes.Clone(v)})
		}
		return nil
	})
	return out, err
}

// The optional interfaces of session's stores that bbolt has.
var (
	_ session.Snapshotter = (*Store)(nil)
	_ session.Checker     = (*Store)(nil)
	_ session.Importer    = (*Store)(nil)
)

// Import implements session.Importer: rec as it was (its version too, at
// least 1) and its history, in one transaction.
func (s *Store) Import(ctx context.Context, rec session.Record, hist []session.HistoryEntry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if rec.ID == "" || len(rec.ID) > maxIDLen || len(rec.Key) > bbolt.MaxKeySize {
		return fmt.Errorf("store: import: id of %d bytes, key of %d", len(rec.ID), len(rec.Key))
	}
	id := []byte(rec.ID)
	version := max(rec.Version, 1)
	err := s.write(func(tx *bbolt.Tx) error {
		if got := storedVersion(tx, id); got != 0 {
			return fmt.Errorf("store: import %s: stored already (version %d): %w", rec.ID, got, session.ErrVersion)
		}
		if rec.Key != "" && tx.Bucket(bucketKeys).Get([]byte(rec.Key)) != nil {
			return fmt.Errorf("store: import %s: key %q: %w", rec.ID, rec.Key, session.ErrKeyTaken)
		}
		b, err := tx.Bucket(bucketSessions).CreateBucket(id)
		if err != nil {
			return err
		}
		if err := b.Put(keyRecord, recordValue(nil, version, rec.Meta, rec.State)); err != nil {
			return err
		}
		if rec.Key != "" {
			if err := tx.Bucket(bucketKeys).Put([]byte(rec.Key), append(histPrefix(rec.ID), rec.KeyData...)); err != nil {
				return err
			}
			if err := tx.Bucket(bucketKeyOf).Put(id, []byte(rec.Key)); err != nil {
				return err
			}
		}
		for _, h := range hist {
			if err := tx.Bucket(bucketHist).Put(histKey(rec.ID, h.Generation), h.Data); err != nil {
				return err
			}
		}
		return nil
	}, nil)
	if err != nil && !expected(err) {
		return fmt.Errorf("store: import %s: %w", rec.ID, err)
	}
	return err
}
