package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/pgtest"
	"github.com/selfcma/selfcma/internal/session"
)

// TestUpdateLeasesKeepsItsConnection: an UpdateLeases that fails as
// expected (an unknown session, fn's error, leases of a later generation)
// ends its transaction and hands its connection back to the pool: no new
// connection is opened for the next ones, no lock is left held (each
// would wait for it), and what succeeded is stored.
func TestUpdateLeasesKeepsItsConnection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := Open(ctx, pgtest.DB(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Put(ctx, session.Record{ID: "a", Meta: []byte("m"), State: []byte("s")}, nil); err != nil {
		t.Fatal(err)
	}
	lease := func(i int) func(time.Time, []session.Lease) ([]session.Lease, error) {
		return func(now time.Time, cur []session.Lease) ([]session.Lease, error) {
			return append(cur, session.Lease{Index: i, Worker: "w", Expires: now.Add(time.Minute)}), nil
		}
	}
	if err := st.UpdateLeases(ctx, "a", 1, lease(0)); err != nil {
		t.Fatal(err)
	}
	conns := st.pool.Stat().NewConnsCount()
	refused := errors.New("refused")
	for i := range 20 {
		if err := st.UpdateLeases(ctx, "b", 1, lease(i)); !errors.Is(err, session.ErrNoRecord) {
			t.Fatalf("leases of an unknown session: %v", err)
		}
		err := st.UpdateLeases(ctx, "a", 1, func(time.Time, []session.Lease) ([]session.Lease, error) { return nil, refused })
		if err != refused {
			t.Fatalf("fn's error: %v, want it as is", err)
		}
		if err := st.UpdateLeases(ctx, "a", 0, lease(i)); !errors.Is(err, session.ErrVersion) {
			t.Fatalf("leases of an earlier generation: %v", err)
		}
		if err := st.UpdateLeases(ctx, "a", 1, lease(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if n := st.pool.Stat().NewConnsCount(); n != conns {
		t.Errorf("%d connections opened by the failed updates, want none", n-conns)
	}
	ls, _, err := st.Leases(ctx, "a", 1)
	if err != nil || len(ls) != 21 {
		t.Fatalf("leases %v %v, want 21", ls, err)
	}
}
