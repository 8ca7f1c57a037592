package bolt

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
	bbolt "go.etcd.io/bbolt"
)

// checkFile writes a file of three sessions (one created with an
// idempotency key, one deleted) and returns its path, closed.
func checkFile(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "check.db")
	s := open(t, path)
	for _, id := range []string{"a", "b", "gone"} {
		rec := session.Record{ID: id, Meta: []byte("m-" + id), State: []byte("s-" + id)}
		if id == "b" {
			rec.Key, rec.KeyData = "key-b", []byte("data")
		}
		v := put(t, s, rec, nil)
		for g := range uint64(3) {
			rec.Version = v
			v = put(t, s, rec, &session.HistoryEntry{Generation: g, Data: []byte("h")})
		}
		if id == "gone" {
			if err := s.Delete(ctx, id, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkReadOnly opens the file at path read-only and returns what Check
// finds in it.
func checkReadOnly(t *testing.T, path string) []error {
	t.Helper()
	s, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return s.Check(context.Background())
}

// TestCheck: a sound file has no problem, read-only or not; each fault
// planted in it is named.
func TestCheck(t *testing.T) {
	ctx := context.Background()
	path := checkFile(t)
	for _, ro := range []bool{false, true} {
		s, err := Open(path, &Options{ReadOnly: ro})
		if err != nil {
			t.Fatal(err)
		}
		if probs := s.Check(ctx); probs != nil {
			t.Errorf("read-only %v: a sound file: %v", ro, probs)
		}
		s.Close()
	}

	u16 := func(s string) []byte { return append(binary.BigEndian.AppendUint16(nil, uint16(len(s))), s...) }
	faults := []struct {
		name  string
		plant func(tx *bbolt.Tx) error
		want  string
	}{
		{"short record", func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketSessions).Bucket([]byte("a")).Put(keyRecord, []byte("12345"))
		}, "record a of 5 bytes"},
		{"no record", func(tx *bbolt.Tx) error {
			_, err := tx.Bucket(bucketSessions).CreateBucket([]byte("c"))
			return err
		}, "record c of 0 bytes"},
		{"a value for a bucket", func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketSessions).Put([]byte("d"), []byte("a flat record"))
		}, "sessions: d is a value, not a session's bucket"},
		{"history of no session", func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketHist).Put(histKey("nobody", 4), []byte("h"))
		}, "history: entries of nobody, which is not stored"},
		{"history key", func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketHist).Put(append(u16("a"), 1, 2), []byte("h"))
		}, "history: key 000161" + "0102 of 5 bytes"},
		{"key of no session", func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketKeys).Put([]byte("key-x"), u16("nobody"))
		}, `key "key-x": of nobody, which is not stored`},
		{"key value", func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketKeys).Put([]byte("key-y"), []byte{0, 9, 'a'})
		}, `key "key-y": value of 3 bytes`},
		{"key without keyof", func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketKeys).Put([]byte("key-a"), u16("a"))
		}, `key "key-a": of a, whose key is ""`},
		{"keyof without key", func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketKeys).Delete([]byte("key-b"))
		}, `keyof: b has key "key-b", which keys lacks`},
		{"keyof of no session", func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketKeyOf).Put([]byte("nobody"), []byte("key-b"))
		}, `keyof: nobody, which is not stored, has key "key-b"`},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "fault.db")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
			db, err := bbolt.Open(p, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Update(f.plant); err != nil {
				t.Fatal(err)
			}
			db.Close()
			probs := checkReadOnly(t, p)
			if len(probs) != 1 || !strings.Contains(probs[0].Error(), f.want) {
				t.Errorf("got %v, want one problem naming %q", probs, f.want)
			}
		})
	}
}

// TestCheckPages: a page out of place (one bbolt's own check finds too) is
// refused by Open, before bbolt maps the file, naming the page.
func TestCheckPages(t *testing.T) {
	path := checkFile(t)
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	var pgid uint64
	err = db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketHist)
		for g := range uint64(200) { // a bucket of its own pages, not inline
			if err := b.Put(histKey("a", 10+g), make([]byte, 100)); err != nil {
				return err
			}
		}
		return nil
	})
	db.View(func(tx *bbolt.Tx) error {
		pgid = uint64(tx.Bucket(bucketHist).Root())
		return nil
	})
	db.Close()
	if err != nil || pgid < 3 {
		t.Fatalf("root page %d, %v", pgid, err)
	}
	// The history bucket's root page, overwritten by a copy of page 2
	// (the first freelist or data page of the file, not this bucket's).
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	page := make([]byte, os.Getpagesize())
	if _, err := f.ReadAt(page, 2*int64(len(page))); err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint64(page, pgid) // the page's own id, as bbolt expects
	if _, err := f.WriteAt(page, int64(pgid)*int64(len(page))); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, ro := range []bool{true, false} {
		s, err := Open(path, &Options{ReadOnly: ro})
		var de *DamagedError
		if !errors.As(err, &de) || !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "page ") {
			t.Errorf("read-only %v: got %v, want a damaged file naming a page", ro, err)
		}
		if s != nil {
			s.Close()
		}
	}
}

// TestOpenReadOnly: a read-only open writes nothing, creates no file and
// reads only the current layout.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	if _, err := Open(missing, &Options{ReadOnly: true}); err == nil {
		t.Error("opened a file that does not exist")
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the open made the file: %v", err)
	}

	path := checkFile(t)
	s, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, session.Record{ID: "c", Meta: []byte("m"), State: []byte{}}, nil); err == nil {
		t.Error("a read-only store took a write")
	}
	if rec, err := s.Get(ctx, "a"); err != nil || string(rec.State) != "s-a" {
		t.Errorf("Get: %+v, %v", rec, err)
	}
	s.Close()

	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Put(keySchema, []byte("2")) })
	db.Close()
	if _, err := Open(path, &Options{ReadOnly: true}); !errors.Is(err, ErrEarlierLayout) || !strings.Contains(err.Error(), "layout version 2") {
		t.Errorf("opened a file of layout 2 read-only: %v", err)
	}
}
