package sepcma

import (
	"bytes"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/cmaes"
)

// roundTrip encodes e's state, decodes it and restores an ES from it.
func roundTrip(t testing.TB, e *ES) *ES {
	t.Helper()
	blob, err := e.State().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var s State
	if err := s.UnmarshalBinary(blob); err != nil {
		t.Fatal(err)
	}
	r, err := Restore(s)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := r.State().MarshalBinary()
	if !bytes.Equal(blob, again) {
		t.Fatal("the restored state encodes differently")
	}
	return r
}

// TestRoundTripEveryGeneration: a run encoded, decoded and restored at
// every generation continues bit for bit as one that never was, through
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

func TestUnmarshalRefuses(t *testing.T) {
	e, _ := New(Config{X0: fill(4, 1), Sigma0: 1})
	blob, _ := e.State().MarshalBinary()
	var s State
	for i := range blob {
		bad := slices.Clone(blob)
		bad[i] ^= 0x40
		if s.UnmarshalBinary(bad) == nil {
			t.Fatalf("a flipped byte %d decoded", i)
		}
	}
	if s.UnmarshalBinary(blob[:len(blob)-5]) == nil {
		t.Error("a truncated blob decoded")
	}
}

// FuzzUnmarshal: no blob panics the decoder or Restore.
func FuzzUnmarshal(f *testing.F) {
	e, _ := New(Config{X0: fill(3, 1), Sigma0: 1, Restarts: cmaes.Restarts{BIPOP: true}})
	blob, _ := e.State().MarshalBinary()
	f.Add(blob)
	e.Tell(evalAll(sphere, e.Ask()))
	blob, _ = e.State().MarshalBinary()
	f.Add(blob)
	f.Fuzz(func(t *testing.T, b []byte) {
		var s State
		if s.UnmarshalBinary(binenc.Reseal(b)) == nil {
			if r, err := Restore(s); err == nil && len(r.Stopped()) == 0 {
				r.Tell(evalAll(sphere, r.Ask()))
			}
		}
	})
}
