package session_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
)

// OnEvent hears each session's life: created, every generation applied
// with its evaluations, the IPOP restart by the tell that ended the run,
// the stop by a criterion, a stop request, and the deletion.
func TestEvents(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "e.db"))
	defer st.Close()
	var events []session.Event
	m := session.NewManager(st, session.Options{OnEvent: func(e session.Event) { events = append(events, e) }})
	ctx := context.Background()
	one := 1
	s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 1}, Sigma0: 0.5, Seed: seed(1), PopulationSize: 4,
		Algorithm: session.AlgorithmCMAES, Restarts: session.Restarts{Strategy: "ipop", Max: &one}})
	if err != nil {
		t.Fatal(err)
	}
	told, evals := 0, 0
	for g := 0; ; g++ {
		b, err := m.Ask(ctx, s.ID)
		if err != nil {
			break // stopped
		}
		f := make([]float64, len(b.Candidates))
		for i, x := range b.Candidates {
			f[i] = sphere(x)
		}
		if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: b.Generation, Fitness: f}); err != nil {
			t.Fatal(err)
		}
		told, evals = told+1, evals+len(f)
		if g > 10000 {
			t.Fatal("no stop")
		}
	}
	other, err := m.Create(ctx, session.CreateParams{X0: []float64{1}, Sigma0: 1, Algorithm: session.AlgorithmCMAES})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Stop(ctx, other.ID); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(ctx, s.ID); err != nil {
		t.Fatal(err)
	}

	count := map[session.EventKind]int{}
	gotEvals := 0
	var order []session.EventKind
	for _, e := range events {
		count[e.Kind]++
		gotEvals += e.Evaluations
		if e.Kind != session.EventTold {
			order = append(order, e.Kind)
		}
	}
	want := []session.EventKind{session.EventCreated, session.EventRestarted, session.EventStopped, session.EventCreated, session.EventStopped, session.EventDeleted}
	if !slices.Equal(order, want) {
		t.Errorf("events %v, want %v", order, want)
	}
	if count[session.EventTold] != told || gotEvals != evals {
		t.Errorf("%d told events of %d evaluations, want %d of %d", count[session.EventTold], gotEvals, told, evals)
	}
	for _, e := range events {
		switch e.Kind {
		case session.EventRestarted:
			if e.Session.Restarts.Count != 1 {
				t.Errorf("restart event with %d restarts", e.Session.Restarts.Count)
			}
		case session.EventStopped:
			if e.Session.Status != session.StatusStopped || len(e.Session.StopReasons) == 0 {
				t.Errorf("stop event of %+v", e.Session)
			}
		case session.EventDeleted:
			if e.Session.ID != s.ID {
				t.Errorf("deleted %q, want %q", e.Session.ID, s.ID)
			}
		}
	}
}
