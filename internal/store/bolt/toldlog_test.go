package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
)

// toldState is what a store answers of the sessions of a test: id ->
// version and meta.
type toldState map[string]string

func readTold(t *testing.T, s *Store, ids ...string) toldState {
	t.Helper()
	got := toldState{}
	for _, id := range ids {
		rec, err := s.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("Get(%s): %v", id, err)
		}
		v, err := s.Version(context.Background(), id)
		if err != nil || v != rec.Version {
			t.Fatalf("Version(%s) = %d, %v; Get's %d", id, v, err, rec.Version)
		}
		got[id] = fmt.Sprintf("%d %s", rec.Version, rec.Meta)
	}
	list, err := s.List(context.Background(), "", 0)
	if err != nil || len(list) != len(ids) {
		t.Fatalf("List: %d records, %v", len(list), err)
	}
	for _, r := range list {
		if got[r.ID] != fmt.Sprintf("%d %s", r.Version, r.Meta) {
			t.Fatalf("List has %s at %d %s, Get %s", r.ID, r.Version, r.Meta, got[r.ID])
		}
	}
	return got
}

// files is the database and its log as a crash would leave them (the
// store open, no write under way).
type files struct{ db, log []byte }

func snapFiles(t *testing.T, path string) files {
	t.Helper()
	db, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(path + LogSuffix)
	if err != nil {
		t.Fatal(err)
	}
	return files{db, log}
}

func (f files) write(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "c.db")
	if err := os.WriteFile(path, f.db, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+LogSuffix, f.log, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestToldLogCrash: meta-only writes go to the log, not the file; a crash
// that cuts the log at any byte of its last records loses only the record
// cut (never acknowledged: its write had not returned), and every value
// acknowledged before it is read back, by a read-only Open and after the
// fold of a writable one, which survives a further crash.
func TestToldLogCrash(t *testing.T) {
	defer smallLog()()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s := open(t, path)
	defer s.Close()
	ids := []string{"a", "b"}
	vs := map[string]uint64{}
	for _, id := range ids {
		vs[id] = put(t, s, session.Record{ID: id, Meta: []byte("m0"), State: bytes.Repeat([]byte(id), 5000)}, nil)
	}
	commits := s.commits.Load()
	var snaps []files
	var wants []toldState
	snaps = append(snaps, snapFiles(t, path))
	wants = append(wants, readTold(t, s, ids...))
	for i := range 6 {
		id := ids[i%2]
		meta := bytes.Repeat([]byte{byte('0' + i)}, 300+i*200) // records of one to three blocks
		vs[id] = put(t, s, session.Record{ID: id, Version: vs[id], Meta: meta}, nil)
		snaps = append(snaps, snapFiles(t, path))
		wants = append(wants, readTold(t, s, ids...))
	}
	if !bytes.Equal(snaps[0].db, snaps[len(snaps)-1].db) {
		t.Fatal("a meta-only write changed the file: the log did not take it")
	}
	if s.commits.Load() != commits+6 {
		t.Errorf("%d commits (appends) for 6 writes", s.commits.Load()-commits)
	}
	n := 0
	for k := len(snaps) - 3; k < len(snaps); k++ { // the last three records, cut at every byte
		before, after := snaps[k-1].log, snaps[k].log
		start := 0 // the first byte the record changed
		for before[start] == after[start] {
			start++
		}
		end := start
		for i := start; i < len(after); i++ {
			if before[i] != after[i] {
				end = i + 1
			}
		}
		for c := start; c <= end; c++ {
			log := append(bytes.Clone(after[:c]), before[c:]...)
			want := wants[k-1]
			if c == end {
				want = wants[k]
			}
			checkCrashed(t, files{snaps[k].db, log}, ids, want, c == start || c == end || c%97 == 0)
			n++
		}
	}
	t.Logf("%d cuts", n)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path)
	if got := readTold(t, s, ids...); fmt.Sprint(got) != fmt.Sprint(wants[len(wants)-1]) {
		t.Errorf("after Close and Open: %v, want %v", got, wants[len(wants)-1])
	}
	if _, err := s.Put(ctx, session.Record{ID: "a", Version: vs["a"] - 1, Meta: []byte("x")}, nil); !errors.Is(err, session.ErrVersion) {
		t.Errorf("Put of a stale version: %v, want ErrVersion", err)
	}
}

// checkCrashed opens f (a crashed store's files) read-only, then writable,
// and if again, folds the log (a snapshot) and opens the files after a
// crash: each reads want, and the file checks clean.
func checkCrashed(t *testing.T, f files, ids []string, want toldState, again bool) {
	t.Helper()
	path := f.write(t, t.TempDir())
	ro, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open: %v", err)
	}
	if got := readTold(t, ro, ids...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("read-only: %v, want %v", got, want)
	}
	if p := ro.Check(context.Background()); len(p) > 0 {
		t.Fatalf("read-only Check: %v", p)
	}
	ro.Close()
	s, err := Open(path, &Options{NoSync: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if got := readTold(t, s, ids...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("writable: %v, want %v", got, want)
	}
	defer s.Close()
	if !again {
		return
	}
	fold(t, s)
	folded := snapFiles(t, path) // crashed after the fold
	s, err = Open(folded.write(t, t.TempDir()), &Options{NoSync: true})
	if err != nil {
		t.Fatalf("Open after the fold: %v", err)
	}
	defer s.Close()
	if got := readTold(t, s, ids...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the fold and a crash: %v, want %v", got, want)
	}
	if p := s.Check(context.Background()); len(p) > 0 {
		t.Fatalf("Check: %v", p)
	}
}

// twoSessions puts sessions a and b, metas a0 and b0, in s and returns
// their versions.
func twoSessions(t *testing.T, s *Store) (va, vb uint64) {
	t.Helper()
	return put(t, s, session.Record{ID: "a", Meta: []byte("a0"), State: []byte("s")}, nil),
		put(t, s, session.Record{ID: "b", Meta: []byte("b0"), State: []byte("s")}, nil)
}

// fold folds s's log into its file: a snapshot's first step.
func fold(t *testing.T, s *Store) {
	t.Helper()
	snapshot(t, s)
}

// snapshot returns the bytes of s's Snapshot.
func snapshot(t *testing.T, s *Store) []byte {
	t.Helper()
	rc, _, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// smallLog makes the logs of a test 64 KiB; the func it returns restores
// the size.
func smallLog() func() {
	size := logSize
	logSize = 64 << 10
	return func() { logSize = size }
}

// TestToldLogDamage: an acknowledged record that went bad, a later one
// reading, is damage: a writable Open refuses the file, a read-only one
// reads what comes before it and Check reports it.
func TestToldLogDamage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s := open(t, path)
	defer s.Close()
	v := put(t, s, session.Record{ID: "a", Meta: []byte("m0"), State: []byte("s")}, nil)
	var after []toldState
	for i := range 3 {
		v = put(t, s, session.Record{ID: "a", Version: v, Meta: fmt.Appendf(nil, "m%d", i+1)}, nil)
		after = append(after, readTold(t, s, "a"))
	}
	f := snapFiles(t, path)
	f.log[logAlign+logHeader] ^= 1 // the second record's payload
	dpath := f.write(t, t.TempDir())
	if _, err := Open(dpath, nil); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "told-value log") {
		t.Fatalf("Open of a damaged log: %v, want ErrDamaged", err)
	}
	ro, err := Open(dpath, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if got := readTold(t, ro, "a"); fmt.Sprint(got) != fmt.Sprint(after[0]) {
		t.Errorf("read-only: %v, want %v (the record before the damage)", got, after[0])
	}
	if p := ro.Check(context.Background()); len(p) != 1 || !strings.Contains(p[0].Error(), "record 3 of the epoch follows") {
		t.Errorf("Check: %v", p)
	}
	// -salvage keeps every record that reads, the one after the damage too.
	d, err := OpenDamaged(dpath)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if p := d.Problems(); len(p) != 1 || !strings.Contains(p[0].Error(), "told-value log") {
		t.Errorf("OpenDamaged's problems: %v", p)
	}
	out := filepath.Join(t.TempDir(), "out.db")
	if _, err := Salvage(context.Background(), d, []string{"a"}, func(string) bool { return true }, out); err != nil {
		t.Fatal(err)
	}
	c := open(t, out)
	defer c.Close()
	if got := readTold(t, c, "a"); fmt.Sprint(got) != fmt.Sprint(after[2]) {
		t.Errorf("salvaged: %v, want %v (the last record)", got, after[2])
	}
}

// TestToldLogFolds: a full write, a Delete, a snapshot and Close fold the
// log (the file holds the told values; the log starts again); a deleted
// and imported id gets none of its earlier told values back.
func TestToldLogFolds(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s := open(t, path)
	defer s.Close()
	va, vb := twoSessions(t, s)
	va = put(t, s, session.Record{ID: "a", Version: va, Meta: []byte("a1")}, nil)
	vb = put(t, s, session.Record{ID: "b", Version: vb, Meta: []byte("b1")}, nil)
	if s.log.seq != 2 || len(s.heldAll()) != 2 {
		t.Fatalf("after two meta-only writes: log record %d, %d held", s.log.seq, len(s.heldAll()))
	}
	epoch := s.log.epoch
	put(t, s, session.Record{ID: "a", Version: va, Meta: []byte("a2"), State: []byte("s2")}, &session.HistoryEntry{Generation: 0})
	if s.log.seq != 0 || len(s.heldAll()) != 0 || s.log.epoch == epoch {
		t.Fatalf("after a full write: log record %d, %d held, epoch %d after %d", s.log.seq, len(s.heldAll()), s.log.epoch, epoch)
	}
	want := readTold(t, s, "a", "b")
	if want["b"] != "2 b1" || want["a"] != "3 a2" {
		t.Fatalf("after the fold: %v", want)
	}
	// A snapshot holds the told values of the log.
	vb = put(t, s, session.Record{ID: "b", Version: vb, Meta: []byte("b2")}, nil)
	snap := filepath.Join(t.TempDir(), "snap.db")
	if err := os.WriteFile(snap, snapshot(t, s), 0o600); err != nil {
		t.Fatal(err)
	}
	c := open(t, snap)
	if got := readTold(t, c, "a", "b"); got["b"] != "3 b2" {
		t.Errorf("the snapshot has %v, want b at 3 b2", got)
	}
	c.Close()
	// A deleted id, imported anew at a lower version, gets no told value
	// of before back after a crash.
	vb = put(t, s, session.Record{ID: "b", Version: vb, Meta: []byte("b3")}, nil)
	if err := s.Delete(ctx, "b", vb); err != nil {
		t.Fatal(err)
	}
	if err := s.Import(ctx, session.Record{ID: "b", Version: 1, Meta: []byte("imported"), State: []byte("s")}, nil); err != nil {
		t.Fatal(err)
	}
	f := snapFiles(t, path)
	c, err := Open(f.write(t, t.TempDir()), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := readTold(t, c, "a", "b"); got["b"] != "1 imported" {
		t.Errorf("after a crash: %v, want b imported at 1", got)
	}
}

// TestToldLogFull: a log that has no room for a record hands the write
// to the file, which folds it, and the log starts again.
func TestToldLogFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path, &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v := put(t, s, session.Record{ID: "a", State: []byte("s")}, nil)
	meta := make([]byte, 100<<10)
	epoch := s.log.epoch
	for i := range 2 * int(logSize) / len(meta) {
		meta[0] = byte(i)
		v = put(t, s, session.Record{ID: "a", Version: v, Meta: meta}, nil)
	}
	if s.log.epoch == epoch {
		t.Errorf("the log never filled: epoch %d from %d", s.log.epoch, epoch)
	}
	f := snapFiles(t, path)
	c, err := Open(f.write(t, t.TempDir()), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, want := readTold(t, c, "a"), readTold(t, s, "a"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after a crash: %.40v, want %.40v", got, want)
	}
}

// TestToldLogConcurrent: writers of metas, some of them folding with a
// full write now and then, and readers at once: a write's value reads
// back as soon as it returns, and no read goes back to an earlier
// version (the held metas and the folds hand over without a gap).
func TestToldLogConcurrent(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "s.db"), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const writers, writes = 6, 150
	done := make(chan error, 2*writers)
	for w := range writers {
		id := fmt.Sprint("s", w)
		v := put(t, s, session.Record{ID: id, State: []byte("s")}, nil)
		go func() { // the writer
			for i := range writes {
				rec := session.Record{ID: id, Version: v, Meta: fmt.Appendf(nil, "%d", i)}
				var h *session.HistoryEntry
				if i%7 == 6 {
					rec.State, h = []byte("s"), &session.HistoryEntry{Generation: uint64(i)}
				}
				var err error
				if v, err = s.Put(ctx, rec, h); err != nil {
					done <- err
					return
				}
				if got, err := s.Version(ctx, id); err != nil || got != v {
					done <- fmt.Errorf("%s: Version %d, %v after a write of %d", id, got, err, v)
					return
				}
			}
			done <- nil
		}()
		go func() { // a reader of another writer's session
			other, last := fmt.Sprint("s", (w+1)%writers), uint64(0)
			for range 4 * writes {
				rec, err := s.Get(ctx, other)
				if errors.Is(err, session.ErrNoRecord) {
					continue // not created yet
				}
				if err != nil || rec.Version < last {
					done <- fmt.Errorf("%s: read version %d after %d, %v", other, rec.Version, last, err)
					return
				}
				last = rec.Version
			}
			done <- nil
		}()
	}
	for range 2 * writers {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if p := s.Check(ctx); len(p) > 0 {
		t.Fatal(p)
	}
}

// TestToldLogNotCreated: a store whose log cannot be created (a full
// disk, say; here a directory in the way of the file written first)
// commits the metas to the file, as before layout 6.
func TestToldLogNotCreated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	if err := os.Mkdir(path+LogSuffix+".partial", 0o700); err != nil {
		t.Fatal(err)
	}
	s := open(t, path)
	defer s.Close()
	v := put(t, s, session.Record{ID: "a", Meta: []byte("m0"), State: []byte("s")}, nil)
	db0, _ := os.ReadFile(path)
	v = put(t, s, session.Record{ID: "a", Version: v, Meta: []byte("m1")}, nil)
	if db1, _ := os.ReadFile(path); bytes.Equal(db0, db1) {
		t.Fatal("the meta went to no file")
	}
	s.Close()
	c := open(t, path)
	defer c.Close()
	if got := readTold(t, c, "a"); got["a"] != fmt.Sprint(v, " m1") {
		t.Errorf("after a reopen: %v", got)
	}
}

// TestToldLogRestoredBackup: a backup restored in place of its file,
// beside the log its server went on writing (records of the backup's
// epoch past those of a later one), opens as the backup (no damage, no
// told value of later), and the values told then survive a crash.
func TestToldLogRestoredBackup(t *testing.T) {
	defer smallLog()()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s := open(t, path)
	defer s.Close()
	va, vb := twoSessions(t, s)
	vb = put(t, s, session.Record{ID: "b", Version: vb, Meta: []byte("b1")}, nil)
	backup := snapshot(t, s)
	want := readTold(t, s, "a", "b")
	for i := range 3 { // records 1 to 3 of the backup's epoch
		vb = put(t, s, session.Record{ID: "b", Version: vb, Meta: fmt.Appendf(nil, "b%d", i+2)}, nil)
	}
	va = put(t, s, session.Record{ID: "a", Version: va, Meta: []byte("a1"), State: []byte("s1")}, &session.HistoryEntry{})
	put(t, s, session.Record{ID: "a", Version: va, Meta: []byte("a2")}, nil) // record 1 of the next epoch, over the backup's first
	s.Close()
	if err := os.WriteFile(path, backup, 0o600); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if p := ro.Check(ctx); len(p) > 0 {
		t.Errorf("Check of the backup beside the log: %v", p)
	}
	ro.Close()
	r := open(t, path)
	defer r.Close()
	if got := readTold(t, r, "a", "b"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the backup restored: %v, want %v", got, want)
	}
	vb = put(t, r, session.Record{ID: "b", Version: 2, Meta: []byte("after1")}, nil) // the first write folds
	put(t, r, session.Record{ID: "b", Version: vb, Meta: []byte("after2")}, nil)     // to the log
	c, err := Open(snapFiles(t, path).write(t, t.TempDir()), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := readTold(t, c, "a", "b"); got["b"] != "4 after2" || got["a"] != want["a"] {
		t.Errorf("after a crash: %v", got)
	}
}
