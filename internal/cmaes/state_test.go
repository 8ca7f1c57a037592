package cmaes

import (
	"bytes"
	"errors"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// An ES restored from a copy of its State continues bit for bit beside the
// original: the same batches and the same encoded states, with bounds,
// injected points, restarts and the derived parts left out or kept.
func TestRestoreContinues(t *testing.T) {
	cfg := Config{X0: constVec(5, 1), Sigma0: 0.5, Seed: 7, Active: true,
		Bounds:   &Bounds{Lower: constVec(5, -4), Upper: constVec(5, 4)},
		Restarts: Restarts{BIPOP: true, Max: 3}, Termination: Termination{TolX: 1e-3}}
	for _, drop := range []string{"nothing", "derived"} {
		t.Run("drop "+drop, func(t *testing.T) {
			a := mustNew(t, cfg)
			droppedBD, droppedBatch := 0, 0
			for g := range 120 {
				if g == 30 {
					if err := a.Inject([][]float64{constVec(5, 0.5)}, true); err != nil {
						t.Fatal(err)
					}
				}
				if g%10 == 5 {
					st := a.State().Clone()
					if drop == "derived" {
						if st.DecomposedC {
							st.B, st.D = nil, nil
							droppedBD++
						}
						if st.BatchDrawn {
							st.Batch, st.Rand = nil, st.BatchRand
							droppedBatch++
						}
					}
					b, err := Restore(st)
					if err != nil {
						t.Fatalf("generation %d: %v", g, err)
					}
					ba, bb := stateBits(t, a), stateBits(t, b)
					if !bytes.Equal(ba, bb) || !samePoints(a.Ask(), b.Ask()) {
						t.Fatalf("generation %d: the restored ES differs", g)
					}
					a = b // continue from the restored one
				}
				if a.Status().Stop != nil {
					break
				}
				step(t, a, rastrigin)
			}
			if a.Run() == 0 {
				t.Error("no restart: the test should cross one")
			}
			if drop == "derived" && (droppedBD == 0 || droppedBatch == 0) {
				t.Errorf("B and D left out %d times, the batch %d: want both", droppedBD, droppedBatch)
			}
		})
	}
}

// Restore refuses a State no ES could have had.
func TestRestoreRefuses(t *testing.T) {
	e := mustNew(t, Config{X0: constVec(3, 1), Sigma0: 1, Seed: 1})
	for name, mutate := range map[string]func(*State){
		"no C":          func(s *State) { s.C = nil },
		"mean length":   func(s *State) { s.Mean = s.Mean[:2] },
		"σ":             func(s *State) { s.Sigma = -1 },
		"λ":             func(s *State) { s.Lambda = 1 },
		"regime":        func(s *State) { s.Regime = "" },
		"history":       func(s *State) { s.FunPos = len(s.FunHist) },
		"batch shape":   func(s *State) { s.Batch = mat.NewDense(2, 3, nil) },
		"rates":         func(s *State) { s.Hyper.C1 = 2 },
		"config":        func(s *State) { s.Config.Sigma0 = 0 },
		"injected lost": func(s *State) { s.BatchInjected = []Injection{{X: constVec(3, 9)}} },
	} {
		st := e.State().Clone()
		mutate(st)
		if _, err := Restore(st); !errors.Is(err, ErrInvalidState) {
			t.Errorf("%s: %v, want ErrInvalidState", name, err)
		}
	}
}
