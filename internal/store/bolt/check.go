package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	bbolt "go.etcd.io/bbolt"
)

// Check reads the whole file, as a restart on it would, and returns what is
// wrong with it (nil when nothing is). Open has walked the pages already
// (pages.go: a file whose pages bbolt cannot read safely is not opened);
// Check goes on with
//   - bbolt's check of the pages: every page reachable once, none both free
//     and in use, keys in order;
//   - every session is a bucket whose record splits into version, meta and
//     state;
//   - every history entry and every idempotency key belongs to a session of
//     the file, and keys and keyof name each other;
//   - the told-value log beside the file reads (a read-only Open's: a
//     writable Open refuses a damaged log).
//
// What the values say (a record that decodes, a history without gaps) is
// session.Check's to read. Check reads in one transaction: on a file open
// for writing, it holds up the growth of the file while it runs.
func (s *Store) Check(ctx context.Context) []error {
	probs := append([]error(nil), s.logProblems...)
	report := func(format string, args ...any) {
		probs = append(probs, fmt.Errorf(format, args...))
	}
	err := s.db.View(func(tx *bbolt.Tx) (err error) {
		defer func() {
			if r := recover(); r != nil { // bbolt panics on pages it cannot read
				err = fmt.Errorf("reading the file: %v", r)
			}
		}()
		for err := range tx.Check() {
			report("pages: %v", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		sessions := tx.Bucket(bucketSessions)
		stored := func(id []byte) bool { return sessions.Bucket(id) != nil }
		if err := sessions.ForEach(func(id, v []byte) error {
			if v != nil {
				report("sessions: %s is a value, not a session's bucket", id)
				return nil
			}
			if _, _, _, err := splitRecord(id, record(tx, id)); err != nil {
				report("%v", err)
			}
			return nil
		}); err != nil {
			return err
		}

		// History entries: len(id) ‖ id ‖ generation, of a stored session.
		var last []byte // the id of the previous entry, checked already
		if err := tx.Bucket(bucketHist).ForEach(func(k, _ []byte) error {
			if len(k) < 2 || len(k) != 2+int(binary.BigEndian.Uint16(k))+8 {
				report("history: key %x of %d bytes", k, len(k))
				return nil
			}
			id := k[2 : len(k)-8]
			if last != nil && bytes.Equal(id, last) {
				return nil
			}
			last = bytes.Clone(id)
			if !stored(id) {
				report("history: entries of %s, which is not stored", id)
			}
			return nil
		}); err != nil {
			return err
		}

		// Idempotency keys: keys holds key -> len(id) ‖ id ‖ data, keyof
		// id -> key, one for one.
		keyOf := tx.Bucket(bucketKeyOf)
		if err := tx.Bucket(bucketKeys).ForEach(func(key, v []byte) error {
			if len(v) < 2 || int(binary.BigEndian.Uint16(v)) > len(v)-2 {
				report("key %q: value of %d bytes", key, len(v))
				return nil
			}
			id := v[2 : 2+int(binary.BigEndian.Uint16(v))]
			switch {
			case !stored(id):
				report("key %q: of %s, which is not stored", key, id)
			case !bytes.Equal(keyOf.Get(id), key):
				report("key %q: of %s, whose key is %q", key, id, keyOf.Get(id))
			}
			return nil
		}); err != nil {
			return err
		}
		return keyOf.ForEach(func(id, key []byte) error {
			if !stored(id) {
				report("keyof: %s, which is not stored, has key %q", id, key)
			} else if tx.Bucket(bucketKeys).Get(key) == nil {
				report("keyof: %s has key %q, which keys lacks", id, key)
			}
			return nil
		})
	})
	if err != nil {
		probs = append(probs, fmt.Errorf("store: check: %w", err))
	}
	return probs
}
