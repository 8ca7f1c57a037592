package session_test

import (
	"context"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/session"
)

// TestPartialTells: a run told in parts (chunks in random order, some sent
// twice, a failed evaluation, the server restarted between two parts of a
// generation) hands out the same batches, bit for bit, and ends in the same
// session and history as the run told whole.
func TestPartialTells(t *testing.T) {
	ctx := context.Background()
	for _, alg := range []string{session.AlgorithmCMAES, session.AlgorithmSelfCMAES, session.AlgorithmSepCMAES} {
		t.Run(alg, func(t *testing.T) {
			dir := t.TempDir()
			p := session.CreateParams{X0: []float64{1, -2, 0.5}, Sigma0: 0.7, Algorithm: alg, PopulationSize: 12, Seed: seed(11)}
			const generations = 15
			value := func(b session.Batch, i int) float64 {
				if i == 3 && b.Generation%4 == 1 {
					return math.NaN()
				}
				return sphere(b.Candidates[i])
			}

			whole, _ := newManager(t)
			ws, want := runWhole(t, whole, p, generations, value)

			st := openStore(t, filepath.Join(dir, "parts.db"))
			m := session.NewManager(st, session.Options{})
			s, err := m.Create(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			var got []session.Batch
			for range generations {
				b, err := m.Ask(ctx, s.ID)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, b)
				order := rng.Perm(len(b.Candidates))
				for len(order) > 0 {
					k := min(len(order), 1+rng.IntN(5))
					tp := session.TellParams{Generation: b.Generation, Indices: order[:k]}
					for _, i := range tp.Indices {
						tp.Fitness = append(tp.Fitness, value(b, i))
					}
					order = order[k:]
					for range 1 + rng.IntN(2) { // sent once or twice
						s, err = m.Tell(ctx, s.ID, tp)
						if err != nil {
							t.Fatal(err)
						}
					}
					if len(order) == 0 {
						break
					}
					if s.Generation != b.Generation || len(s.Partial.Indices) != len(b.Candidates)-len(order) {
						t.Fatalf("generation %d: holds %v after a part", s.Generation, s.Partial.Indices)
					}
					if rng.IntN(4) == 0 { // the server restarts
						st.Close()
						st = openStore(t, filepath.Join(dir, "parts.db"))
						m = session.NewManager(st, session.Options{})
					}
				}
				if s.Generation != b.Generation+1 || s.Partial.Indices != nil {
					t.Fatalf("the last part left generation %d, holding %v", s.Generation, s.Partial.Indices)
				}
			}
			defer st.Close()
			if !reflect.DeepEqual(got, want) {
				t.Fatal("the run told in parts handed out other batches")
			}
			wantS, _ := whole.Get(ctx, ws.ID)
			gotS, err := m.Get(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			gotS.ID, gotS.CreatedAt, gotS.UpdatedAt = wantS.ID, wantS.CreatedAt, wantS.UpdatedAt
			if !reflect.DeepEqual(sameNaN(gotS), sameNaN(wantS)) {
				t.Fatalf("told in parts: %+v\nwhole:         %+v", gotS, wantS)
			}
			wantH, _ := whole.History(ctx, ws.ID, 0, 0)
			gotH, _ := m.History(ctx, s.ID, 0, 0)
			if len(gotH) != generations || !reflect.DeepEqual(nanless(gotH), nanless(wantH)) {
				t.Fatal("the history told in parts differs")
			}
		})
	}
}

// runWhole creates a session of p and tells it the given number of
// generations whole, candidate i of batch b valued value(b, i); it returns
// the session and its batches.
func runWhole(t *testing.T, m *session.Manager, p session.CreateParams, generations int, value func(b session.Batch, i int) float64) (session.Session, []session.Batch) {
	t.Helper()
	ctx := context.Background()
	s, err := m.Create(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var batches []session.Batch
	for range generations {
		b, err := m.Ask(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, b)
		f := make([]float64, len(b.Candidates))
		for i := range f {
			f[i] = value(b, i)
		}
		if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: b.Generation, Fitness: f}); err != nil {
			t.Fatal(err)
		}
	}
	return s, batches
}

// sameNaN and nanless make records with NaN comparable by DeepEqual.
func sameNaN(s session.Session) session.Session {
	if s.Best != nil && math.IsNaN(s.Best.F) {
		s.Best.F = -1
	}
	f := slicesClone(s.Partial.Fitness)
	for i := range f {
		if math.IsNaN(f[i]) {
			f[i] = -1
		}
	}
	s.Partial.Fitness = f
	return s
}

func nanless(h []session.HistoryRecord) []session.HistoryRecord {
	out := make([]session.HistoryRecord, len(h))
	for i, r := range h {
		for _, p := range []*float64{&r.Best, &r.Median, &r.BestSoFar} {
			if math.IsNaN(*p) {
				*p = -1
			}
		}
		out[i] = r
	}
	return out
}

// TestPartialTellErrors: every bad partial tell is refused with its code and
// a message naming the problem, and changes nothing, held values included.
func TestPartialTellErrors(t *testing.T) {
	ctx := context.Background()
	m, _ := newManager(t)
	s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 2}, Sigma0: 1, Algorithm: session.AlgorithmCMAES, PopulationSize: 6, Seed: seed(5)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Ask(ctx, s.ID)
	f := fitness(b)
	held, err := m.Tell(ctx, s.ID, session.TellParams{Generation: 0, Indices: []int{4, 1}, Fitness: []float64{f[4], math.NaN()}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(held.Partial.Indices, []int{1, 4}) || !math.IsNaN(held.Partial.Fitness[0]) || held.Partial.Fitness[1] != f[4] || held.Generation != 0 {
		t.Fatalf("held %+v", held.Partial)
	}
	for _, tt := range []struct {
		name string
		tell session.TellParams
		code session.Code
		msg  string
	}{
		{"lengths", session.TellParams{Generation: 0, Indices: []int{0, 2}, Fitness: []float64{1}}, session.CodeOutOfRange, "indices has 2 values and fitness 1"},
		{"empty", session.TellParams{Generation: 0, Indices: []int{}, Fitness: []float64{}}, session.CodeOutOfRange, "indices is empty"},
		{"negative", session.TellParams{Generation: 0, Indices: []int{-1}, Fitness: []float64{1}}, session.CodeOutOfRange, "indices[0] is -1, want 0 to 5"},
		{"beyond λ", session.TellParams{Generation: 0, Indices: []int{0, 6}, Fitness: []float64{f[0], 1}}, session.CodeOutOfRange, "indices[1] is 6"},
		{"repeated", session.TellParams{Generation: 0, Indices: []int{2, 2}, Fitness: []float64{f[2], f[2]}}, session.CodeOutOfRange, "indices[1] repeats candidate 2"},
		{"infinite", session.TellParams{Generation: 0, Indices: []int{2}, Fitness: []float64{math.Inf(-1)}}, session.CodeOutOfRange, "fitness[0] is infinite"},
		{"held otherwise", session.TellParams{Generation: 0, Indices: []int{0, 4}, Fitness: []float64{f[0], f[4] + 1}}, session.CodeConflict, "candidate 4 of generation 0 was told"},
		{"held failed", session.TellParams{Generation: 0, Indices: []int{1}, Fitness: []float64{2}}, session.CodeConflict, "was told null before, now 2"},
		{"whole, otherwise", session.TellParams{Generation: 0, Fitness: f}, session.CodeConflict, "candidate 1 of generation 0"},
		{"future", session.TellParams{Generation: 1, Indices: []int{0}, Fitness: []float64{f[0]}}, session.CodeConflict, "has not been asked"},
	} {
		_, err := m.Tell(ctx, s.ID, tt.tell)
		wantCode(t, err, tt.code)
		if !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: %v, want it to say %q", tt.name, err, tt.msg)
		}
		if got, _ := m.Get(ctx, s.ID); !reflect.DeepEqual(sameNaN(got), sameNaN(held)) || !math.IsNaN(got.Partial.Fitness[0]) {
			t.Fatalf("%s changed the session", tt.name)
		}
	}

	// The rest completes generation 0; a whole tell may repeat held values.
	f[1] = math.NaN()
	done, err := m.Tell(ctx, s.ID, session.TellParams{Generation: 0, Fitness: f})
	if err != nil || done.Generation != 1 || done.Partial.Indices != nil {
		t.Fatalf("completing tell: generation %d, holding %v, %v", done.Generation, done.Partial.Indices, err)
	}
	// Parts of generation 0 told again are retries; told otherwise, conflicts.
	again, err := m.Tell(ctx, s.ID, session.TellParams{Generation: 0, Indices: []int{1, 5}, Fitness: []float64{math.NaN(), f[5]}})
	if err != nil || !reflect.DeepEqual(sameNaN(again), sameNaN(done)) {
		t.Fatalf("retried part: %v", err)
	}
	_, err = m.Tell(ctx, s.ID, session.TellParams{Generation: 0, Indices: []int{5}, Fitness: []float64{f[5] + 1}})
	wantCode(t, err, session.CodeConflict)

	// A stopped session keeps what it held, and takes no more.
	b, _ = m.Ask(ctx, s.ID)
	if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: 1, Indices: []int{0}, Fitness: []float64{sphere(b.Candidates[0])}}); err != nil {
		t.Fatal(err)
	}
	stopped, err := m.Stop(ctx, s.ID)
	if err != nil || !reflect.DeepEqual(stopped.Partial.Indices, []int{0}) {
		t.Fatalf("stopped: holds %v, %v", stopped.Partial.Indices, err)
	}
	_, err = m.Tell(ctx, s.ID, session.TellParams{Generation: 1, Indices: []int{1}, Fitness: []float64{1}})
	wantCode(t, err, session.CodeStopped)
}

// TestRacingPartialTells: eight workers tell their own candidates of every
// generation one at a time, racing, each telling again what it told when it
// sees the same generation again: every generation is applied exactly once,
// with every value, as the run told whole.
func TestRacingPartialTells(t *testing.T) {
	ctx := context.Background()
	const workers, generations = 8, 20
	p := session.CreateParams{X0: []float64{2, -1, 0.5, 1}, Sigma0: 0.5, Algorithm: session.AlgorithmSelfCMAES, PopulationSize: 16, Seed: seed(21)}
	m, _ := newManager(t)
	whole, want := runWhole(t, m, p, generations, func(b session.Batch, i int) float64 { return sphere(b.Candidates[i]) })

	s, err := m.Create(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg   sync.WaitGroup
		seen = make([]atomic.Int64, generations) // tells answered per generation
	)
	deadline := time.Now().Add(time.Minute) // a lost value would leave a generation incomplete for ever
	for w := range workers {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				b, err := m.Ask(ctx, s.ID)
				if err != nil {
					t.Error(err)
					return
				}
				if b.Generation >= generations {
					return
				}
				if !reflect.DeepEqual(b, want[b.Generation]) {
					t.Errorf("worker %d: generation %d's batch differs", w, b.Generation)
					return
				}
				for i := w; i < len(b.Candidates); i += workers {
					tp := session.TellParams{Generation: b.Generation, Indices: []int{i}, Fitness: []float64{sphere(b.Candidates[i])}}
					if _, err := m.Tell(ctx, s.ID, tp); err != nil {
						t.Errorf("worker %d: %v", w, err)
						return
					}
					seen[b.Generation].Add(1)
				}
			}
			t.Errorf("worker %d: the run did not reach generation %d in a minute", w, generations)
		})
	}
	wg.Wait()
	h, err := m.History(ctx, s.ID, 0, 0)
	if err != nil || len(h) != generations {
		t.Fatalf("%d history records, want %d: %v", len(h), generations, err)
	}
	wantH, _ := m.History(ctx, whole.ID, 0, 0)
	if !reflect.DeepEqual(h, wantH) {
		t.Fatal("the history of the raced run differs from the whole run's")
	}
	for g := range seen {
		if seen[g].Load() < 16 {
			t.Fatalf("generation %d: %d parts answered, want at least 16", g, seen[g].Load())
		}
	}
}

// TestPartialTellModel drives a session with random tells (parts with
// indices out of range, repeated, of values told before or otherwise,
// whole tells, tells of the generation just applied and of others) and
// holds every answer to a model of the rules: which tells are refused with
// which code, what the session holds, when a generation is applied. A twin
// session told each applied generation whole hands out the same batches.
func TestPartialTellModel(t *testing.T) {
	ctx := context.Background()
	const lam, generations = 6, 25
	m, _ := newManager(t)
	p := session.CreateParams{X0: []float64{0.5, -1}, Sigma0: 0.3, Algorithm: session.AlgorithmCMAES, PopulationSize: lam, Seed: seed(3)}
	s, err := m.Create(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	twin, err := m.Create(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var (
		gen     int
		held    = map[int]float64{}
		applied []float64 // the values of generation gen-1
	)
	value := func(b session.Batch, i int) float64 {
		if rng.IntN(10) == 0 {
			return math.NaN()
		}
		return sphere(b.Candidates[i]) + float64(rng.IntN(3)) // two clients may disagree
	}
	outcomes := map[session.Code]int{}
	step := 0
	for ; gen < generations; step++ {
		if step > 100*generations {
			t.Fatal("the run does not advance")
		}
		b, err := m.Ask(ctx, s.ID)
		if err != nil || b.Generation != gen {
			t.Fatalf("ask: generation %d, %v; the model is at %d", b.Generation, err, gen)
		}
		tp := session.TellParams{Generation: gen}
		if gen > 0 && rng.IntN(8) == 0 {
			tp.Generation = gen - 1
		}
		whole := rng.IntN(6) == 0
		if whole {
			for i := range lam {
				f, ok := held[i]
				if !ok || rng.IntN(4) == 0 {
					f = value(b, i)
				}
				tp.Fitness = append(tp.Fitness, f)
			}
		} else {
			tp.Indices = []int{}
			for range 1 + rng.IntN(3) {
				i := rng.IntN(lam + 1) // lam: out of range
				if rng.IntN(12) == 0 {
					i = -1
				}
				f, ok := held[i]
				if tp.Generation < gen && i >= 0 && i < lam {
					f, ok = applied[i], true
				}
				if !ok || rng.IntN(4) == 0 {
					f = value(b, min(max(i, 0), lam-1))
				}
				tp.Indices = append(tp.Indices, i)
				tp.Fitness = append(tp.Fitness, f)
			}
		}

		// What the rules say.
		var want session.Code
		vals, seen := maps.Clone(held), map[int]bool{}
		if tp.Generation < gen {
			want = session.CodeConflict
			retry := true
			for k, f := range tp.Fitness {
				i := k
				if !whole {
					i = tp.Indices[k]
				}
				retry = retry && i >= 0 && i < lam && sameF(applied[i], f)
			}
			if retry {
				want = ""
			}
		} else {
			for k, f := range tp.Fitness {
				i := k
				if !whole {
					i = tp.Indices[k]
				}
				switch old, ok := vals[i]; {
				case want != "":
				case i < 0 || i >= lam || seen[i]:
					want = session.CodeOutOfRange
				case ok && !sameF(old, f):
					want = session.CodeConflict
				default:
					vals[i], seen[i] = f, true
				}
			}
		}

		got, err := m.Tell(ctx, s.ID, tp)
		outcomes[want]++
		if err != nil {
			code := session.ErrorCode(err)
			if code != want {
				t.Fatalf("step %d: %+v (holding %v) got %v, want code %q", step, tp, held, err, want)
			}
			continue
		}
		if want != "" {
			t.Fatalf("step %d: %+v (holding %v) accepted, want code %q", step, tp, held, want)
		}
		if tp.Generation < gen {
			continue // a retry: nothing changes
		}
		held = vals
		if len(held) == lam {
			applied = make([]float64, lam)
			for i, f := range held {
				applied[i] = f
			}
			if _, err := m.Tell(ctx, twin.ID, session.TellParams{Generation: gen, Fitness: applied}); err != nil {
				t.Fatal(err)
			}
			gen, held = gen+1, map[int]float64{}
		}
		if got.Generation != gen || len(got.Partial.Indices) != len(held) {
			t.Fatalf("step %d: the session is at generation %d holding %v; the model at %d holding %v", step, got.Generation, got.Partial.Indices, gen, held)
		}
		for k, i := range got.Partial.Indices {
			if f, ok := held[i]; !ok || !sameF(f, got.Partial.Fitness[k]) || (k > 0 && i <= got.Partial.Indices[k-1]) {
				t.Fatalf("step %d: holds %v = %v; the model %v", step, got.Partial.Indices, got.Partial.Fitness, held)
			}
		}
		tb, _ := m.Ask(ctx, twin.ID)
		if nb, _ := m.Ask(ctx, s.ID); !reflect.DeepEqual(nb.Candidates, tb.Candidates) {
			t.Fatalf("generation %d: the batch differs from the twin's", gen)
		}
	}
	t.Logf("%d tells: %v", step, outcomes)
	if outcomes[session.CodeConflict] == 0 || outcomes[session.CodeOutOfRange] == 0 || outcomes[""] < 2*generations {
		t.Errorf("the tells did not cover the rules: %v", outcomes)
	}
}

func sameF(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// TestPartialTellsAcrossRestarts: told in parts, a run with IPOP restarts
// (λ doubles) hands out the batches of the run told whole; claims follow
// the population size.
func TestPartialTellsAcrossRestarts(t *testing.T) {
	ctx := context.Background()
	tolFun := 1e-3
	p := session.CreateParams{X0: []float64{1, 2, 3}, Sigma0: 0.5, Algorithm: session.AlgorithmCMAES, PopulationSize: 4, Seed: seed(12),
		Restarts: session.Restarts{Strategy: "ipop"}, Termination: session.Termination{TolFun: &tolFun}}
	const generations = 120
	whole, _ := newManager(t)
	_, want := runWhole(t, whole, p, generations, func(b session.Batch, i int) float64 { return sphere(b.Candidates[i]) })

	m, _ := newManager(t)
	s, err := m.Create(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	lambdas := map[int]bool{}
	for g := range generations {
		b, err := m.Ask(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(b, want[g]) {
			t.Fatalf("generation %d: the batch differs from the run told whole", g)
		}
		lambdas[len(b.Candidates)] = true
		for range b.Candidates { // a worker claims each candidate and tells it
			c, err := m.Claim(ctx, s.ID, time.Minute, "w")
			if err != nil || c.Index < 0 || c.Generation != g {
				t.Fatalf("generation %d: claim %+v, %v", g, c, err)
			}
			if _, err := m.Tell(ctx, s.ID, session.TellParams{Generation: g, Indices: []int{c.Index}, Fitness: []float64{sphere(c.X)}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(lambdas) < 2 {
		t.Fatalf("population sizes %v: no restart in %d generations", lambdas, generations)
	}
}
