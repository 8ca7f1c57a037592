package cmaes

import (
	"math"
	"testing"
)

// flatGen is a generation of 8 values whose best equals the value of rank
// 6 = ⌊0.75·8⌋ (pycma's tolflatfitness calls it flat); steepGen's best
// equals ranks 0–5 only, flat for EqualFunValues (rank 2) but not for
// tolflatfitness; nanGen has NaN at ranks 6 and 7.
var (
	flatGen  = []float64{3, 3, 3, 3, 3, 3, 3, 4}
	steepGen = []float64{3, 3, 3, 3, 3, 3, 4, 5}
	nanGen   = []float64{3, 3, 3, 3, 3, 3, math.NaN(), math.NaN()}
	slopeGen = []float64{1, 2, 3, 4, 5, 6, 7, 8}
)

// TestTolFlatFitness tells constructed generations to an ES with
// Termination.FlatFitness and checks after which one StopTolFlatFitness
// fires (0: none of them stops the ES).
func TestTolFlatFitness(t *testing.T) {
	for _, c := range []struct {
		name   string
		gens   [][]float64
		stopAt int // 1-based generation that stops; 0 = none
	}{
		{"two flat generations in a row", [][]float64{slopeGen, flatGen, flatGen, slopeGen}, 3},
		{"flat generations apart", [][]float64{flatGen, slopeGen, flatGen, slopeGen, flatGen}, 0},
		{"best equal to rank 2 but not rank 6", [][]float64{steepGen, steepGen, steepGen, steepGen}, 0},
		{"NaN at rank 6 is not flat", [][]float64{nanGen, nanGen, nanGen}, 0},
		{"one flat generation", [][]float64{slopeGen, slopeGen, flatGen}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := mustNew(t, Config{X0: constVec(3, 1), Sigma0: 1, Lambda: 8, Seed: 3,
				Termination: Termination{FlatFitness: true, NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true}})
			stopped := 0
			for g, f := range c.gens {
				e.Ask()
				if _, err := e.Tell(f); err != nil {
					t.Fatal(err)
				}
				if e.Stopped() != nil {
					stopped = g + 1
					break
				}
			}
			if stopped != c.stopAt {
				t.Fatalf("stopped after generation %d by %v, want %d", stopped, reasonNames(e.Stopped()), c.stopAt)
			}
			if stopped > 0 {
				if r, ok := hasReason(e.Stopped(), StopTolFlatFitness); !ok || r.Value != 2 || len(e.Stopped()) != 1 {
					t.Fatalf("stop reasons %v, want %s alone with value 2", e.Stopped(), StopTolFlatFitness)
				}
			}
		})
	}
}

// Without FlatFitness the same generations run into cmaes.m's
// EqualFunValues: steepGen counts as flat (rank 2), and two flat
// generations do not stop the ES.
func TestEqualFunValuesUnchanged(t *testing.T) {
	e := mustNew(t, Config{X0: constVec(3, 1), Sigma0: 1, Lambda: 8, Seed: 3,
		Termination: Termination{NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true}})
	for g := 1; g <= 13; g++ {
		e.Ask()
		if _, err := e.Tell(steepGen); err != nil {
			t.Fatal(err)
		}
		if s := e.Stopped(); s != nil {
			if r, ok := hasReason(s, StopEqualFunValues); !ok || g != 13 {
				t.Fatalf("stopped by %v after generation %d, want %s after 13 (10 + n)", r, g, StopEqualFunValues)
			}
			return
		}
	}
	t.Fatal("EqualFunValues did not fire after 13 flat generations")
}

// A restart clears the flat generations: the new run's first flat
// generation does not stop it, its second does.
func TestTolFlatFitnessRestart(t *testing.T) {
	e := mustNew(t, Config{X0: constVec(3, 1), Sigma0: 1, Lambda: 8, Seed: 3, Restarts: Restarts{IPOP: true, Max: 2},
		Termination: Termination{FlatFitness: true, NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true}})
	for g := 1; g <= 2; g++ {
		X := e.Ask()
		f := make([]float64, len(X))
		for k := range f {
			f[k] = 7
		}
		rec, err := e.Tell(f)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Restarted != (g == 2) {
			t.Fatalf("generation %d: restarted %v", g, rec.Restarted)
		}
	}
	if ends := e.RunEnds(); len(ends) != 1 || ends[0].Reasons[0].Name != StopTolFlatFitness {
		t.Fatalf("run ends %+v, want one by %s", ends, StopTolFlatFitness)
	}
	for g := 1; g <= 2; g++ {
		X := e.Ask()
		f := make([]float64, len(X))
		for k := range f {
			f[k] = 7
		}
		rec, err := e.Tell(f)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Restarted != (g == 2) {
			t.Fatalf("second run, generation %d: restarted %v", g, rec.Restarted)
		}
	}
}
