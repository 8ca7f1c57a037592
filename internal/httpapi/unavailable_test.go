package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
)

// errUnreachable is a store's error of an unreachable database, as the
// PostgreSQL store wraps it.
var errUnreachable = fmt.Errorf("postgres: put x: dial tcp 127.0.0.1:5432: connect: connection refused: %w", session.ErrUnavailable)

// TestStoreUnavailable: a store call that fails because the database is
// unreachable answers 503 store_unavailable with Retry-After (as the spec
// says), reads as writes; the session is as before, and the same request
// sent again applies once.
func TestStoreUnavailable(t *testing.T) {
	fs := &failingStore{err: errUnreachable}
	var log lockedBuffer
	ts := newTestServer(t, serverOpts{wrapStore: func(st session.Store) session.Store { fs.Store = st; return fs }, log: &log})
	want503 := func(r response, what string) {
		t.Helper()
		e := decode[errorView](t, r)
		if r.status != http.StatusServiceUnavailable || e.Error.Code != "store_unavailable" || r.header.Get("Retry-After") != retryAfterUnavailable {
			t.Fatalf("%s with the database unreachable: %d %s, Retry-After %q; want 503 store_unavailable", what, r.status, r.body, r.header.Get("Retry-After"))
		}
		if strings.Contains(string(r.body), "127.0.0.1") {
			t.Fatalf("%s: the answer shows the store's error: %s", what, r.body)
		}
		if !strings.Contains(log.String(), "request_id="+r.header.Get("X-Request-Id")) || !strings.Contains(log.String(), "connection refused") {
			t.Fatalf("%s: no log line of the request with its cause:\n%s", what, log.String())
		}
	}
	id, b := failingCallsChangeNothing(t, ts, fs, want503, func(id string, b batchView) []call {
		return []call{
			{method: "POST", path: "/v1/sessions/" + id + "/tell", body: sphereTell(b)},
			{method: "POST", path: "/v1/sessions/" + id + "/stop"},
			{method: "DELETE", path: "/v1/sessions/" + id},
		}
	})
	// Reads: the store's reads fail too.
	fs.reads.Store(true)
	for _, c := range []call{{method: "GET", path: "/v1/sessions/" + id}, {method: "GET", path: "/v1/sessions"}, {method: "GET", path: "/v1/sessions/" + id + "/history"}} {
		want503(ts.do(t, c), c.method+" "+c.path)
	}
	fs.reads.Store(false)
	tellAppliesOnce(t, ts, id, b)
}

// readFailingStore fails reads too, while reads is set.
func (s *failingStore) readErr() error {
	if s.reads.Load() {
		return s.err
	}
	return nil
}

func (s *failingStore) Get(ctx context.Context, id string) (session.Record, error) {
	if err := s.readErr(); err != nil {
		return session.Record{}, err
	}
	return s.Store.Get(ctx, id)
}

func (s *failingStore) Version(ctx context.Context, id string) (uint64, error) {
	if err := s.readErr(); err != nil {
		return 0, err
	}
	return s.Store.Version(ctx, id)
}

func (s *failingStore) List(ctx context.Context, after string, limit int) ([]session.Record, error) {
	if err := s.readErr(); err != nil {
		return nil, err
	}
	return s.Store.List(ctx, after, limit)
}

func (s *failingStore) Delete(ctx context.Context, id string, version uint64) error {
	if s.fail.Add(-1) >= 0 {
		return s.err
	}
	s.fail.Store(0)
	return s.Store.Delete(ctx, id, version)
}
