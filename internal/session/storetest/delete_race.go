package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/session"
)

// A Delete that races an UpdateLeases of the same session leaves no lease
// of the deleted session behind: it waits for the UpdateLeases and drops
// what it wrote, or the UpdateLeases comes after it and finds no record.
// First the Delete starts while UpdateLeases is inside fn (between its read
// and its write), and fn gives it time to finish; then plain races.
func testDeleteRacesLeases(t *testing.T, st session.Store) {
	put(t, st, rec("a", 0, "m", "s"), nil)
	var once sync.Once
	deleted := make(chan error, 1)
	err := st.UpdateLeases(ctx, "a", 3, func(now time.Time, cur []session.Lease) ([]session.Lease, error) {
		once.Do(func() { go func() { deleted <- st.Delete(ctx, "a", 1) }() })
		select { // a store whose Delete does not wait would finish it now
		case err := <-deleted:
			deleted <- err
		case <-time.After(200 * time.Millisecond):
		}
		return []session.Lease{{Index: 0, Worker: "w", Expires: now.Add(time.Hour)}}, nil
	})
	if err != nil && !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("UpdateLeases racing a Delete: %v, want nil or ErrNoRecord", err)
	}
	if err := <-deleted; err != nil {
		t.Fatalf("Delete racing an UpdateLeases: %v", err)
	}
	wantGone(t, st, "a")

	const rounds = 20
	for i := range rounds {
		put(t, st, rec("b", 0, "m", "s"), nil)
		var wg sync.WaitGroup
		wg.Go(func() {
			err := st.UpdateLeases(ctx, "b", uint64(i), func(now time.Time, cur []session.Lease) ([]session.Lease, error) {
				return []session.Lease{{Index: 1, Expires: now.Add(time.Hour)}}, nil
			})
			if err != nil && !errors.Is(err, session.ErrNoRecord) {
				t.Errorf("round %d: UpdateLeases racing a Delete: %v", i, err)
			}
		})
		wg.Go(func() {
			if err := st.Delete(ctx, "b", 1); err != nil {
				t.Errorf("round %d: Delete racing an UpdateLeases: %v", i, err)
			}
		})
		wg.Wait()
		wantGone(t, st, "b")
	}
}

// wantGone fails t unless id is not stored and, if st is a Checker, the
// store is sound (no lease, history or key of a deleted session).
func wantGone(t *testing.T, st session.Store, id string) {
	t.Helper()
	if _, err := st.Get(ctx, id); !errors.Is(err, session.ErrNoRecord) {
		t.Fatalf("Get %s after its Delete: %v, want ErrNoRecord", id, err)
	}
	if ls, _, err := st.Leases(ctx, id, 3); !errors.Is(err, session.ErrNoRecord) || len(ls) != 0 {
		t.Fatalf("Leases of %s after its Delete: %v, %v; want none and ErrNoRecord", id, ls, err)
	}
	if c, ok := st.(session.Checker); ok {
		if probs := c.Check(ctx); len(probs) != 0 {
			t.Fatalf("Check after a Delete raced an UpdateLeases: %v", probs)
		}
	}
}
