package httpapi

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

// TestBackup: GET /v1/backup is a database that a server opens and serves
// every session from exactly where the copy was taken: the same session
// object, the same pending batch, and after the same tells the same next
// batches as the server the copy was taken from.
func TestBackup(t *testing.T) {
	const token = "tok"
	ts := newTestServer(t, serverOpts{token: token})
	s := ts.create(t, map[string]any{"x0": []float64{1, 2, 3, 4}, "sigma0": 0.5, "seed": 3})
	for range 3 {
		ts.tell(t, s.ID, sphereTell(ts.ask(t, s.ID)))
	}
	before := ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID})
	pending := ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/ask"})

	r := ts.do(t, call{method: "GET", path: "/v1/backup"})
	if r.status != 200 {
		t.Fatalf("backup: %d %s", r.status, r.body)
	}
	if n, _ := strconv.Atoi(r.header.Get("Content-Length")); n != len(r.body) || n == 0 {
		t.Errorf("Content-Length %q for %d bytes", r.header.Get("Content-Length"), len(r.body))
	}
	if ct := r.header.Get("Content-Type"); ct != "application/octet-stream" {
		t.Errorf("Content-Type %q", ct)
	}

	// The original goes on for two generations.
	var nexts [][]byte
	var tells []map[string]any
	for range 2 {
		tell := sphereTell(ts.ask(t, s.ID))
		tells = append(tells, tell)
		ts.tell(t, s.ID, tell)
		nexts = append(nexts, ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/ask"}).body)
	}

	// A server on the copy.
	path := filepath.Join(t.TempDir(), "restored.db")
	if err := os.WriteFile(path, r.body, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := bolt.Open(path, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatalf("the backup does not open: %v", err)
	}
	defer st.Close()
	mux := New(Config{Manager: session.NewManager(st, session.Options{})})
	rs := &testServer{Server: httptest.NewServer(mux), mux: mux}
	defer rs.Close()
	if got := rs.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID}); !bytes.Equal(got.body, before.body) {
		t.Errorf("restored session:\n%s\nwant\n%s", got.body, before.body)
	}
	if got := rs.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/ask"}); !bytes.Equal(got.body, pending.body) {
		t.Errorf("restored pending batch:\n%s\nwant\n%s", got.body, pending.body)
	}
	for g, tell := range tells {
		rs.tell(t, s.ID, tell)
		if got := rs.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/ask"}); !bytes.Equal(got.body, nexts[g]) {
			t.Errorf("restored, after tell %d:\n%s\nwant\n%s", g, got.body, nexts[g])
		}
	}

	if r := ts.do(t, call{method: "GET", path: "/v1/backup", header: map[string]string{"Authorization": ""}}); r.status != 401 {
		t.Errorf("backup without the token: %d %s", r.status, r.body)
	}
	if r := rs.do(t, call{method: "GET", path: "/v1/backup"}); r.status != 404 || !bytes.Contains(r.body, []byte("no backups")) {
		t.Errorf("backup from a server without Backup: %d %s", r.status, r.body)
	}
}

// TestBackupSlowDownload: a backup larger than the connection's buffers,
// read by a client that waits longer than the server's WriteTimeout, still
// arrives whole (the handler lifts the write deadline; with it, this copy
// is cut).
func TestBackupSlowDownload(t *testing.T) {
	st, err := bolt.Open(filepath.Join(t.TempDir(), "t.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := session.NewManager(st, session.Options{})
	p, err := decodeCreate(bytes.NewReader(createBody(t, benchCase{alg: "cma-es", n: 100, lambda: 100}, 1)))
	if err != nil {
		t.Fatal(err)
	}
	for range 40 { // about 10 MB, created aside: only the backup meets the WriteTimeout
		if _, err := m.Create(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	mux := New(Config{Manager: m, Backup: st.Snapshot})
	hs := httptest.NewUnstartedServer(mux)
	hs.Config.WriteTimeout = 100 * time.Millisecond
	hs.Start()
	defer hs.Close()
	resp, err := hs.Client().Get(hs.URL + "/v1/backup")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	time.Sleep(500 * time.Millisecond)
	b, err := io.ReadAll(resp.Body)
	if n, _ := strconv.Atoi(resp.Header.Get("Content-Length")); err != nil || len(b) != n || n < 8<<20 {
		t.Fatalf("read %d bytes of %d: %v", len(b), n, err)
	}
}
