package session_test

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/catcma"
	"github.com/selfcma/selfcma/internal/exactbits"
	"github.com/selfcma/selfcma/internal/mixedfn"
	"github.com/selfcma/selfcma/internal/session"
)

// mixedParams is the create of a mixed session: two bounded continuous
// coordinates, the two integer lists, two categorical variables;
// with m constraints when m > 0.
func mixedParams(m int) session.CreateParams {
	p := session.CreateParams{X0: []float64{2, 2}, Sigma0: 1, Seed: seed(43),
		Bounds:     &session.Bounds{Lower: []float64{-1, -1}, Upper: []float64{5, 5}},
		Integers:   [][]float64{{0, 1, 2, 3}, {0.01, 0.1, 1}},
		Categories: []int{3, 5}}
	if m > 0 {
		p.Constraints = &session.Constraints{Count: m}
	}
	return p
}

// mixedTell evaluates SphereIntCOM (and x_0 − z_0 + 0.5 ≤ 0 for a
// constrained session); every seventh generation candidate 1 fails.
func mixedTell(b session.Batch, m int) session.TellParams {
	t := session.TellParams{Generation: b.Generation, Fitness: make([]float64, len(b.Candidates))}
	for k, x := range b.Candidates {
		t.Fitness[k] = mixedfn.SphereIntCOM(x, b.Z[k], b.C[k])
		if b.Generation%7 == 3 && k == 1 {
			t.Fitness[k] = math.NaN()
		}
		if m > 0 {
			t.Constraints = append(t.Constraints, []float64{x[0] - b.Z[k][0] + 0.5})
		}
	}
	return t
}

// runMixed drives a mixed session (with m constraints) for gens
// generations (runResumed).
func runMixed(t *testing.T, path string, m, gens int, kill bool) conRun {
	t.Helper()
	return runResumed(t, path, mixedParams(m), func(b session.Batch) session.TellParams { return mixedTell(b, m) }, gens, kill)
}

// TestMixedResume: a mixed session closed and opened before every call,
// told in parts every third generation, goes exactly as one told whole,
// which goes exactly as internal/catcma run in process with the same seed
// and values; the session reports the best candidate's z and c.
func TestMixedResume(t *testing.T) {
	for _, m := range []int{0, 1} {
		t.Run(map[int]string{0: "plain", 1: "constrained"}[m], func(t *testing.T) {
			dir := t.TempDir()
			const gens = 40
			want := runMixed(t, filepath.Join(dir, "whole.db"), m, gens, false)
			got := runMixed(t, filepath.Join(dir, "killed.db"), m, gens, true)
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
			s := want.Last
			if s.Algorithm != session.AlgorithmCatCMA || s.Dimension != 6 || s.Mixed == nil || len(s.Mixed.Q) != 2 || len(s.Mixed.Q[1]) != 5 {
				t.Fatalf("session %s, dimension %d, mixed %+v", s.Algorithm, s.Dimension, s.Mixed)
			}
			if b := s.Best; b == nil || len(b.X) != 2 || len(b.Z) != 2 || len(b.C) != 2 ||
				mixedfn.SphereIntCOM(b.X, b.Z, b.C) != b.F {
				t.Fatalf("best %+v", s.Best)
			}
			if m > 0 {
				if b := s.BestFeasible; b == nil || b.X[0]-b.Z[0]+0.5 > 0 || len(b.C) != 2 {
					t.Fatalf("best feasible %+v", b)
				}
				return
			}
			// The engine in process, told the same values.
			p := mixedParams(0)
			o, err := catcma.New(catcma.Config{Space: catcma.Space{X: [][2]float64{{-1, 5}, {-1, 5}}, Z: p.Integers, C: p.Categories},
				Mean: []float64{2, 2, 1.5, 0.505}, Sigma: 1, Seed: 43})
			if err != nil {
				t.Fatal(err)
			}
			for g, b := range want.Batches {
				for k, c := range o.Ask() {
					if !reflect.DeepEqual(c.X, b.Candidates[k]) || !reflect.DeepEqual(c.Z, b.Z[k]) || !reflect.DeepEqual(c.C, b.C[k]) {
						t.Fatalf("generation %d, candidate %d: session %v %v %v, engine %+v", g, k, b.Candidates[k], b.Z[k], b.C[k], c)
					}
				}
				if err := o.Tell(mixedTell(b, 0).Fitness); err != nil {
					t.Fatal(err)
				}
			}
			if o.State.Sigma != s.Sigma || !reflect.DeepEqual(o.State.Mean, s.Mean) {
				t.Fatalf("engine σ %v mean %v, session σ %v mean %v", o.State.Sigma, o.State.Mean, s.Sigma, s.Mean)
			}
		})
	}
}

// TestMixedValidation: bad mixed creates are out_of_range naming the
// field, and store nothing.
func TestMixedValidation(t *testing.T) {
	m, _ := newManager(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, field string
		edit        func(p *session.CreateParams)
	}{
		{"unsorted", "integers[1][1]", func(p *session.CreateParams) { p.Integers[1] = []float64{0.1, 0.01} }},
		{"duplicate", "integers[0][2]", func(p *session.CreateParams) { p.Integers[0] = []float64{0, 1, 1} }},
		{"one value", "integers[0]", func(p *session.CreateParams) { p.Integers[0] = []float64{3} }},
		{"empty list", "integers[1]", func(p *session.CreateParams) { p.Integers[1] = nil }},
		{"not finite", "integers[0][1]", func(p *session.CreateParams) { p.Integers[0] = []float64{0, math.Inf(1)} }},
		{"one choice", "categories[1]", func(p *session.CreateParams) { p.Categories[1] = 1 }},
		{"too many", "categories", func(p *session.CreateParams) { p.Categories = make([]int, 3000) }},
		{"algorithm", "algorithm", func(p *session.CreateParams) { p.Algorithm = session.AlgorithmCMAES }},
		{"restarts", "restarts", func(p *session.CreateParams) { p.Restarts.Strategy = session.RestartsIPOP }},
		{"spared small run", "restarts", func(p *session.CreateParams) { p.Restarts.SpareBestSmall = new(false) }},
		{"tolerance", "termination", func(p *session.CreateParams) { v := 1e-9; p.Termination.TolFun = &v }},
		{"x0 outside", "x0[1]", func(p *session.CreateParams) { p.X0[1] = 9 }},
		{"lambda", "population_size", func(p *session.CreateParams) { p.PopulationSize = 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mixedParams(0)
			tc.edit(&p)
			_, err := m.Create(ctx, p)
			wantCode(t, err, session.CodeOutOfRange)
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q does not name %s", err, tc.field)
			}
		})
	}
	if l, err := m.List(ctx, "", 0); err != nil || len(l) != 0 {
		t.Fatalf("after refused creates: %d sessions, %v", len(l), err)
	}
	// Without continuous coordinates, and without x0 and sigma0.
	s, err := m.Create(ctx, session.CreateParams{Integers: [][]float64{{1, 2, 3}}, Categories: []int{2}})
	if err != nil || s.Dimension != 2 || s.Mixed.Continuous != 0 {
		t.Fatalf("integers and categories only: %+v, %v", s, err)
	}
	b, err := m.Ask(ctx, s.ID)
	if err != nil || len(b.Candidates[0]) != 0 || len(b.Z[0]) != 1 || len(b.C[0]) != 1 {
		t.Fatalf("ask: %+v, %v", b, err)
	}
	if _, err := m.Inject(ctx, s.ID, [][]float64{{1, 0}}, false); session.ErrorCode(err) != session.CodeOutOfRange {
		t.Errorf("inject into a mixed session: %v", err)
	}
}
