package session_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/session"
)

// conRun is what a run of runResumed shows: the batches, the session after
// the last tell and the history.
type conRun struct {
	Batches []session.Batch
	Last    session.Session
	History []session.HistoryRecord
}

// runResumed creates the session p on a store at path and drives it for
// gens generations, told by tell; with kill, the store is closed and
// opened again (a new Manager, nothing cached) before every call, and the
// values of every third generation are told in parts by claims (each claim
// the batch's candidate, with its z and c), candidate 0's part told twice.
// At the end the last tell, sent again, changes nothing, and session.Check
// finds no problem.
func runResumed(t *testing.T, path string, p session.CreateParams, tell func(session.Batch) session.TellParams, gens int, kill bool) conRun {
	t.Helper()
	ctx := context.Background()
	st := openStore(t, path)
	m := session.NewManager(st, session.Options{})
	reopen := func() {
		if kill {
			st.Close()
			st = openStore(t, path)
			m = session.NewManager(st, session.Options{})
		}
	}
	defer func() { st.Close() }()
	s, err := m.Create(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var r conRun
	for range gens {
		reopen()
		b, err := m.Ask(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		r.Batches = append(r.Batches, b)
		tp := tell(b)
		if !kill || b.Generation%3 != 0 {
			reopen()
			if r.Last, err = m.Tell(ctx, s.ID, tp); err != nil {
				t.Fatal(err)
			}
			continue
		}
		for range b.Candidates {
			reopen()
			c, err := m.Claim(ctx, s.ID, time.Minute, "w")
			if err != nil || c.Index < 0 {
				t.Fatalf("claim %+v, %v", c, err)
			}
			if !reflect.DeepEqual(c.X, b.Candidates[c.Index]) || len(b.Z) > 0 && (!reflect.DeepEqual(c.Z, b.Z[c.Index]) || !reflect.DeepEqual(c.C, b.C[c.Index])) {
				t.Fatalf("claim %+v is not candidate %d of the batch", c, c.Index)
			}
			one := session.TellParams{Generation: b.Generation, Indices: []int{c.Index}, Fitness: []float64{tp.Fitness[c.Index]}}
			if tp.Constraints != nil {
				one.Constraints = [][]float64{tp.Constraints[c.Index]}
			}
			reopen()
			if r.Last, err = m.Tell(ctx, s.ID, one); err != nil {
				t.Fatal(err)
			}
			if c.Index == 0 { // sent again: held already
				if _, err := m.Tell(ctx, s.ID, one); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	reopen()
	if r.History, err = m.History(ctx, s.ID, 0, 0); err != nil {
		t.Fatal(err)
	}
	// The last tell sent again changes nothing.
	if again, err := m.Tell(ctx, s.ID, tell(r.Batches[len(r.Batches)-1])); err != nil || again.Generation != gens {
		t.Fatalf("the last tell sent again: generation %d, %v", again.Generation, err)
	}
	if _, err := session.Check(ctx, st, func(id string, err error) { t.Errorf("Check: %s: %v", id, err) }); err != nil {
		t.Fatal(err)
	}
	r.Last.UpdatedAt = time.Time{}
	return r
}
