package upgrade

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

// A fixture of the plain manifest: the bbolt file that build fills,
// gzipped, and what observe reads of it under the writing code. With log,
// the file and its told-value log (gzipped to log) are packed as a crash
// leaves them, the store open: what build wrote last is in the log only.
type boltFixture struct {
	file, log, expected, writtenBy string
	layout                         int
	build                          func(*testing.T, *session.Manager) manifest
	observe                        func(*testing.T, *session.Manager, manifest) []step
}

// write writes f's two files; it refuses to overwrite one, or to write a
// layout other than the current.
func (f boltFixture) write(t *testing.T) {
	t.Helper()
	for _, file := range []string{f.file, f.log} {
		if _, err := os.Stat(file); file != "" && err == nil {
			t.Fatalf("%s exists: it is never rewritten", file)
		}
	}
	if bolt.SchemaVersion != f.layout {
		t.Fatalf("store layout %d: the fixture is of layout %d", bolt.SchemaVersion, f.layout)
	}
	path := filepath.Join(t.TempDir(), "db")
	st := openStore(t, path, builtAt)
	man := f.build(t, newManager(st, builtAt))
	if f.log != "" {
		packFixture(t, path, f.file)
		packFixture(t, path+bolt.LogSuffix, f.log)
	}
	closeStore(t, st)
	if f.log == "" {
		packFixture(t, path, f.file)
	}
	st = openStore(t, f.unpacked(t), observeAt)
	man.Steps = f.observe(t, newManager(st, observeAt), man)
	b, err := json.MarshalIndent(man, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.expected, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// check: the store and its sessions pass their checks, and the sessions
// continue under the current code as they did under the writing code.
func (f boltFixture) check(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(f.expected)
	if err != nil {
		t.Fatal(err)
	}
	var want manifest
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if want.Written != f.writtenBy || want.Layout != f.layout || len(want.Steps) == 0 {
		t.Fatalf("fixture written by %q, layout %d, %d steps", want.Written, want.Layout, len(want.Steps))
	}
	st := openStore(t, f.unpacked(t), observeAt)
	if f.log != "" {
		f.checkLogged(t, st, want)
	}
	if p := storeProblems(st); len(p) > 0 {
		t.Errorf("store.Check: %v", p)
	}
	if p := sessionProblems(t, st); len(p) > 0 {
		t.Errorf("session.Check: %v", p)
	}
	got := f.observe(t, newManager(st, observeAt), want)
	compareSteps(t, want.Steps, got)
	if p := sessionProblems(t, st); len(p) > 0 {
		t.Errorf("session.Check after the continuation: %v", p)
	}
}

// checkManifestFixture checks a fixture whose manifest is of its own type
// M (the constrained and mixed ones): it was written by writtenBy, the
// store and its sessions pass their checks before and after, and observe
// under the current code reads what the writing code read.
func checkManifestFixture[M interface{ meta() (string, []step) }](t *testing.T, expected, file, writtenBy string,
	observe func(*testing.T, *session.Manager, M) []step) {
	t.Helper()
	b, err := os.ReadFile(expected)
	if err != nil {
		t.Fatal(err)
	}
	var want M
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	written, steps := want.meta()
	if written != writtenBy || len(steps) == 0 {
		t.Fatalf("fixture written by %q, %d steps", written, len(steps))
	}
	st := openStore(t, unpackedFile(t, file), observeAt)
	if p := sessionProblems(t, st); len(p) > 0 {
		t.Errorf("session.Check of the fixture: %v", p)
	}
	compareSteps(t, steps, observe(t, newManager(st, observeAt), want))
	if p := storeProblems(st); len(p) > 0 {
		t.Errorf("store.Check after the continuation: %v", p)
	}
	if p := sessionProblems(t, st); len(p) > 0 {
		t.Errorf("session.Check after the continuation: %v", p)
	}
}

// unpacked unpacks f's file (and log) into a temporary directory and
// returns the file's path.
func (f boltFixture) unpacked(t *testing.T) string {
	t.Helper()
	path := unpackedFile(t, f.file)
	if f.log != "" {
		if err := os.WriteFile(path+bolt.LogSuffix, gunzipped(t, f.log), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// checkLogged: every session of f has told values in the log (st, opened
// with it, reads each at a later version than the file alone).
func (f boltFixture) checkLogged(t *testing.T, st *bolt.Store, want manifest) {
	t.Helper()
	alone, err := bolt.Open(unpackedFile(t, f.file), &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close()
	for name, id := range want.IDs {
		v0, err0 := alone.Version(context.Background(), id)
		v, err := st.Version(context.Background(), id)
		if err0 != nil || err != nil || v <= v0 {
			t.Errorf("%s: version %d with the log, %d without (%v, %v): the log holds nothing of it", name, v, v0, err, err0)
		}
	}
}

// packFixture writes the bbolt file at path, gzipped, to fixture (under
// testdata/, created if need be).
func packFixture(t *testing.T, path, fixture string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(raw)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(fixture), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fixture, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// unpackedFile writes the gzipped fixture file, unpacked, into a temporary
// directory and returns its path.
func unpackedFile(t *testing.T, file string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "selfcma.db")
	if err := os.WriteFile(path, gunzipped(t, file), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// gunzipped returns the bytes of the gzipped file.
func gunzipped(t *testing.T, file string) []byte {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := out.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestPackFixture: what packFixture writes, unpackedFile gives back byte
// for byte (the writers' path, which otherwise runs only when a fixture is
// written).
func TestPackFixture(t *testing.T) {
	dir := t.TempDir()
	src, fixture := filepath.Join(dir, "db"), filepath.Join(dir, "testdata", "x.bbolt.gz")
	want := bytes.Repeat([]byte("selfcma\x00"), 4096)
	if err := os.WriteFile(src, want, 0o600); err != nil {
		t.Fatal(err)
	}
	packFixture(t, src, fixture)
	got, err := os.ReadFile(unpackedFile(t, fixture))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("unpacked %d bytes, want the %d packed", len(got), len(want))
	}
}
