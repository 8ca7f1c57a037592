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
	for range 80 { // about 10 MB, created aside: only the backup meets the WriteTimeout
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

// TestBackupStreams: a snapshot writes nothing beside the database while
// it is open, and is the file's bytes.
func TestBackupStreams(t *testing.T) {
	dir := t.TempDir()
	st, err := bolt.Open(filepath.Join(dir, "t.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, n, err := st.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("files beside the database during a snapshot: %v", es)
	}
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil || int64(len(b)) != n {
		t.Fatalf("read %d bytes of %d: %v", len(b), n, err)
	}
	// A snapshot closed unread ends its read transaction: Close returns.
	r, _, err = st.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
}

// TestBackupsAtOnce: a third backup while two are under way is 429 with
// Retry-After; once one ends, the next one runs.
func TestBackupsAtOnce(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	backup := func() (io.ReadCloser, int64, error) {
		pr, pw := io.Pipe()
		go func() {
			started <- struct{}{}
			<-release
			pw.Write([]byte("db"))
			pw.Close()
		}()
		return pr, 2, nil
	}
	mux := New(Config{Manager: session.NewManager(nil, session.Options{}), Backup: backup})
	hs := httptest.NewServer(mux)
	defer hs.Close()
	type result struct {
		status int
		body   string
	}
	results := make(chan result, 2)
	for range 2 {
		go func() {
			resp, err := hs.Client().Get(hs.URL + "/v1/backup")
			if err != nil {
				results <- result{}
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			results <- result{resp.StatusCode, string(b)}
		}()
	}
	<-started
	<-started
	resp, err := hs.Client().Get(hs.URL + "/v1/backup")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("third backup: %d, Retry-After %q; want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	close(release)
	for range 2 {
		if r := <-results; r.status != 200 || r.body != "db" {
			t.Errorf("backup: %d %q", r.status, r.body)
		}
	}
	resp, err = hs.Client().Get(hs.URL + "/v1/backup")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("a backup after the others: %d", resp.StatusCode)
	}
}
