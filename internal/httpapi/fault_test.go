package httpapi

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
)

// failingStore fails the Puts it is armed for with err (errDiskFault if
// nil), writing nothing, as a failing disk would.
type failingStore struct {
	session.Store
	fail  atomic.Int32 // Puts (and Deletes) left to fail
	err   error
	reads atomic.Bool // the reads fail too (unavailable_test.go)
}

var errDiskFault = errors.New("write /data/selfcma.db: input/output error")

func (s *failingStore) Put(ctx context.Context, rec session.Record, h *session.HistoryEntry) (uint64, error) {
	if s.fail.Add(-1) >= 0 {
		if s.err != nil {
			return 0, s.err
		}
		return 0, errDiskFault
	}
	s.fail.Store(0)
	return s.Store.Put(ctx, rec, h)
}

// lockedBuffer is a bytes.Buffer for a logger that handlers write to.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestStoreFault: a write that fails answers 500 internal with the spec's
// error body and no detail of the fault, which the log has under the
// request's id; the session, its pending batch and the session list are as
// before, and the same request sent again succeeds.
func TestStoreFault(t *testing.T) {
	fs := &failingStore{}
	var log lockedBuffer
	ts := newTestServer(t, serverOpts{wrapStore: func(st session.Store) session.Store { fs.Store = st; return fs }, log: &log})

	wantInternal := func(r response, what string) {
		t.Helper()
		e := decode[errorView](t, r)
		if r.status != http.StatusInternalServerError || e.Error.Code != "internal" || e.Error.Message != "internal error" {
			t.Fatalf("%s with a failing store: %d %s, want 500 internal", what, r.status, r.body)
		}
		id := r.header.Get("X-Request-Id")
		for _, line := range strings.Split(log.String(), "\n") {
			if strings.Contains(line, "request_id="+id) && strings.Contains(line, errDiskFault.Error()) {
				return
			}
		}
		t.Fatalf("%s: no log line has request id %q and the store's error:\n%s", what, id, log.String())
	}

	create := map[string]any{"x0": []float64{1, 2, 3}, "sigma0": 0.5, "algorithm": "cma-es", "seed": 5}
	fs.fail.Store(1)
	wantInternal(ts.do(t, call{method: "POST", path: "/v1/sessions", body: create}), "create")
	if r := ts.do(t, call{method: "GET", path: "/v1/sessions"}); !bytes.Contains(r.body, []byte(`"sessions":[]`)) {
		t.Fatalf("a create that failed left a session: %s", r.body)
	}

	s := ts.create(t, create)
	b := ts.ask(t, s.ID)
	get := call{method: "GET", path: "/v1/sessions/" + s.ID}
	before := ts.do(t, get).body
	for _, path := range []string{"/tell", "/tell?next=true"} {
		fs.fail.Store(1)
		wantInternal(ts.do(t, call{method: "POST", path: "/v1/sessions/" + s.ID + path, body: sphereTell(b)}), "tell")
		if after := ts.do(t, get).body; !bytes.Equal(after, before) {
			t.Fatalf("a tell that failed changed the session:\n%s\n%s", before, after)
		}
		if again := ts.ask(t, s.ID); !equalBatches(again, b) {
			t.Fatal("a tell that failed changed the pending batch")
		}
	}
	if got := ts.tell(t, s.ID, sphereTell(b)); got.Generation != 1 || got.Evaluations != len(b.Candidates) {
		t.Fatalf("the tell sent again: generation %d, %d evaluations", got.Generation, got.Evaluations)
	}
}

func equalBatches(a, b batchView) bool {
	if a.Generation != b.Generation || len(a.Candidates) != len(b.Candidates) {
		return false
	}
	for i := range a.Candidates {
		for j := range a.Candidates[i] {
			if a.Candidates[i][j] != b.Candidates[i][j] {
				return false
			}
		}
	}
	return true
}
