package httpapi

import (
	"bytes"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
)

// TestStorageFull: a write that fails for lack of space answers 507
// storage_full with Retry-After (as the spec says) and is logged; the
// session is as before, and the same request sent again applies once.
func TestStorageFull(t *testing.T) {
	fs := &failingStore{err: &os.PathError{Op: "write", Path: "/data/selfcma.db", Err: syscall.ENOSPC}}
	var log lockedBuffer
	ts := newTestServer(t, serverOpts{wrapStore: func(st session.Store) session.Store { fs.Store = st; return fs }, log: &log})
	wantFull := func(r response, what string) {
		t.Helper()
		e := decode[errorView](t, r)
		if r.status != http.StatusInsufficientStorage || e.Error.Code != "storage_full" || r.header.Get("Retry-After") != retryAfterFull {
			t.Fatalf("%s on a full disk: %d %s, Retry-After %q; want 507 storage_full", what, r.status, r.body, r.header.Get("Retry-After"))
		}
		if !strings.Contains(log.String(), "request_id="+r.header.Get("X-Request-Id")) {
			t.Fatalf("%s: no log line of the request:\n%s", what, log.String())
		}
	}
	id, b := failingCallsChangeNothing(t, ts, fs, wantFull, func(id string, b batchView) []call {
		return []call{
			{method: "POST", path: "/v1/sessions/" + id + "/tell", body: sphereTell(b)},
			{method: "POST", path: "/v1/sessions/" + id + "/tell?next=true", body: sphereTell(b)},
			{method: "POST", path: "/v1/sessions/" + id + "/inject", body: map[string]any{"points": [][]float64{{0, 0, 0}}}},
			{method: "POST", path: "/v1/sessions/" + id + "/stop"},
		}
	})
	tellAppliesOnce(t, ts, id, b)
}

// failingCallsChangeNothing: a create, and each of the calls made of a
// new session and its first batch, made while fs fails once, answers as
// want checks and changes nothing; the tell, sent afterwards, applies
// once. It returns the session's id and batch.
func failingCallsChangeNothing(t *testing.T, ts *testServer, fs *failingStore, want func(response, string), calls func(string, batchView) []call) (string, batchView) {
	t.Helper()
	create := map[string]any{"x0": []float64{1, 2, 3}, "sigma0": 0.5, "algorithm": "cma-es", "seed": 5}
	fs.fail.Store(1)
	want(ts.do(t, call{method: "POST", path: "/v1/sessions", body: create}), "create")
	s := ts.create(t, create)
	b := ts.ask(t, s.ID)
	get := call{method: "GET", path: "/v1/sessions/" + s.ID}
	before := ts.do(t, get).body
	for _, c := range calls(s.ID, b) {
		fs.fail.Store(1)
		want(ts.do(t, c), c.method+" "+c.path)
		if after := ts.do(t, get).body; !bytes.Equal(after, before) {
			t.Fatalf("%s %s, failed, changed the session:\n%s\n%s", c.method, c.path, before, after)
		}
	}
	return s.ID, b
}

// tellAppliesOnce: the first batch's tell, sent after failed ones, applies
// once.
func tellAppliesOnce(t *testing.T, ts *testServer, id string, b batchView) {
	t.Helper()
	if got := ts.tell(t, id, sphereTell(b)); got.Generation != 1 || got.Evaluations != len(b.Candidates) {
		t.Fatalf("the tell sent again: generation %d, %d evaluations", got.Generation, got.Evaluations)
	}
}
