// Package store is the bbolt implementation of session.Store.
//
// Layout of the file (bbolt buckets), version 4:
//
//	meta      "schema" -> the layout's version, decimal
//	sessions  id -> a bucket: "r" -> version (8 bytes) ‖ len(meta) (4 bytes) ‖ meta ‖ state
//	hist      len(id) (2 bytes) ‖ id ‖ generation (8 bytes) -> entry
//	keys      idempotency key -> len(id) (2 bytes) ‖ id ‖ key data
//	keyof     id -> idempotency key (the sessions created with one)
//
// Integers are big endian. A write puts two values: the record and the
// generation's history entry, whose key sorts after the session's earlier
// ones, so a tell dirties the record's pages and a few small ones. Each
// record has a bucket of its own because bbolt splits no leaf of four
// values or fewer, however large they are: when layout 3 kept the records
// as values of one bucket, a tell rewrote two to four sessions' records,
// a megabyte or two at n = 100. (Layout 1 kept the meta, the state and a
// history bucket per session apart; layout 2 had no keys and keyof. Open
// migrates a file of an earlier layout in one transaction.)
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
package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/selfcma/selfcma/internal/session"
	bolt "go.etcd.io/bbolt"
)

// SchemaVersion is the version of the file's layout, kept in the meta
// bucket. Bump it with any change of the layout, and migrate.
const SchemaVersion = 4

var (
	bucketMeta     = []byte("meta")
	bucketSessions = []byte("sessions")
	bucketHist     = []byte("hist")
	bucketKeys     = []byte("keys")
	bucketKeyOf    = []byte("keyof")
	keySchema      = []byte("schema")
	keyRecord      = []byte("r") // the one key of a session's bucket

	// dataBuckets are the buckets of the layout besides meta.
	dataBuckets = [][]byte{bucketSessions, bucketHist, bucketKeys, bucketKeyOf}

	// Layout 1's buckets, read by the migration only.
	bucketStatesV1  = []byte("states")
	bucketHistoryV1 = []byte("history")
)

// maxBatch is the most writes one transaction takes.
const maxBatch = 256

// ErrClosed is returned by writes after Close.
var ErrClosed = errors.New("store: closed")

// ErrEarlierLayout is the error of a read-only Open of a file of an earlier
// layout, which only a writable Open migrates.
var ErrEarlierLayout = fmt.Errorf("an earlier layout than %d, which a read-only open does not migrate", SchemaVersion)

// Store is a session.Store in a bbolt file. It is safe for concurrent use.
type Store struct {
	db *bolt.DB

	mu      sync.Mutex // guards closed, queue and leading
	closed  bool
	queue   []*op      // writes waiting for the next commit, in order
	leading bool       // a writer is committing; it hands on to queue[0]
	idle    *sync.Cond // signalled when leading turns false

	commits  atomic.Int64 // write transactions committed
	onCommit func(writes int, took time.Duration)
}

var _ session.Store = (*Store)(nil)

// op is one write: fn runs inside a read-write transaction. An fn returns
// an error wrapping session.ErrNoRecord or session.ErrVersion only before it
// wrote anything, so the transaction can go on with the other writes; any
// other error rolls the whole transaction back.
type op struct {
	fn   func(*bolt.Tx) error
	done chan result
}

// result is what a queued write receives: its outcome, or lead (the
// committing writer hands on to it, and it commits the queue).
type result struct {
	err  error
	lead bool
}

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
}

// Open opens or creates the file at path. It fails if another process holds
// the file (after a second) or if the file's layout is later than
// SchemaVersion. A file of an earlier layout is copied to path.layoutN,
// then migrated in one transaction.
func Open(path string, opt *Options) (*Store, error) {
	bo := &bolt.Options{Timeout: time.Second}
	if opt != nil {
		bo.NoSync, bo.ReadOnly = opt.NoSync, opt.ReadOnly
	}
	db, err := bolt.Open(path, 0o600, bo)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	init := db.Update
	if bo.ReadOnly {
		init = db.View
	} else if err := keepEarlierLayout(db, path); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := init(initSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	s := &Store{db: db}
	if opt != nil {
		s.onCommit = opt.OnCommit
	}
	s.idle = sync.NewCond(&s.mu)
	return s, nil
}

// keepEarlierLayout copies a file of an earlier layout, before Open migrates
// it, to path.layoutN beside it (N its layout): a server of that layout,
// after a rollback, opens the copy; so does anyone if a migration went
// wrong. The copy is written whole, synced and then renamed, so that
// path.layoutN is whole if it exists; an existing one is left as it is
// (the first is the file as the earlier server left it).
func keepEarlierLayout(db *bolt.DB, path string) error {
	return db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return nil // a new file
		}
		v := string(meta.Get(keySchema))
		if v != "1" && v != "2" && v != "3" {
			return nil // this layout, or one initSchema refuses
		}
		final := path + ".layout" + v
		if _, err := os.Stat(final); err == nil {
			return nil
		}
		tmp := final + ".partial"
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return fmt.Errorf("keep the file of layout %s: %w", v, err)
		}
		_, err = tx.WriteTo(f)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp, final)
		}
		if err == nil {
			err = syncDir(filepath.Dir(path))
		}
		if err != nil {
			os.Remove(tmp)
			return fmt.Errorf("keep the file of layout %s: %w", v, err)
		}
		return nil
	})
}

// syncDir makes the entries of directory dir (a rename in it) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// initSchema creates the buckets of a new file and migrates those of an
// earlier layout; in a read-only transaction it only checks that the file
// is of this layout.
func initSchema(tx *bolt.Tx) error {
	if !tx.Writable() {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return errors.New("not a selfcma file (no meta bucket)")
		}
		switch v := string(meta.Get(keySchema)); v {
		case strconv.Itoa(SchemaVersion):
		case "1", "2", "3":
			return fmt.Errorf("file layout version %s: %w", v, ErrEarlierLayout)
		default:
			return fmt.Errorf("file layout version %q, this server reads %d", v, SchemaVersion)
		}
		for _, name := range dataBuckets {
			if tx.Bucket(name) == nil {
				return fmt.Errorf("bucket %s is missing", name)
			}
		}
		return nil
	}
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	current := strconv.Itoa(SchemaVersion)
	v := string(meta.Get(keySchema))
	switch v {
	case "", current:
	case "1":
		if err := migrateV1(tx); err != nil {
			return fmt.Errorf("migrate layout 1 to %d: %w", SchemaVersion, err)
		}
	case "2", "3": // 3 adds the buckets of the keys, below
	default:
		return fmt.Errorf("file layout version %q, this server reads %d (and migrates 1 to 3)", v, SchemaVersion)
	}
	for _, name := range dataBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	if v != current {
		if v != "" {
			if err := nestRecords(tx); err != nil {
				return fmt.Errorf("migrate layout %s to %d: %w", v, SchemaVersion, err)
			}
		}
		return meta.Put(keySchema, []byte(current))
	}
	return nil
}

// nestRecords moves each record that is a value of the sessions bucket
// (layouts 1 to 3) into a bucket of its own (layout 4), in the caller's
// transaction.
func nestRecords(tx *bolt.Tx) error {
	sess := tx.Bucket(bucketSessions)
	var ids [][]byte
	if err := sess.ForEach(func(id, v []byte) error {
		if v != nil {
			ids = append(ids, bytes.Clone(id))
		}
		return nil
	}); err != nil {
		return err
	}
	for _, id := range ids {
		v := bytes.Clone(sess.Get(id))
		if err := sess.Delete(id); err != nil {
			return err
		}
		b, err := sess.CreateBucket(id)
		if err != nil {
			return err
		}
		if err := b.Put(keyRecord, v); err != nil {
			return err
		}
	}
	return nil
}

// migrateV1 rewrites layout 1 (sessions: id -> version ‖ meta; states:
// id -> state; history: id -> bucket of generation -> entry) as layout 2,
// in the caller's transaction: all of it or nothing. (initSchema goes on
// to layout 4.)
func migrateV1(tx *bolt.Tx) error {
	sess, states, hist := tx.Bucket(bucketSessions), tx.Bucket(bucketStatesV1), tx.Bucket(bucketHistoryV1)
	if sess == nil || states == nil || hist == nil {
		return errors.New("a bucket of layout 1 is missing")
	}
	type rec struct{ id, val []byte }
	var recs []rec
	err := sess.ForEach(func(id, v []byte) error {
		if len(v) < 8 {
			return fmt.Errorf("record %s of %d bytes", id, len(v))
		}
		recs = append(recs, rec{bytes.Clone(id), recordValue(nil, binary.BigEndian.Uint64(v), v[8:], states.Get(id))})
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := sess.Put(r.id, r.val); err != nil {
			return err
		}
	}
	nh, err := tx.CreateBucketIfNotExists(bucketHist)
	if err != nil {
		return err
	}
	err = hist.ForEachBucket(func(id []byte) error {
		if len(id) > maxIDLen {
			return fmt.Errorf("id of %d bytes", len(id))
		}
		return hist.Bucket(id).ForEach(func(g, e []byte) error {
			if len(g) != 8 {
				return fmt.Errorf("history %s: key of %d bytes", id, len(g))
			}
			return nh.Put(histKey(string(id), binary.BigEndian.Uint64(g)), e)
		})
	})
	if err != nil {
		return err
	}
	if err := tx.DeleteBucket(bucketStatesV1); err != nil {
		return err
	}
	return tx.DeleteBucket(bucketHistoryV1)
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

// Close waits for the writes under way and queued, then closes the file.
// Writes after Close return ErrClosed.
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
	return s.db.Close()
}

// write queues fn and returns when its transaction is committed (or
// failed). The writer that finds no commit under way leads: it commits
// up to maxBatch queued writes, its own first, and hands the lead to the
// first write still queued, or lets it go.
func (s *Store) write(fn func(*bolt.Tx) error) error {
	o := &op{fn: fn, done: make(chan result, 1)}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.queue = append(s.queue, o)
	if s.leading {
		s.mu.Unlock()
		r := <-o.done
		if !r.lead {
			return r.err
		}
		s.mu.Lock() // handed the lead: o is queue[0]
	}
	s.leading = true
	batch := slices.Clone(s.queue[:min(len(s.queue), maxBatch)])
	s.queue = slices.Delete(s.queue, 0, len(batch))
	s.mu.Unlock()

	s.lead(batch)
	return (<-o.done).err
}

// lead commits batch and hands the lead on. If the commit panics (bbolt
// panics on a corrupted file), the writes of the batch that have no answer
// get an error and the lead is handed on before the panic goes on up, so
// that no write waits for ever.
func (s *Store) lead(batch []*op) {
	defer func() {
		p := recover()
		if p != nil {
			for _, o := range batch {
				select {
				case o.done <- result{err: fmt.Errorf("store: commit panicked: %v", p)}:
				default: // answered already
				}
			}
		}
		s.mu.Lock()
		if len(s.queue) > 0 {
			s.queue[0].done <- result{lead: true}
		} else {
			s.leading = false
			s.idle.Broadcast()
		}
		s.mu.Unlock()
		if p != nil {
			panic(p)
		}
	}()
	s.commit(batch)
}

// commit runs the batch in one transaction. If an fn fails unexpectedly,
// the transaction is rolled back and every fn runs again on its own.
func (s *Store) commit(batch []*op) {
	errs := make([]error, len(batch))
	start := time.Now()
	err := s.db.Update(func(tx *bolt.Tx) error {
		for i, o := range batch {
			errs[i] = o.fn(tx)
			if errs[i] != nil && !expected(errs[i]) {
				return errs[i]
			}
		}
		return nil
	})
	if err == nil {
		s.commits.Add(1)
		if s.onCommit != nil {
			s.onCommit(len(batch), time.Since(start))
		}
		for i, o := range batch {
			o.done <- result{err: errs[i]}
		}
		return
	}
	if len(batch) == 1 {
		batch[0].done <- result{err: err}
		return
	}
	for _, o := range batch {
		o.done <- result{err: s.db.Update(o.fn)}
	}
}

func expected(err error) bool {
	return errors.Is(err, session.ErrNoRecord) || errors.Is(err, session.ErrVersion) || errors.Is(err, session.ErrKeyTaken)
}

// record returns the stored record of id, nil if there is none.
func record(tx *bolt.Tx, id []byte) []byte {
	b := tx.Bucket(bucketSessions).Bucket(id)
	if b == nil {
		return nil
	}
	return b.Get(keyRecord)
}

// storedVersion returns the version of id, 0 if there is none.
func storedVersion(tx *bolt.Tx, id []byte) uint64 {
	v := record(tx, id)
	if len(v) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
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
	buf := values.Get().(*[]byte)
	val := recordValue((*buf)[:0], next, rec.Meta, rec.State)
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
		if len(rec.Key) > bolt.MaxKeySize {
			return 0, fmt.Errorf("store: put %s: idempotency key of %d bytes", rec.ID, len(rec.Key))
		}
		// len(id) ‖ id, as histPrefix writes it, then the data.
		key, keyVal = []byte(rec.Key), append(histPrefix(rec.ID), rec.KeyData...)
	}
	err := s.write(func(tx *bolt.Tx) error {
		if got := storedVersion(tx, id); got != rec.Version {
			if got == 0 {
				return fmt.Errorf("store: put %s: %w", rec.ID, session.ErrNoRecord)
			}
			return fmt.Errorf("store: put %s: version %d, stored %d: %w", rec.ID, rec.Version, got, session.ErrVersion)
		}
		if key != nil && tx.Bucket(bucketKeys).Get(key) != nil {
			return fmt.Errorf("store: put %s: key %q: %w", rec.ID, rec.Key, session.ErrKeyTaken)
		}
		b, err := tx.Bucket(bucketSessions).CreateBucketIfNotExists(id)
		if err != nil {
			return err
		}
		if err := b.Put(keyRecord, val); err != nil {
			return err
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
		return tx.Bucket(bucketHist).Put(hk, hist.Data)
	})
	if err != nil {
		if expected(err) {
			return 0, err
		}
		return 0, fmt.Errorf("store: put %s: %w", rec.ID, err)
	}
	return next, nil
}

// Delete implements session.Store.
func (s *Store) Delete(ctx context.Context, id string, version uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	key := []byte(id)
	err := s.write(func(tx *bolt.Tx) error {
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
		c := tx.Bucket(bucketHist).Cursor()
		prefix := histPrefix(id)
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && !expected(err) {
		return fmt.Errorf("store: delete %s: %w", id, err)
	}
	return err
}

// Snapshot returns a consistent copy of the whole file, taken while writes
// go on, as a stream of its bytes, with its size: a file that Open opens.
// Nothing is written to disk: one read transaction's WriteTo sends the
// pages as the caller reads them, and the transaction stays open until
// the copy is read whole or the reader is closed, which the caller must
// do. bbolt grows its memory map only when no read is open, so a commit
// that needs a larger file waits for the copy to end: the caller bounds
// how long a slow reader may take.
func (s *Store) Snapshot() (io.ReadCloser, int64, error) {
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

// Get implements session.Store.
func (s *Store) Get(ctx context.Context, id string) (session.Record, error) {
	if err := ctx.Err(); err != nil {
		return session.Record{}, err
	}
	var rec session.Record
	err := s.db.View(func(tx *bolt.Tx) error {
		v := record(tx, []byte(id))
		if v == nil {
			return fmt.Errorf("store: get %s: %w", id, session.ErrNoRecord)
		}
		version, meta, state, err := splitRecord([]byte(id), v)
		if err != nil {
			return err
		}
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
	err := s.db.View(func(tx *bolt.Tx) error {
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
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketSessions).Cursor()
		k, _ := c.Seek([]byte(after))
		if k != nil && string(k) == after {
			k, _ = c.Next()
		}
		for ; k != nil && (limit <= 0 || len(out) < limit); k, _ = c.Next() {
			version, meta, _, err := splitRecord(k, record(tx, k))
			if err != nil {
				return err
			}
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
	err := s.db.View(func(tx *bolt.Tx) error {
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
