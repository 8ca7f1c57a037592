package bolt

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	bbolt "go.etcd.io/bbolt"
)

// keepEarlierLayout copies a file of an earlier layout, before Open migrates
// it, to path.layoutN beside it (N its layout): a server of that layout,
// after a rollback, opens the copy; so does anyone if a migration went
// wrong. The copy is written whole, synced and then renamed, so that
// path.layoutN is whole if it exists; an existing one is left as it is
// (the first is the file as the earlier server left it).
func keepEarlierLayout(db *bbolt.DB, path string) error {
	return db.View(func(tx *bbolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return nil // a new file
		}
		v := string(meta.Get(keySchema))
		if v != "1" && v != "2" && v != "3" && v != "4" && v != "5" {
			return nil // this layout, or one initSchema refuses
		}
		final := path + ".layout" + v
		if _, err := os.Stat(final); err == nil {
			return nil
		}
		err := writeWhole(final, func(f *os.File) error {
			_, err := tx.WriteTo(f)
			return err
		})
		if err != nil {
			return fmt.Errorf("keep the file of layout %s: %w", v, err)
		}
		return nil
	})
}

// writeWhole writes the file final by fill, synced, through a temporary
// file renamed: final is whole if it exists.
func writeWhole(final string, fill func(*os.File) error) error {
	tmp := final + ".partial"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	err = fill(f)
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
		err = syncDir(filepath.Dir(final))
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
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
func initSchema(tx *bbolt.Tx) error {
	if !tx.Writable() {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return errors.New("not a selfcma file (no meta bucket)")
		}
		switch v := string(meta.Get(keySchema)); v {
		case strconv.Itoa(SchemaVersion):
		case "1", "2", "3", "4", "5":
			return fmt.Errorf("file layout version %s: %w", v, ErrEarlierLayout)
		default:
			return fmt.Errorf("file layout version %q, this server reads %d", v, SchemaVersion)
		}
		for _, name := range dataBuckets {
			if tx.Bucket(name) == nil {
				return fmt.Errorf("bucket %s is missing", name)
			}
		}
		if len(meta.Get(keyEpoch)) != 8 {
			return fmt.Errorf("the told-value log's epoch (meta %s) is missing", keyEpoch)
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
	case "2", "3", "4", "5": // 3 adds the buckets of the keys, 5 the leases' (below), 6 the log's epoch
	default:
		return fmt.Errorf("file layout version %q, this server reads %d and migrates layouts 1 to %d", v, SchemaVersion, SchemaVersion-1)
	}
	for _, name := range dataBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	if v != current {
		if v != "" && v != "4" && v != "5" {
			if err := nestRecords(tx); err != nil {
				return fmt.Errorf("migrate layout %s to %d: %w", v, SchemaVersion, err)
			}
		}
		// Layout 6: the told-value log, of a random first epoch (a log
		// left by another file at this path is of another epoch: ignored).
		if err := meta.Put(keyEpoch, binary.BigEndian.AppendUint64(nil, newEpoch(0))); err != nil {
			return err
		}
		return meta.Put(keySchema, []byte(current))
	}
	return nil
}

// newEpoch is a random epoch for the told-value log, other than old.
func newEpoch(old uint64) uint64 {
	for {
		var b [8]byte
		rand.Read(b[:])
		if e := binary.BigEndian.Uint64(b[:]); e != old && e != 0 {
			return e
		}
	}
}

// nestRecords moves each record that is a value of the sessions bucket
// (layouts 1 to 3) into a bucket of its own (layout 4), in the caller's
// transaction.
func nestRecords(tx *bbolt.Tx) error {
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
func migrateV1(tx *bbolt.Tx) error {
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
