package session_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
)

// editStore answers as st does, but for session id: Get's record and
// History's entries pass through rec and hist first, as a damaged file
// would answer them.
type editStore struct {
	session.Store
	id   string
	rec  func(r *session.Record)
	hist func(h []session.HistoryEntry) []session.HistoryEntry
}

func (s editStore) Get(ctx context.Context, id string) (session.Record, error) {
	r, err := s.Store.Get(ctx, id)
	if err == nil && id == s.id && s.rec != nil {
		s.rec(&r)
	}
	return r, err
}

func (s editStore) History(ctx context.Context, id string, from uint64, limit int) ([]session.HistoryEntry, error) {
	h, err := s.Store.History(ctx, id, from, limit)
	if err == nil && id == s.id && s.hist != nil {
		h = s.hist(h)
	}
	return h, err
}

// checkProblems runs session.Check on st and returns its problems as
// "id: problem" lines.
func checkProblems(t *testing.T, st session.Store) ([]string, session.CheckCounts) {
	t.Helper()
	var probs []string
	n, err := session.Check(context.Background(), st, func(id string, err error) {
		probs = append(probs, id+": "+err.Error())
	})
	if err != nil {
		t.Fatal(err)
	}
	return probs, n
}

// TestCheck: sessions of every kind a server writes read as sound, and each
// fault planted in one of them is named, once, with its session.
func TestCheck(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "check.db"))
	defer st.Close()
	m := session.NewManager(st, session.Options{})
	value := func(b session.Batch, i int) float64 { return sphere(b.Candidates[i]) }
	x0 := []float64{1, 2, 3}

	plain, _ := runWhole(t, m, session.CreateParams{X0: x0, Sigma0: 0.5, Algorithm: session.AlgorithmCMAES, Seed: seed(1)}, 5, value)
	self, _ := runWhole(t, m, session.CreateParams{X0: x0, Sigma0: 0.5, Seed: seed(2)}, 3, value)
	b, err := m.Ask(ctx, self.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Tell(ctx, self.ID, session.TellParams{Generation: b.Generation, Indices: []int{1, 3}, Fitness: []float64{1, 2}}); err != nil {
		t.Fatal(err)
	}
	stopped, _ := runWhole(t, m, session.CreateParams{X0: x0, Sigma0: 0.5, Algorithm: session.AlgorithmCMAES, Seed: seed(3)}, 2, value)
	if _, err := m.Stop(ctx, stopped.ID); err != nil {
		t.Fatal(err)
	}
	tolFun := 1e-3
	ipop, _ := runWhole(t, m, session.CreateParams{X0: x0, Sigma0: 0.5, Algorithm: session.AlgorithmCMAES, PopulationSize: 4, Seed: seed(12),
		Restarts: session.Restarts{Strategy: "ipop"}, Termination: session.Termination{TolFun: &tolFun}}, 120, value)
	if s, _ := m.Get(ctx, ipop.ID); s.Restarts.Count == 0 {
		t.Fatal("no restart in 120 generations")
	}
	if _, err := m.Create(ctx, session.CreateParams{X0: x0, Sigma0: 0.5, Seed: seed(4), IdempotencyKey: "k"}); err != nil {
		t.Fatal(err)
	}
	gone, _ := runWhole(t, m, session.CreateParams{X0: x0, Sigma0: 0.5, Seed: seed(5)}, 2, value)
	if err := m.Delete(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}

	probs, n := checkProblems(t, st)
	if len(probs) > 0 || n != (session.CheckCounts{Sessions: 5, HistoryEntries: 5 + 3 + 2 + 120}) {
		t.Fatalf("sound sessions: %+v, problems %q", n, probs)
	}

	editMeta := func(edit func(m *session.Meta)) func(r *session.Record) {
		return func(r *session.Record) {
			b, err := session.EditMeta(r.Meta, edit)
			if err != nil {
				t.Fatal(err)
			}
			r.Meta = b
		}
	}
	garbage := []byte("selfcma? no")
	later, err := st.History(ctx, ipop.ID, 5, 2)
	if err != nil || len(later) != 2 {
		t.Fatal(later, err)
	}
	faults := []struct {
		name string
		rec  func(r *session.Record)
		hist func(h []session.HistoryEntry) []session.HistoryEntry
		want string
	}{
		{name: "record", rec: func(r *session.Record) { r.Meta = garbage }, want: "decode session record"},
		{name: "record's id", rec: editMeta(func(m *session.Meta) { m.ID = "other" }), want: `the record is of session "other"`},
		{name: "state", rec: func(r *session.Record) { r.State = r.State[:len(r.State)-1] }, want: "optimizer state: "},
		{name: "generation", rec: editMeta(func(m *session.Meta) { m.Generation = 4 }), want: "the record says generation 4, the optimizer state 5"},
		{name: "evaluations", rec: editMeta(func(m *session.Meta) { m.Evaluations++ }), want: "the record says evaluations 36, the optimizer state 35"},
		{name: "status", rec: editMeta(func(m *session.Meta) { m.Status = session.StatusStopped }), want: "the record says status stopped, the optimizer state running"},
		{name: "best f", rec: editMeta(func(m *session.Meta) { m.BestF = nil }), want: "the record says best f none, the optimizer state "},
		{name: "last tell", rec: editMeta(func(m *session.Meta) { m.LastTell.Generation = 3 }), want: "the last tell is of generation 3, the pending one is 5"},
		{name: "held values' generation", rec: editMeta(func(m *session.Meta) {
			m.Partial = &session.PartialTell{Generation: 4, Indices: []int{0}, Fitness: []float64{1}}
		}), want: "values held for generation 4, the pending one is 5"},
		{name: "held values' candidates", rec: editMeta(func(m *session.Meta) {
			m.Partial = &session.PartialTell{Generation: 5, Indices: []int{0, 7}, Fitness: []float64{1, 2}}
		}), want: "values held for candidates [0 7] of 7"},
		{name: "entry missing", hist: func(h []session.HistoryEntry) []session.HistoryEntry {
			return append(h[:2:2], h[3:]...)
		}, want: "history: generations 2 to 2 are missing"},
		{name: "last entries missing", hist: func(h []session.HistoryEntry) []session.HistoryEntry { return h[:3] },
			want: "history: generations 3 to 4 are missing"},
		{name: "entry after the told", hist: func(h []session.HistoryEntry) []session.HistoryEntry {
			return append(h, later...) // sound entries, but of another session
		}, want: "history: entries of generations 5 to 6, after the 5 told"},
		{name: "entry", hist: func(h []session.HistoryEntry) []session.HistoryEntry {
			h[1].Data = garbage
			return h
		}, want: "history: generation 1: "},
		{name: "entry of another generation", hist: func(h []session.HistoryEntry) []session.HistoryEntry {
			h[1].Data = h[2].Data
			return h
		}, want: "history: the entry of generation 1 says generation 2"},
	}
	if plain.PopulationSize != 7 {
		t.Fatalf("λ = %d; the cases expect 7", plain.PopulationSize)
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			probs, n := checkProblems(t, editStore{Store: st, id: plain.ID, rec: f.rec, hist: f.hist})
			if n.Sessions != 5 {
				t.Errorf("read %d sessions", n.Sessions)
			}
			if len(probs) != 1 || !strings.HasPrefix(probs[0], plain.ID+": "+f.want) {
				t.Errorf("problems %q, want one: %s", probs, fmt.Sprintf("%s: %s...", plain.ID, f.want))
			}
		})
	}
}
