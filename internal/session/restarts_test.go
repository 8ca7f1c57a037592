package session_test

import (
	"context"
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/defaults"
	"github.com/selfcma/selfcma/internal/selfcma"
	"github.com/selfcma/selfcma/internal/session"
)

// defaultMax is the max restarts a create that leaves it out gets: the
// default, lowered until λ·incpopsize^max is within the limits.
func defaultMax(def defaults.Settings, lambda, n int, l session.Limits) int {
	k := def.MaxRestarts
	for k > 0 {
		lam := float64(lambda) * math.Pow(def.IncPopSize, float64(k))
		if lam <= float64(l.MaxPopulation) && lam <= float64(l.MaxBatch/n) {
			break
		}
		k--
	}
	return k
}

// A create that names nothing new gets internal/defaults': the algorithm,
// active CMA-ES and the restarts (a point uniform only where there is a
// box to draw in).
func TestCreateDefaults(t *testing.T) {
	ctx := context.Background()
	m, _ := newManager(t)
	bounds := &session.Bounds{Lower: []float64{-3, -3}, Upper: []float64{3, 3}}
	for _, alg := range []string{"", session.AlgorithmCMAES, session.AlgorithmSelfCMAES, session.AlgorithmSepCMAES} {
		for _, b := range []*session.Bounds{nil, bounds} {
			name := alg
			if b != nil {
				name += " bounds"
			}
			t.Run(name, func(t *testing.T) {
				s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 2}, Sigma0: 1, Algorithm: alg, Bounds: b})
				if err != nil {
					t.Fatal(err)
				}
				wantAlg := alg
				if alg == "" {
					wantAlg = defaults.Algorithm
				}
				if s.Algorithm != wantAlg {
					t.Fatalf("algorithm %q, want %q", s.Algorithm, wantAlg)
				}
				def := defaults.For(wantAlg)
				if s.Active != def.Active {
					t.Errorf("active %v, want %v", s.Active, def.Active)
				}
				lambda := cmaes.DefaultLambda(2)
				if wantAlg == session.AlgorithmSelfCMAES {
					lambda = selfcma.DefaultLambda(2)
				}
				want := session.RestartsView{Strategy: session.RestartsNone, Point: session.PointX0}
				if k := defaultMax(def, lambda, 2, session.DefaultLimits()); def.Restarts != session.RestartsNone && k > 0 {
					want = session.RestartsView{Strategy: def.Restarts, Max: k, IncPopSize: def.IncPopSize, Point: def.RestartPoint}
					bipop := def.Restarts == session.RestartsBIPOP || def.Restarts == session.RestartsNBIPOP
					want.SpareBestSmall = def.SpareBestSmall && bipop
					if def.RestartPoint == session.PointUniform {
						if b == nil {
							want.Point = session.PointX0
						} else {
							want.Region = b
						}
					}
				}
				want.Regime = session.RegimeDefault // the first run
				if !reflect.DeepEqual(s.Restarts, want) {
					t.Errorf("restarts %+v, want %+v", s.Restarts, want)
				}
			})
		}
	}
}

// Each restarts field and active is taken and reported as given, the same
// after the session is read back from the store; what is left out is the
// default.
func TestCreateRestartsEchoed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	st := openStore(t, path)
	m := session.NewManager(st, session.Options{})
	alg := session.AlgorithmCMAES
	def := defaults.For(alg)
	yes, no := true, false
	zero, two, three := 0, 2, 3
	inc := 1.5
	box := func(lo, up float64) *session.Bounds {
		return &session.Bounds{Lower: []float64{lo, lo}, Upper: []float64{up, up}}
	}
	tests := []struct {
		name   string
		active *bool
		bounds *session.Bounds
		r      session.Restarts
		want   session.RestartsView
	}{
		{"active", &yes, nil, session.Restarts{Strategy: "none"}, session.RestartsView{Strategy: "none", Point: "x0"}},
		{"not active", &no, nil, session.Restarts{Strategy: "none"}, session.RestartsView{Strategy: "none", Point: "x0"}},
		{"max 0 is none", nil, nil, session.Restarts{Max: &zero}, session.RestartsView{Strategy: "none", Point: "x0"}},
		{"ipop", nil, nil, session.Restarts{Strategy: "ipop", Max: &three, IncPopSize: &inc, Point: "x0"},
			session.RestartsView{Strategy: "ipop", Max: 3, IncPopSize: 1.5, Point: "x0"}},
		{"bipop in a region", nil, nil, session.Restarts{Strategy: "bipop", Max: &two, IncPopSize: new(3.0), Point: "uniform", Region: box(-1, 4)},
			session.RestartsView{Strategy: "bipop", Max: 2, IncPopSize: 3, Point: "uniform", Region: box(-1, 4), SpareBestSmall: def.SpareBestSmall}},
		{"uniform in the bounds", nil, box(-2, 3), session.Restarts{Strategy: "bipop", Max: &two, Point: "uniform"},
			session.RestartsView{Strategy: "bipop", Max: 2, IncPopSize: def.IncPopSize, Point: "uniform", Region: box(-2, 3), SpareBestSmall: def.SpareBestSmall}},
		{"bipop sparing no small run", nil, nil, session.Restarts{Strategy: "bipop", Max: &two, SpareBestSmall: &no},
			session.RestartsView{Strategy: "bipop", Max: 2, IncPopSize: def.IncPopSize, Point: "x0"}},
		{"nbipop sparing the best small run", nil, nil, session.Restarts{Strategy: "nbipop", Max: &two, SpareBestSmall: &yes},
			session.RestartsView{Strategy: "nbipop", Max: 2, IncPopSize: def.IncPopSize, Point: "x0", SpareBestSmall: true}},
		{"region inside the bounds", nil, box(-2, 3), session.Restarts{Strategy: "ipop", Max: &two, Point: "uniform", Region: box(0, 3)},
			session.RestartsView{Strategy: "ipop", Max: 2, IncPopSize: def.IncPopSize, Point: "uniform", Region: box(0, 3)}},
		{"ipop with defaults", nil, nil, session.Restarts{Strategy: "ipop"},
			session.RestartsView{Strategy: "ipop", Max: defaultMax(def, 6, 2, session.DefaultLimits()), IncPopSize: def.IncPopSize, Point: "x0"}},
	}
	if def.RestartPoint == session.PointUniform {
		// Without a region or bounds, a default uniform point is x0.
		tests[len(tests)-1].want.Point = session.PointX0
	}
	var created []session.Session
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 2}, Sigma0: 1, Algorithm: alg, PopulationSize: 6,
				Active: tc.active, Bounds: tc.bounds, Restarts: tc.r})
			if err != nil {
				t.Fatal(err)
			}
			wantActive := def.Active
			if tc.active != nil {
				wantActive = *tc.active
			}
			if s.Active != wantActive {
				t.Errorf("active %v, want %v", s.Active, wantActive)
			}
			tc.want.Regime = session.RegimeDefault // the first run
			if !reflect.DeepEqual(s.Restarts, tc.want) {
				t.Errorf("restarts %+v, want %+v", s.Restarts, tc.want)
			}
			if got, err := m.Get(ctx, s.ID); err != nil || !reflect.DeepEqual(got, s) {
				t.Errorf("get: %+v, %v", got, err)
			}
			created = append(created, s)
		})
	}

	// Read back from the store: the engine's state carries the config.
	st.Close()
	st = openStore(t, path)
	defer st.Close()
	m = session.NewManager(st, session.Options{})
	for _, s := range created {
		got, err := m.Get(ctx, s.ID)
		if err != nil || got.Active != s.Active || !reflect.DeepEqual(got.Restarts, s.Restarts) {
			t.Errorf("reopened: active %v restarts %+v, want %v %+v (%v)", got.Active, got.Restarts, s.Active, s.Restarts, err)
		}
	}
}

// A BIPOP session reports the regime of each run and of the current one,
// the same after the session is read back from the store.
func TestBIPOPRegimes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	st := openStore(t, path)
	m := session.NewManager(st, session.Options{})
	max, tolFun := 4, 1e-2
	s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 2}, Sigma0: 1, Algorithm: session.AlgorithmCMAES, PopulationSize: 6, Seed: seed(2),
		Restarts: session.Restarts{Strategy: session.RestartsBIPOP, Max: &max}, Termination: session.Termination{TolFun: &tolFun}})
	if err != nil {
		t.Fatal(err)
	}
	for g := 0; s.Restarts.Count < 3 && s.Status == session.StatusRunning; g++ {
		if g > 2000 {
			t.Fatalf("no 3 restarts in %d generations: %+v", g, s.Restarts)
		}
		b, err := m.Ask(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if s, err = m.Tell(ctx, s.ID, session.TellParams{Generation: b.Generation, Fitness: fitness(b)}); err != nil {
			t.Fatal(err)
		}
	}
	rs := s.Restarts
	if len(rs.Runs) != rs.Count || rs.Runs[0].Regime != session.RegimeDefault {
		t.Fatalf("runs %+v", rs.Runs)
	}
	large := 0
	for _, r := range append(rs.Runs[1:], session.RunEnd{Regime: rs.Regime}) {
		switch r.Regime {
		case session.RegimeLarge:
			large++
		case session.RegimeSmall:
		default:
			t.Fatalf("regime %q after the first run: %+v", r.Regime, rs)
		}
	}
	if large == 0 || large == rs.Count {
		t.Errorf("not both regimes after the first run: %+v", rs)
	}
	st.Close()
	st = openStore(t, path)
	defer st.Close()
	if got, err := session.NewManager(st, session.Options{}).Get(ctx, s.ID); err != nil || !reflect.DeepEqual(got.Restarts, s.Restarts) {
		t.Errorf("reopened: %+v, want %+v (%v)", got.Restarts, s.Restarts, err)
	}
}
