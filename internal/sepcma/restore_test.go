package sepcma

import (
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// roundTrip restores an ES from e's state, as plain data: the state is
// what internal/enginecodec encodes (its tests check that the encoding
// decodes to the same state); here, that an ES restored from it continues
// as e.
func roundTrip(t testing.TB, e *ES) *ES {
	t.Helper()
	s := e.State()
	r, err := Restore(s)
	if err != nil {
		t.Fatal(err)
	}
	if again := r.State(); !statesEqual(s, again) {
		t.Fatal("the restored ES has another state")
	}
	return r
}

// statesEqual compares two states, NaN equal to NaN (a failed generation's
// value stays in the histories).
func statesEqual(a, b State) bool {
	return reflect.DeepEqual(nanFree(a), nanFree(b))
}

func nanFree(s State) State {
	s.FunHist, s.StagBest, s.StagMed = nanTo(s.FunHist), nanTo(s.StagBest), nanTo(s.StagMed)
	return s
}

func nanTo(v []float64) []float64 {
	out := slices.Clone(v)
	for i, x := range out {
		if math.IsNaN(x) {
			out[i] = math.Inf(-1)
		}
	}
	return out
}

// TestRoundTripEveryGeneration: a run restored from its state at every
// generation continues bit for bit as one that never was, through
// IPOP and BIPOP restarts (Rastrigin makes them) and uniform restart
// points.
func TestRoundTripEveryGeneration(t *testing.T) {
	region := &cmaes.Bounds{Lower: fill(6, -5), Upper: fill(6, 5)}
	for name, rs := range map[string]cmaes.Restarts{
		"ipop":  {IPOP: true, Max: 3},
		"bipop": {BIPOP: true, Max: 2, Point: cmaes.RestartPoint{Uniform: true, Region: region}},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := Config{X0: fill(6, 3), Sigma0: 2, Seed: 9, Restarts: rs, Rates: RatesPaper,
				Termination: cmaes.Termination{MaxEvaluations: 20000}}
			a, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			b := roundTrip(t, a)
			restarts := 0
			for g := 0; ; g++ {
				xa, xb := a.Ask(), b.Ask()
				if !slices.EqualFunc(xa, xb, func(u, v []float64) bool { return bitsEqual(u, v) }) {
					t.Fatalf("generation %d: the restored ES asks other points", g)
				}
				f := evalAll(rastrigin, xa)
				ra, errA := a.Tell(f)
				rb, errB := b.Tell(f)
				if errA != nil || errB != nil {
					t.Fatalf("generation %d: %v, %v", g, errA, errB)
				}
				if !recordsEqual(ra, rb) {
					t.Fatalf("generation %d: records differ:\n%+v\n%+v", g, ra, rb)
				}
				if ra.Restarted {
					restarts++
				}
				if len(ra.Stop) > 0 && !ra.Restarted {
					break
				}
				b = roundTrip(t, b)
			}
			if restarts < 2 {
				t.Errorf("%d restarts: the test does not cover them", restarts)
			}
			if !reflect.DeepEqual(a.RunEnds(), b.RunEnds()) {
				t.Error("run ends differ")
			}
			// A stopped ES round-trips too, and stays stopped.
			if c := roundTrip(t, b); len(c.Stopped()) == 0 || c.Ask() != nil {
				t.Error("the restored stopped ES runs")
			}
		})
	}
}

func bitsEqual(u, v []float64) bool {
	return slices.EqualFunc(u, v, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })
}

func recordsEqual(a, b Record) bool {
	// NaN ≠ NaN: compare the records' bits through their encodings.
	fa, fb := []float64{a.Best, a.Median, a.BestSoFar, a.Sigma, a.AxisRatio, a.OverallStep},
		[]float64{b.Best, b.Median, b.BestSoFar, b.Sigma, b.AxisRatio, b.OverallStep}
	a.Best, a.Median, a.BestSoFar, a.Sigma, a.AxisRatio, a.OverallStep = 0, 0, 0, 0, 0, 0
	b.Best, b.Median, b.BestSoFar, b.Sigma, b.AxisRatio, b.OverallStep = 0, 0, 0, 0, 0, 0
	return bitsEqual(fa, fb) && reflect.DeepEqual(a, b)
}

func TestRestoreRefuses(t *testing.T) {
	e, _ := New(Config{X0: fill(4, 1), Sigma0: 1, Seed: 5})
	e.Tell(evalAll(sphere, e.Ask()))
	for name, spoil := range map[string]func(*State){
		"batch hash": func(s *State) { s.BatchSum++ },
		"mean":       func(s *State) { s.Mean = s.Mean[:3] },
		"C negative": func(s *State) { s.C[0] = -1 },
		"C NaN":      func(s *State) { s.C[1] = math.NaN() },
		"sigma":      func(s *State) { s.Sigma = 0 },
		"regime":     func(s *State) { s.Regime = "huge" },
		"funhist":    func(s *State) { s.FunPos = len(s.FunHist) },
		"lambda":     func(s *State) { s.Lambda = 1 },
		"run":        func(s *State) { s.Run = 1 },
	} {
		s := e.State()
		spoil(&s)
		if _, err := Restore(s); err == nil {
			t.Errorf("%s: restored", name)
		}
	}
}
