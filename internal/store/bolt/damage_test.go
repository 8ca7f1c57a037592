package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/session"
	"go.etcd.io/bbolt"
)

// damageFile writes a file of n sessions, each with a record of a few
// pages for every third one (an overflow page or two), a history of gens
// entries and, for every other one, an idempotency key. It returns the
// file's path and its bytes.
func damageFile(t *testing.T, n, gens int) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "damage.db")
	s := open(t, path)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		id := fmt.Sprintf("s%03d", i)
		state := make([]byte, 200+rng.IntN(300))
		if i%3 == 0 {
			state = make([]byte, 5000+rng.IntN(5000))
		}
		for j := range state {
			state[j] = byte(rng.Uint32())
		}
		rec := session.Record{ID: id, Meta: []byte("meta of " + id), State: state}
		if i%2 == 0 {
			rec.Key, rec.KeyData = "key-"+id, []byte("fingerprint")
		}
		v := put(t, s, rec, nil)
		rec.Key, rec.KeyData = "", nil
		for g := range uint64(gens) {
			rec.Version = v
			v = put(t, s, rec, &session.HistoryEntry{Generation: g, Data: bytes.Repeat([]byte{byte(g)}, 40)})
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, b
}

// snapshotOf reads every record, history and key of the sound file at path
// with bbolt.
type sessionBytes struct {
	record []byte
	hist   [][]byte
	key    string
	keyVal []byte
}

func snapshotOf(t *testing.T, path string) map[string]sessionBytes {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]sessionBytes{}
	err = db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketSessions).ForEachBucket(func(id []byte) error {
			sb := sessionBytes{record: bytes.Clone(record(tx, id))}
			c := tx.Bucket(bucketHist).Cursor()
			p := histPrefix(string(id))
			for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
				sb.hist = append(sb.hist, bytes.Clone(v))
			}
			if k := tx.Bucket(bucketKeyOf).Get(id); k != nil {
				sb.key, sb.keyVal = string(k), bytes.Clone(tx.Bucket(bucketKeys).Get(k))
			}
			out[string(id)] = sb
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameSession(a, b sessionBytes) bool {
	return bytes.Equal(a.record, b.record) && a.key == b.key && bytes.Equal(a.keyVal, b.keyVal) &&
		slices.EqualFunc(a.hist, b.hist, bytes.Equal)
}

// TestOpenCutShort: a file cut anywhere is refused by Open, read-only or
// not, with a *DamagedError (or, cut to nothing, taken as new), never a
// fault; OpenDamaged reads the sessions whose pages are left.
func TestOpenCutShort(t *testing.T) {
	_, whole := damageFile(t, 12, 5)
	pf, err := readPageFile(bytes.NewReader(whole), int64(len(whole)))
	if err != nil {
		t.Fatal(err)
	}
	inUse := int(pf.meta.hwm) * pf.pageSize // bbolt grows the file ahead
	dir := t.TempDir()
	for i, n := range []int{1, 100, 4095, 4096, 8191, 8192, 3 * 4096, inUse / 2, inUse - 4096, inUse - 1} {
		cut := filepath.Join(dir, fmt.Sprintf("cut%d.db", i))
		if err := os.WriteFile(cut, whole[:n], 0o600); err != nil {
			t.Fatal(err)
		}
		for _, ro := range []bool{true, false} {
			s, err := Open(cut, &Options{ReadOnly: ro})
			if err == nil {
				s.Close()
				t.Errorf("cut to %d bytes, read-only %v: opened", n, ro)
			} else if !errors.Is(err, ErrDamaged) {
				t.Errorf("cut to %d bytes, read-only %v: %v, want a damaged file", n, ro, err)
			}
		}
		if d, err := OpenDamaged(cut); err == nil {
			d.Close()
		}
	}
	cut := filepath.Join(dir, "cut.db")
	if err := os.WriteFile(cut, whole[:inUse], 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(cut, nil)
	if err != nil {
		t.Fatalf("cut after the pages in use: %v", err)
	}
	s.Close()
}

// TestRandomDamage: bytes overwritten and files cut at random never make
// Open, Check or OpenDamaged fault or panic, and a file that Open takes
// checks (bbolt then reads it safely).
func TestRandomDamage(t *testing.T) {
	ctx := context.Background()
	_, whole := damageFile(t, 20, 8)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	opened := 0
	for i := range 200 {
		b := bytes.Clone(whole)
		switch i % 4 {
		case 0: // a few bytes
			for range 1 + rng.IntN(8) {
				b[rng.IntN(len(b))] = byte(rng.Uint32())
			}
		case 1: // a run of bytes
			at := rng.IntN(len(b))
			for j := at; j < min(len(b), at+1+rng.IntN(64)); j++ {
				b[j] = byte(rng.Uint32())
			}
		case 2: // a page header
			at := rng.IntN(len(b)/4096) * 4096
			for j := at; j < at+16; j++ {
				b[j] = byte(rng.Uint32())
			}
		case 3: // cut short
			b = b[:rng.IntN(len(b))]
		}
		path := filepath.Join(dir, fmt.Sprintf("d%d.db", i))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if s, err := Open(path, &Options{ReadOnly: true}); err == nil {
			opened++
			s.Check(ctx)
			s.Close()
		}
		if d, err := OpenDamaged(path); err == nil {
			recs, _ := d.List(ctx, "", 0)
			for _, r := range recs {
				d.Get(ctx, r.ID)
				d.History(ctx, r.ID, 0, 0)
				d.KeyOf(ctx, r.ID)
			}
			d.Lost()
			d.Close()
		}
		os.Remove(path)
	}
	t.Logf("%d of 200 damaged copies open", opened)
}

// TestSalvage: a sound file is read whole by OpenDamaged and salvaged byte
// for byte; with a page of one session's record overwritten, the sessions
// whose pages are untouched come back byte for byte.
func TestSalvage(t *testing.T) {
	ctx := context.Background()
	path, whole := damageFile(t, 30, 6)
	want := snapshotOf(t, path)
	all := func(string) bool { return true }

	d, err := OpenDamaged(path)
	if err != nil {
		t.Fatal(err)
	}
	if p := d.Problems(); len(p) > 0 {
		t.Errorf("a sound file: %v", p)
	}
	if l := d.Lost(); len(l) > 0 {
		t.Errorf("a sound file: lost %v", l)
	}
	var ids []string
	recs, _ := d.List(ctx, "", 0)
	for _, r := range recs {
		ids = append(ids, r.ID)
	}
	if len(ids) != len(want) {
		t.Fatalf("listed %d sessions, want %d", len(ids), len(want))
	}
	out := filepath.Join(t.TempDir(), "new.db")
	n, err := Salvage(ctx, d, ids, all, out)
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	if n.Sessions != 30 || n.HistoryEntries != 180 || n.Keys != 15 {
		t.Errorf("salvaged %+v", n)
	}
	got := snapshotOf(t, out)
	for id, w := range want {
		if !sameSession(got[id], w) {
			t.Errorf("session %s differs after salvage", id)
		}
	}
	if _, err := Salvage(ctx, d, ids, all, out); err == nil {
		t.Error("salvaged into a file that exists")
	}

	// The record page of the session with a record of pages of its own.
	d, err = OpenDamaged(path)
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string][]uint64{}
	for id := range want {
		pages[id] = d.Pages(id)
	}
	d.Close()
	victim, ps := "s003", uint64(os.Getpagesize())
	b := bytes.Clone(whole)
	var hit uint64
	for _, p := range pages[victim] {
		shared := false
		for id, ps := range pages {
			shared = shared || id != victim && slices.Contains(ps, p)
		}
		if !shared && order.Uint64(whole[p*ps:]) == p { // a page's first, not an overflow page
			hit = p
		}
	}
	if hit == 0 {
		t.Fatalf("no page of %s alone among %v", victim, pages[victim])
	}
	copy(b[hit*ps:], bytes.Repeat([]byte{0xAB}, 16)) // its header
	damaged := filepath.Join(t.TempDir(), "damaged.db")
	if err := os.WriteFile(damaged, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(damaged, nil); !errors.Is(err, ErrDamaged) {
		t.Errorf("Open of the damaged copy: %v", err)
		if err == nil {
			s.Close()
		}
	}
	d, err = OpenDamaged(damaged)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if len(d.Problems()) == 0 {
		t.Error("no problem found in the damaged copy")
	}
	recs, _ = d.List(ctx, "", 0)
	ids = ids[:0]
	for _, r := range recs {
		ids = append(ids, r.ID)
	}
	if slices.Contains(ids, victim) {
		t.Errorf("%s listed, its page %d overwritten", victim, hit)
	}
	out = filepath.Join(t.TempDir(), "new.db")
	if _, err := Salvage(ctx, d, ids, all, out); err != nil {
		t.Fatal(err)
	}
	got = snapshotOf(t, out)
	for id, w := range want {
		intact := !slices.Contains(pages[id], hit)
		if intact && !sameSession(got[id], w) {
			t.Errorf("session %s, untouched, differs after salvage", id)
		}
	}
	s, err := Open(out, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if p := s.Check(ctx); len(p) > 0 {
		t.Errorf("the salvaged file: %v", p)
	}
}

// TestInUse: a file held by a Store is in use for another Open, read-only
// or not, and for OpenDamaged: each returns ErrInUse (a wait for the
// lock's release would never return, and go test's -timeout ends it).
func TestInUse(t *testing.T) {
	path, _ := damageFile(t, 2, 1)
	s := open(t, path)
	defer s.Close()
	for _, ro := range []bool{true, false} {
		if _, err := Open(path, &Options{ReadOnly: ro}); !errors.Is(err, ErrInUse) {
			t.Errorf("read-only %v: %v, want in use", ro, err)
		}
	}
	if _, err := OpenDamaged(path); !errors.Is(err, ErrInUse) {
		t.Errorf("OpenDamaged: %v, want in use", err)
	}
}

// FuzzWalk: the page walk reads anything, a real file damaged or not,
// without a panic or a read out of its bounds.
func FuzzWalk(f *testing.F) {
	path := filepath.Join(f.TempDir(), "fuzz.db")
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{PageSize: 1024, NoSync: true}) // a small file to mutate
	if err != nil {
		f.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		if err := initSchema(tx); err != nil {
			return err
		}
		for i := range 6 {
			b, err := tx.Bucket(bucketSessions).CreateBucket([]byte(fmt.Sprint("s", i)))
			if err != nil {
				return err
			}
			if err := b.Put(keyRecord, bytes.Repeat([]byte{byte(i)}, 50+400*i)); err != nil {
				return err
			}
			if err := tx.Bucket(bucketHist).Put(histKey(fmt.Sprint("s", i), 0), []byte("h")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	db.Close()
	whole, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	pf, err := readPageFile(bytes.NewReader(whole), int64(len(whole)))
	if err != nil {
		f.Fatal(err)
	}
	if p := walkFile(pf, nil); len(p) > 0 {
		f.Fatalf("the sound seed: %v", p)
	}
	whole = whole[:pf.meta.hwm*uint64(pf.pageSize)]
	f.Add(whole)
	f.Fuzz(func(t *testing.T, b []byte) {
		pf, err := readPageFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		walkFile(pf, func(_ []string, _ []byte, at valueAt, _ []uint64) {
			if at.n > 0 && (at.off < 0 || at.off+int64(at.n) > int64(len(b))) {
				t.Fatalf("a value at %d of %d bytes, in a file of %d", at.off, at.n, len(b))
			}
		})
	})
}
