package session_test

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/exactbits"
	"github.com/selfcma/selfcma/internal/session"
)

// conProblem is the sphere with x_0 + 1 ≤ 0 (active at the optimum,
// x = (−1, 0, …), f = 1) and Σx² ≤ 4 (inactive there), with failures:
// every seventh generation candidate 1's f is unknown, every fifth
// candidate 2's second constraint value.
func conProblem(g, k int, x []float64) (float64, []float64) {
	f := sphere(x)
	c := []float64{x[0] + 1, sphere(x) - 4}
	if g%7 == 3 && k == 1 {
		f = math.NaN()
	}
	if g%5 == 2 && k == 2 {
		c[1] = math.NaN()
	}
	return f, c
}

func conTell(b session.Batch) session.TellParams {
	t := session.TellParams{Generation: b.Generation, Fitness: make([]float64, len(b.Candidates)), Constraints: make([][]float64, len(b.Candidates))}
	for k, x := range b.Candidates {
		t.Fitness[k], t.Constraints[k] = conProblem(b.Generation, k, x)
	}
	return t
}

// conParams is the create of a constrained session; self-CMA-ES with λ =
// 10n and no signal-to-noise rule, where its rates adapt by h_t.
func conParams(alg string) session.CreateParams {
	p := session.CreateParams{X0: []float64{1, 1, 1, 1}, Sigma0: 1, Algorithm: alg, Seed: seed(41),
		Constraints: &session.Constraints{Count: 2}}
	if alg == session.AlgorithmSelfCMAES {
		p.PopulationSize, p.SNR = 40, new(false)
	}
	return p
}

// runConstrained drives a constrained session for gens generations
// (runResumed).
func runConstrained(t *testing.T, path, alg string, gens int, kill bool) conRun {
	t.Helper()
	return runResumed(t, path, conParams(alg), conTell, gens, kill)
}

// TestConstrainedResume: a constrained session closed and opened before
// every call, told in parts every third generation, goes exactly as one
// told whole in one process: the same batches, the same session (its
// multipliers, best and best feasible point) and history, bit for bit.
func TestConstrainedResume(t *testing.T) {
	for _, alg := range []string{session.AlgorithmCMAES, session.AlgorithmSelfCMAES} {
		t.Run(alg, func(t *testing.T) {
			dir := t.TempDir()
			const gens = 40
			want := runConstrained(t, filepath.Join(dir, "whole.db"), alg, gens, false)
			got := runConstrained(t, filepath.Join(dir, "killed.db"), alg, gens, true)
			for g := range want.Batches {
				if !reflect.DeepEqual(got.Batches[g], want.Batches[g]) {
					t.Fatalf("generation %d: the batches differ", g)
				}
			}
			got.Last.ID, got.Last.CreatedAt = want.Last.ID, want.Last.CreatedAt
			if g, w := exactbits.JSON(t, exactbits.Of(got.Last)), exactbits.JSON(t, exactbits.Of(want.Last)); !bytes.Equal(g, w) {
				t.Fatalf("the sessions differ:\n%s\n%s", g, w)
			}
			if g, w := exactbits.JSON(t, exactbits.Of(got.History)), exactbits.JSON(t, exactbits.Of(want.History)); !bytes.Equal(g, w) {
				t.Fatalf("the histories differ:\n%s\n%s", g, w)
			}
			checkConstrainedView(t, want)
		})
	}
}

// checkConstrainedView checks what a constrained run reports against the
// values told: the best f of all, the best feasible point (feasible, its
// g as told, its f the least feasible f), the history's f statistics
// and violations, the coefficients set and non-negative.
func checkConstrainedView(t *testing.T, r conRun) {
	t.Helper()
	bestF, bestFeas := math.Inf(1), math.Inf(1)
	var bestFeasX []float64
	for g, b := range r.Batches {
		tp := conTell(b)
		genFeas, viol := 0, math.Inf(1)
		for k, f := range tp.Fitness {
			if !math.IsNaN(f) {
				bestF = math.Min(bestF, f)
			}
			c := tp.Constraints[k]
			if math.IsNaN(c[0]) || math.IsNaN(c[1]) {
				continue
			}
			viol = math.Min(viol, max(0, c[0])+max(0, c[1]))
			if c[0] <= 0 && c[1] <= 0 {
				genFeas++
				if f < bestFeas {
					bestFeas, bestFeasX = f, b.Candidates[k]
				}
			}
		}
		h := r.History[g].Constraint
		if h == nil || h.Feasible != genFeas || h.Violation != viol {
			t.Fatalf("generation %d: history %+v, want %d feasible, violation %v", g, h, genFeas, viol)
		}
	}
	s := r.Last
	if s.Best == nil || s.Best.F != bestF {
		t.Fatalf("best %+v, want f %v", s.Best, bestF)
	}
	bf := s.BestFeasible
	if bf == nil || bf.F != bestFeas || !reflect.DeepEqual(bf.X, bestFeasX) || bf.G[0] > 0 || bf.G[1] > 0 {
		t.Fatalf("best feasible %+v, want f %v at %v", bf, bestFeas, bestFeasX)
	}
	if h := r.History[len(r.History)-1]; h.BestSoFar != bestF || h.Constraint.BestFeasibleSoFar != bestFeas {
		t.Fatalf("last history record %+v %+v", h, h.Constraint)
	}
	c := s.Constraints
	if c == nil || c.Count != 2 || len(c.Multipliers) != 2 || len(c.Penalties) != 2 || c.Multipliers[0] < 0 || !(c.Penalties[0] > 0) {
		t.Fatalf("constraints %+v", c)
	}
}

// TestConstrainedConverges: the best feasible point of a constrained
// session comes within 1e-8 of the constrained optimum (f = 1).
func TestConstrainedConverges(t *testing.T) {
	r := runConstrained(t, filepath.Join(t.TempDir(), "s.db"), session.AlgorithmCMAES, 300, false)
	checkConstrainedView(t, r)
	if f := r.Last.BestFeasible.F; !(f-1 <= 1e-8) {
		t.Errorf("best feasible f %v after %d generations, want within 1e-8 of 1", f, len(r.Batches))
	}
}

// TestConstrainedRefusals: a bad constraints declaration, and a tell whose
// constraint values do not fit, are refused naming the field, and the
// tell changes nothing.
func TestConstrainedRefusals(t *testing.T) {
	ctx := context.Background()
	m, _ := newManager(t)
	target := 1.0
	for name, c := range map[string]struct {
		edit func(p *session.CreateParams)
		want string
	}{
		"zero":      {func(p *session.CreateParams) { p.Constraints.Count = 0 }, "constraints.count 0"},
		"too many":  {func(p *session.CreateParams) { p.Constraints.Count = session.MaxConstraints + 1 }, "constraints.count"},
		"too large": {func(p *session.CreateParams) { p.X0 = make([]float64, 1000); p.Constraints.Count = 500 }, "m·(n+20)"},
		"target":    {func(p *session.CreateParams) { p.Termination.TargetFitness = &target }, "termination.target_fitness"},
	} {
		p := conParams(session.AlgorithmCMAES)
		c.edit(&p)
		_, err := m.Create(ctx, p)
		wantCode(t, err, session.CodeOutOfRange)
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want it to name %s", name, err, c.want)
		}
	}

	s, err := m.Create(ctx, conParams(session.AlgorithmSelfCMAES))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 1}, Sigma0: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Ask(ctx, s.ID)
	lam := len(b.Candidates)
	good := conTell(b)
	for name, c := range map[string]struct {
		edit func(tp *session.TellParams)
		want string
	}{
		"missing":   {func(tp *session.TellParams) { tp.Constraints = nil }, "constraint_values is required"},
		"rows":      {func(tp *session.TellParams) { tp.Constraints = tp.Constraints[1:] }, "constraint_values has"},
		"row width": {func(tp *session.TellParams) { tp.Constraints[3] = []float64{1, 2, 3} }, "constraint_values[3] has 3 values, want 2"},
		"infinite":  {func(tp *session.TellParams) { tp.Constraints[1] = []float64{math.Inf(1), 0} }, "constraint_values[1][0] is infinite"},
		"partial": {func(tp *session.TellParams) {
			tp.Indices, tp.Fitness, tp.Constraints = []int{0, 1}, tp.Fitness[:2], [][]float64{{1}, nil}
		}, "constraint_values[0] has 1 values"},
	} {
		tp := conTell(b)
		c.edit(&tp)
		_, err := m.Tell(ctx, s.ID, tp)
		wantCode(t, err, session.CodeOutOfRange)
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want it to say %q", name, err, c.want)
		}
	}
	if now, _ := m.Get(ctx, s.ID); now.Generation != 0 || now.Partial.Indices != nil || now.Best != nil {
		t.Fatalf("a refused tell changed the session: %+v", now)
	}
	pb, _ := m.Ask(ctx, plain.ID)
	_, err = m.Tell(ctx, plain.ID, session.TellParams{Generation: 0, Fitness: fitness(pb), Constraints: make([][]float64, len(pb.Candidates))})
	wantCode(t, err, session.CodeOutOfRange)
	if !strings.Contains(err.Error(), "no constraints") {
		t.Errorf("constraint values told an unconstrained session: %v", err)
	}

	// A held value told again with other constraint values conflicts.
	one := session.TellParams{Generation: 0, Indices: []int{4}, Fitness: good.Fitness[4:5], Constraints: [][]float64{{-1, -1}}}
	if _, err := m.Tell(ctx, s.ID, one); err != nil {
		t.Fatal(err)
	}
	one.Constraints = [][]float64{{-1, 0}}
	_, err = m.Tell(ctx, s.ID, one)
	wantCode(t, err, session.CodeConflict)
	if now, _ := m.Get(ctx, s.ID); len(now.Partial.Constraints) != 1 || now.Partial.Constraints[0][1] != -1 || lam < 5 {
		t.Fatalf("held %+v", now.Partial)
	}
}

// TestConstrainedSummary: a list shows a constrained session's best f,
// not the augmented Lagrangian's.
func TestConstrainedSummary(t *testing.T) {
	ctx := context.Background()
	m, _ := newManager(t)
	s, err := m.Create(ctx, conParams(session.AlgorithmCMAES))
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		b, _ := m.Ask(ctx, s.ID)
		if s, err = m.Tell(ctx, s.ID, conTell(b)); err != nil {
			t.Fatal(err)
		}
	}
	sums, err := m.List(ctx, "", 10)
	if err != nil || len(sums) != 1 || sums[0].BestF == nil || *sums[0].BestF != s.Best.F {
		t.Fatalf("summaries %+v, %v; best %+v", sums, err, s.Best)
	}
}
