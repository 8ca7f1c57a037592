package session

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/defaults"
)

// Every refusal of Limits.config names the path of the field it is about.
func TestConfigNamesTheField(t *testing.T) {
	one, neg, zero := 1, -1, 0
	box := func(lo, up float64) *Bounds { return &Bounds{Lower: []float64{lo}, Upper: []float64{up}} }
	nan, inf := math.NaN(), math.Inf(1)
	ok := func(p CreateParams) CreateParams {
		if p.X0 == nil {
			p.X0 = []float64{1}
		}
		if p.Sigma0 == 0 {
			p.Sigma0 = 1
		}
		return p
	}
	tests := []struct {
		p    CreateParams
		path string
	}{
		{CreateParams{X0: []float64{}, Sigma0: 1}, "x0"},
		{ok(CreateParams{X0: []float64{0, nan}}), "x0[1]"},
		{ok(CreateParams{Sigma0: -1}), "sigma0"},
		{ok(CreateParams{Sigma0: inf}), "sigma0"},
		{ok(CreateParams{Algorithm: "x"}), "algorithm"},
		{ok(CreateParams{Algorithm: AlgorithmCMAES, Init: "uniform"}), "hyperparameters.init"},
		{ok(CreateParams{Init: "x"}), "hyperparameters.init"},
		{ok(CreateParams{PopulationSize: 1}), "population_size"},
		{ok(CreateParams{PopulationSize: 1 << 30}), "population_size"},
		{ok(CreateParams{Bounds: &Bounds{Lower: []float64{0}}}), "bounds"},
		{ok(CreateParams{Bounds: &Bounds{Lower: []float64{nan}, Upper: []float64{2}}}), "bounds.lower[0]"},
		{ok(CreateParams{Bounds: &Bounds{Lower: []float64{0}, Upper: []float64{inf}}}), "bounds.upper[0]"},
		{ok(CreateParams{Bounds: &Bounds{Lower: []float64{2}, Upper: []float64{2}}}), "bounds.lower[0]"},
		{ok(CreateParams{Bounds: &Bounds{Lower: []float64{2}, Upper: []float64{3}}}), "x0[0]"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "none", Max: &one}}), "restarts.max"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "lpop"}}), "restarts.strategy"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "ipop", Max: &neg}}), "restarts.max"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "bipop", Max: &zero}}), "restarts.max"},
		{ok(CreateParams{PopulationSize: 100000, Restarts: Restarts{Strategy: "ipop"}}), "restarts"},
		{ok(CreateParams{PopulationSize: 100000, Restarts: Restarts{Strategy: "bipop"}}), "restarts"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "ipop", IncPopSize: new(1.0)}}), "restarts.incpopsize"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "ipop", IncPopSize: &nan}}), "restarts.incpopsize"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "ipop", IncPopSize: &inf}}), "restarts.incpopsize"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "none", IncPopSize: new(3.0)}}), "restarts.incpopsize"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "none", SpareBestSmall: new(true)}}), "restarts.spare_best_small"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "ipop", SpareBestSmall: new(true)}}), "restarts.spare_best_small"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "nipop", SpareBestSmall: new(true)}}), "restarts.spare_best_small"},
		{ok(CreateParams{Algorithm: AlgorithmSepCMAES, Restarts: Restarts{Strategy: "bipop", SpareBestSmall: new(true)}}), "restarts.spare_best_small"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "ipop", Max: new(4), IncPopSize: new(1e3)}}), "restarts.max"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "ipop", Point: "random"}}), "restarts.point"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "ipop", Point: "uniform"}}), "restarts.point"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "none", Point: "x0"}}), "restarts.point"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "none", Region: box(0, 2)}}), "restarts.region"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "ipop", Point: "x0", Region: box(0, 2)}}), "restarts.region"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "ipop", Point: "uniform", Region: &Bounds{Lower: []float64{0, 0}, Upper: []float64{1, 1}}}}), "restarts.region"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "ipop", Point: "uniform", Region: box(nan, 2)}}), "restarts.region.lower[0]"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "ipop", Point: "uniform", Region: box(0, inf)}}), "restarts.region.upper[0]"},
		{ok(CreateParams{Restarts: Restarts{Strategy: "ipop", Point: "uniform", Region: box(2, 2)}}), "restarts.region.lower[0]"},
		{ok(CreateParams{Bounds: box(0, 2), Restarts: Restarts{Strategy: "ipop", Point: "uniform", Region: box(-1, 1)}}), "restarts.region.lower[0]"},
		{ok(CreateParams{Bounds: box(0, 2), Restarts: Restarts{Strategy: "ipop", Point: "uniform", Region: box(1, 3)}}), "restarts.region.upper[0]"},
		{ok(CreateParams{Termination: Termination{MaxEvaluations: -1}}), "termination.max_evaluations"},
		{ok(CreateParams{Termination: Termination{TargetFitness: &nan}}), "termination.target_fitness"},
		{ok(CreateParams{Termination: Termination{TolFun: &inf}}), "termination.tol_fun"},
		{ok(CreateParams{Termination: Termination{TolX: &nan}}), "termination.tol_x"},
		{ok(CreateParams{Termination: Termination{ConditionCov: new(float64(-1))}}), "termination.condition_cov"},
		{ok(CreateParams{Termination: Termination{TolUpSigma: new(float64(-1))}}), "termination.tol_up_sigma"},
		{ok(CreateParams{Termination: Termination{TolWorse: new(float64(-1))}}), "termination.tol_worse"},
		{ok(CreateParams{Termination: Termination{TolWorse: &inf}}), "termination.tol_worse"},
		{ok(CreateParams{Algorithm: AlgorithmSepCMAES, Termination: Termination{TolWorse: new(0.3)}}), "termination.tol_worse"},
		{ok(CreateParams{Termination: Termination{TolWorseDelta: new(float64(-1))}}), "termination.tol_worse_delta"},
		{ok(CreateParams{Termination: Termination{TolWorseDelta: &inf}}), "termination.tol_worse_delta"},
		{ok(CreateParams{Algorithm: AlgorithmSepCMAES, Termination: Termination{TolWorseDelta: new(0.0)}}), "termination.tol_worse_delta"},
		{ok(CreateParams{Name: strings.Repeat("n", 257)}), "name"},
		{ok(CreateParams{Metadata: []byte(`{"a":"` + strings.Repeat("m", 64<<10) + `"}`)}), "metadata"},
	}
	for _, tc := range tests {
		_, _, _, err := DefaultLimits().config(tc.p)
		e, isErr := err.(*Error)
		if !isErr || e.Code != CodeOutOfRange {
			t.Errorf("%s: got %v, want an out_of_range error", tc.path, err)
			continue
		}
		if !strings.HasPrefix(e.Message, tc.path+" ") && !strings.HasPrefix(e.Message, tc.path+":") {
			t.Errorf("got %q, want it to begin with %q", e.Message, tc.path)
		}
	}
	if _, _, _, err := DefaultLimits().config(ok(CreateParams{})); err != nil {
		t.Errorf("a valid request: %v", err)
	}
}

// checkRestarts applies the defaults it is given field by field, and falls
// back where a default cannot apply: max lowered to the limits, a restarts
// left out that cannot restart once is none, a uniform point without a box
// is x0. (The defaults here are made up: the service's are defaults.For's.)
func TestCheckRestartsDefaults(t *testing.T) {
	l := Limits{MaxDimension: 10, MaxPopulation: 1000, MaxBatch: 2000, MaxNameBytes: 10, MaxMetadataLen: 10}
	bipop := defaults.Settings{Restarts: RestartsBIPOP, MaxRestarts: 9, IncPopSize: 2, RestartPoint: PointUniform}
	none := defaults.Settings{Restarts: RestartsNone, MaxRestarts: 9, IncPopSize: 2, RestartPoint: PointX0}
	spare := defaults.Settings{Restarts: RestartsNBIPOP, MaxRestarts: 9, IncPopSize: 2, RestartPoint: PointX0, SpareBestSmall: true}
	bounds := &cmaes.Bounds{Lower: []float64{0, 0}, Upper: []float64{1, 1}}
	two, three := 2, 3
	tests := []struct {
		name     string
		r        Restarts
		def      defaults.Settings
		lambda   int
		bounds   *cmaes.Bounds
		want     cmaes.Restarts
		wantPath string // of the error; "" = none
	}{
		// n = 2: λ·2^k ≤ 1000 (MaxBatch/n) allows k = 6 for λ = 10.
		{"max lowered", Restarts{}, bipop, 10, nil, cmaes.Restarts{BIPOP: true, Max: 6, IncPopSize: 2}, ""},
		{"uniform in the bounds", Restarts{}, bipop, 10, bounds, cmaes.Restarts{BIPOP: true, Max: 6, IncPopSize: 2, Point: cmaes.RestartPoint{Uniform: true}}, ""},
		{"no restart fits: none", Restarts{}, bipop, 600, nil, cmaes.Restarts{}, ""},
		{"no restart fits a given field", Restarts{IncPopSize: new(3.0)}, bipop, 600, nil, cmaes.Restarts{}, "restarts"},
		{"a given max is not lowered", Restarts{Max: &three}, bipop, 200, nil, cmaes.Restarts{}, "restarts.max"},
		{"strategy given, the rest default", Restarts{Strategy: RestartsIPOP, Max: &two}, bipop, 10, nil, cmaes.Restarts{IPOP: true, Max: 2, IncPopSize: 2}, ""},
		{"uniform given without a box", Restarts{Point: PointUniform}, bipop, 10, nil, cmaes.Restarts{}, "restarts.point"},
		{"default none", Restarts{}, none, 10, nil, cmaes.Restarts{}, ""},
		{"default none with a max", Restarts{Max: &two}, none, 10, nil, cmaes.Restarts{}, "restarts.max"},
		{"default none with incpopsize", Restarts{IncPopSize: new(3.0)}, none, 10, nil, cmaes.Restarts{}, "restarts.incpopsize"},
		{"default none, strategy given", Restarts{Strategy: RestartsBIPOP, Max: &two, Point: PointUniform}, none, 10, bounds,
			cmaes.Restarts{BIPOP: true, Max: 2, IncPopSize: 2, Point: cmaes.RestartPoint{Uniform: true}}, ""},
		{"nbipop: Loshchilov's ρ_σdec and ρ_budget", Restarts{Strategy: RestartsNBIPOP, Max: &two}, bipop, 10, nil,
			cmaes.Restarts{BIPOP: true, Max: 2, IncPopSize: 2, SigmaDec: defaults.SigmaDec, Budget: defaults.BudgetRatio}, ""},
		{"nipop: ρ_σdec", Restarts{Strategy: RestartsNIPOP, Max: &two}, none, 10, nil,
			cmaes.Restarts{IPOP: true, Max: 2, IncPopSize: 2, SigmaDec: defaults.SigmaDec}, ""},
		{"sparing the best small run by default", Restarts{Strategy: RestartsNBIPOP, Max: &two}, spare, 10, nil,
			cmaes.Restarts{BIPOP: true, Max: 2, IncPopSize: 2, SigmaDec: defaults.SigmaDec, Budget: defaults.BudgetRatio, SpareBestSmall: true}, ""},
		{"the default sparing needs small runs", Restarts{Strategy: RestartsIPOP, Max: &two}, spare, 10, nil,
			cmaes.Restarts{IPOP: true, Max: 2, IncPopSize: 2}, ""},
		{"sparing turned off", Restarts{Strategy: RestartsBIPOP, Max: &two, SpareBestSmall: new(false)}, spare, 10, nil,
			cmaes.Restarts{BIPOP: true, Max: 2, IncPopSize: 2}, ""},
		{"no sparing, turned off without small runs", Restarts{Strategy: RestartsIPOP, Max: &two, SpareBestSmall: new(false)}, spare, 10, nil,
			cmaes.Restarts{IPOP: true, Max: 2, IncPopSize: 2}, ""},
		{"region with the default x0", Restarts{Strategy: RestartsIPOP, Region: &Bounds{Lower: []float64{0, 0}, Upper: []float64{1, 1}}}, none, 10, nil, cmaes.Restarts{}, "restarts.region"},
		{"region with the default uniform", Restarts{Region: &Bounds{Lower: []float64{0, 0}, Upper: []float64{1, 1}}}, bipop, 10, nil,
			cmaes.Restarts{BIPOP: true, Max: 6, IncPopSize: 2, Point: cmaes.RestartPoint{Uniform: true, Region: &cmaes.Bounds{Lower: []float64{0, 0}, Upper: []float64{1, 1}}}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := cmaes.Config{X0: []float64{0.5, 0.5}, Lambda: tc.lambda, Bounds: tc.bounds}
			got, err := l.checkRestarts(tc.r, tc.def, cfg, tc.lambda)
			if tc.wantPath != "" {
				e, ok := err.(*Error)
				if !ok || e.Code != CodeOutOfRange || !strings.HasPrefix(e.Message, tc.wantPath+" ") && !strings.HasPrefix(e.Message, tc.wantPath+":") {
					t.Fatalf("got %v, want an out_of_range error about %s", err, tc.wantPath)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// The defaults in internal/defaults are ones the service accepts.
func TestDefaultsValid(t *testing.T) {
	for _, alg := range []string{AlgorithmCMAES, AlgorithmSelfCMAES} {
		def := defaults.For(alg)
		if _, err := DefaultLimits().checkRestarts(Restarts{Strategy: def.Restarts}, def, cmaes.Config{X0: []float64{1, 2}}, cmaes.DefaultLambda(2)); err != nil {
			t.Errorf("%s: %+v: %v", alg, def, err)
		}
		if def.Restarts != RestartsNone && (!(def.IncPopSize > 1) || def.MaxRestarts < 1) {
			t.Errorf("%s: %+v: want incpopsize > 1 and max ≥ 1", alg, def)
		}
	}
	if _, err := checkAlgorithm(defaults.Algorithm); err != nil {
		t.Errorf("defaults.Algorithm: %v", err)
	}
}

// A population_size left out is left to the engine (Lambda 0), so that a
// BIPOP session bases its populations on pycma's unrounded popsize0 as
// cmd/bench's runs do; a given one is passed on.
func TestConfigLeavesDefaultLambdaToEngine(t *testing.T) {
	for _, size := range []int{0, 12} {
		_, _, cfg, err := DefaultLimits().config(CreateParams{X0: make([]float64, 10), Sigma0: 1, Algorithm: AlgorithmCMAES, PopulationSize: size,
			Restarts: Restarts{Strategy: RestartsBIPOP}})
		if err != nil || cfg.Lambda != size {
			t.Errorf("population_size %d: engine λ %d, %v", size, cfg.Lambda, err)
		}
	}
}

// NIPOP and NBIPOP are CMA-ES's and self-CMA-ES's: sep-CMA-ES's restarts
// (internal/sepcma) know neither rule, so a create asking for them is
// refused there; the view names each strategy back.
func TestLoshchilovRestarts(t *testing.T) {
	for _, alg := range []string{AlgorithmCMAES, AlgorithmSelfCMAES, AlgorithmSepCMAES} {
		for _, strategy := range []string{RestartsNIPOP, RestartsNBIPOP} {
			p := CreateParams{Algorithm: alg, X0: []float64{1, 2}, Sigma0: 1, Restarts: Restarts{Strategy: strategy}}
			_, _, cfg, err := DefaultLimits().config(p)
			if alg == AlgorithmSepCMAES {
				if e, ok := err.(*Error); !ok || e.Code != CodeOutOfRange || !strings.HasPrefix(e.Message, "restarts.strategy ") {
					t.Errorf("%s %s: got %v, want an out_of_range error about restarts.strategy", alg, strategy, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s %s: %v", alg, strategy, err)
			}
			if got := restartsView(cfg).Strategy; got != strategy || cfg.Restarts.SigmaDec != defaults.SigmaDec {
				t.Errorf("%s %s: view %q, restarts %+v", alg, strategy, got, cfg.Restarts)
			}
		}
	}
}

// termination.tol_worse: left out, a session gets its algorithm's default
// (off for sep-CMA-ES and with constraints, whose augmented Lagrangian
// moves the values); 0 turns it off, a positive ε is taken as given.
func TestTolWorseDefaults(t *testing.T) {
	con := &Constraints{Count: 1}
	for _, c := range []struct {
		alg  string
		v    *float64
		con  *Constraints
		want float64
	}{
		{AlgorithmCMAES, nil, nil, defaults.For(AlgorithmCMAES).TolWorse},
		{AlgorithmSelfCMAES, nil, nil, defaults.For(AlgorithmSelfCMAES).TolWorse},
		{AlgorithmCMAES, new(0.0), nil, 0},
		{AlgorithmSelfCMAES, new(0.5), nil, 0.5},
		{AlgorithmSepCMAES, nil, nil, 0},
		{AlgorithmSepCMAES, new(0.0), nil, 0},
		{AlgorithmCMAES, nil, con, 0},
		{AlgorithmCMAES, new(0.2), con, 0.2},
	} {
		p := CreateParams{Algorithm: c.alg, X0: []float64{1, 2}, Sigma0: 1, Constraints: c.con, Termination: Termination{TolWorse: c.v}}
		_, _, cfg, err := DefaultLimits().config(p)
		if err != nil {
			t.Fatalf("%s, tol_worse %v, constraints %v: %v", c.alg, c.v, c.con != nil, err)
		}
		if got := cfg.Termination.TolWorse; got != c.want {
			t.Errorf("%s, tol_worse %v, constraints %v: ε %v, want %v", c.alg, c.v, c.con != nil, got, c.want)
		}
	}
	if d := defaults.For(AlgorithmCMAES).TolWorse; !(d > 0) {
		t.Errorf("cma-es's default ε %v, want > 0", d)
	}
}

// termination.tol_worse_delta: left out, a session gets its algorithm's
// δ; 0 spares no restart (cmaes's negative δ), a positive δ is taken as
// given.
func TestTolWorseDeltaDefaults(t *testing.T) {
	for _, c := range []struct {
		alg  string
		v    *float64
		want float64
	}{
		{AlgorithmCMAES, nil, defaults.For(AlgorithmCMAES).TolWorseDelta},
		{AlgorithmSelfCMAES, nil, defaults.For(AlgorithmSelfCMAES).TolWorseDelta},
		{AlgorithmCMAES, new(0.0), -1},
		{AlgorithmSelfCMAES, new(0.01), 0.01},
	} {
		p := CreateParams{Algorithm: c.alg, X0: []float64{1, 2}, Sigma0: 1, Termination: Termination{TolWorseDelta: c.v}}
		_, _, cfg, err := DefaultLimits().config(p)
		if err != nil {
			t.Fatalf("%s, tol_worse_delta %v: %v", c.alg, c.v, err)
		}
		if got := cfg.Termination.TolWorseDelta; got != c.want {
			t.Errorf("%s, tol_worse_delta %v: δ %v, want %v", c.alg, c.v, got, c.want)
		}
	}
}
