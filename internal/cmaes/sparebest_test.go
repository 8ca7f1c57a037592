package cmaes

import "testing"

// Restarts.SpareBestSmall: the generation limit of a BIPOP run ends it at
// the first generation t ≥ GenLimit, unless the run is small, found the
// best point so far and t is below maxiter0 (the large runs' limit), and
// the flag is set. Without the flag no run outlives its limit; with it, on
// Rastrigin, a small run does and another one, which did not find the
// best point, ends at its limit (else the test could not fail).
func TestSpareBestSmall(t *testing.T) {
	const n = 4
	for _, spare := range []bool{false, true} {
		e := mustNew(t, Config{X0: constVec(n, 3), Sigma0: 2, Seed: 21,
			Restarts:    Restarts{BIPOP: true, Max: 6, SpareBestSmall: spare},
			Termination: Termination{MaxEvaluations: 200_000}})
		spared, cut := 0, 0 // small runs past their limit, ended at it
		for g := 0; e.Stopped() == nil; g++ {
			if g > 50_000 {
				t.Fatal("no end within 50,000 generations")
			}
			X := e.Ask() // a run that ended restarts here
			s := e.State()
			small, limit, tNext := s.Regime == RegimeSmall, s.GenLimit, s.T+1
			runStart := s.RunEnds[max(0, len(s.RunEnds)-1):] // the end of the run before this one, if any
			v := make([]float64, len(X))
			for k, x := range X {
				v[k] = rastrigin(x)
			}
			rec, err := e.Tell(v)
			if err != nil {
				t.Fatal(err)
			}
			holds := e.s.HasBest && (len(runStart) == 0 || e.s.Best.Generation > runStart[0].Generation)
			reached := limit > 0 && tNext >= limit
			want := reached && !(spare && small && holds && tNext < maxIter0(n, e.popsize0()))
			reasons := rec.Stop
			if rec.Restarted { // the run's reasons went into its end
				reasons = e.s.RunEnds[len(e.s.RunEnds)-1].Reasons
			}
			if _, fired := hasReason(reasons, StopMaxIter); fired != want {
				t.Fatalf("spare %t, generation %d of a %s run (limit %d, holds the best %t): max_iter fired %t, want %t",
					spare, tNext, s.Regime, limit, holds, fired, want)
			}
			switch {
			case reached && !want:
				spared++
			case reached && small:
				cut++
			}
		}
		if spare && (spared == 0 || cut == 0) {
			t.Fatalf("%d small runs outlived their generation limit, %d ended at it: the test needs both", spared, cut)
		}
	}
}

// SpareBestSmall needs BIPOP: New refuses it with IPOP or no restarts.
func TestSpareBestSmallNeedsBIPOP(t *testing.T) {
	for _, rs := range []Restarts{{SpareBestSmall: true}, {IPOP: true, SpareBestSmall: true}} {
		if _, err := New(Config{X0: constVec(3, 0), Sigma0: 1, Restarts: rs}); err == nil {
			t.Errorf("restarts %+v: New accepted SpareBestSmall without BIPOP", rs)
		}
	}
}
