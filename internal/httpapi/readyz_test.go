package httpapi

import (
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

// TestReadyz: /readyz answers 503 store_unavailable while the store's ping
// fails and 200 when it answers; /healthz is 200 all along.
func TestReadyz(t *testing.T) {
	st, err := bolt.Open(filepath.Join(t.TempDir(), "t.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var down atomic.Bool
	ping := func(ctx context.Context) error {
		if down.Load() {
			return errors.Join(context.DeadlineExceeded, session.ErrUnavailable)
		}
		return nil
	}
	mux := New(Config{Manager: session.NewManager(st, session.Options{}), Token: "tok", Ready: ping})
	ts := &testServer{Server: httptest.NewServer(mux), mux: mux}
	defer ts.Close()
	for _, d := range []bool{false, true, false} {
		down.Store(d)
		r := ts.do(t, call{method: "GET", path: "/readyz"})
		if want := map[bool]int{false: 200, true: 503}[d]; r.status != want {
			t.Fatalf("/readyz with the store down %v: %d %s, want %d", d, r.status, r.body, want)
		}
		if d && (decode[errorView](t, r).Error.Code != "store_unavailable" || r.header.Get("Retry-After") == "") {
			t.Fatalf("/readyz with the store down: %s, Retry-After %q", r.body, r.header.Get("Retry-After"))
		}
		if r := ts.do(t, call{method: "GET", path: "/healthz"}); r.status != 200 {
			t.Fatalf("/healthz with the store down %v: %d", d, r.status)
		}
	}
}
