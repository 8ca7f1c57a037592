package session

import (
	"math"
	"strings"
	"testing"
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
		{ok(CreateParams{Name: strings.Repeat("n", 257)}), "name"},
		{ok(CreateParams{Metadata: []byte(`{"a":"` + strings.Repeat("m", 64<<10) + `"}`)}), "metadata"},
	}
	for _, tc := range tests {
		_, _, _, err := DefaultLimits.config(tc.p)
		e, isErr := err.(*Error)
		if !isErr || e.Code != CodeOutOfRange {
			t.Errorf("%s: got %v, want an out_of_range error", tc.path, err)
			continue
		}
		if !strings.HasPrefix(e.Message, tc.path+" ") && !strings.HasPrefix(e.Message, tc.path+":") {
			t.Errorf("got %q, want it to begin with %q", e.Message, tc.path)
		}
	}
	if _, _, _, err := DefaultLimits.config(ok(CreateParams{})); err != nil {
		t.Errorf("a valid request: %v", err)
	}
}
