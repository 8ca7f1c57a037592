package cmaes

import (
	"math"
	"testing"
)

// tellFailed tells a generation whose every evaluation failed.
func tellFailed(tb testing.TB, e *ES) Record {
	tb.Helper()
	v := make([]float64, e.Params().Lambda)
	for k := range v {
		v[k] = math.NaN()
	}
	rec, err := e.Tell(v)
	if err != nil {
		tb.Fatalf("generation %d: %v", e.Generation(), err)
	}
	return rec
}

// tellPartlyFailed tells a generation with one finite value.
func tellPartlyFailed(tb testing.TB, e *ES) {
	tb.Helper()
	v := make([]float64, e.Params().Lambda)
	for k := range v {
		v[k] = math.NaN()
	}
	v[1] = sphere(e.Ask()[1])
	if _, err := e.Tell(v); err != nil {
		tb.Fatal(err)
	}
}

func TestFailedEvaluationsStopTheRun(t *testing.T) {
	tests := []struct {
		name string
		term Termination
		ipop bool
		want int // generations all failed until the stop; 0 = never
	}{
		{"default", Termination{}, false, DefaultMaxFailedGenerations},
		{"three", Termination{MaxFailedGenerations: 3}, false, 3},
		{"one", Termination{MaxFailedGenerations: 1}, false, 1},
		{"ipop stops, no restart", Termination{}, true, DefaultMaxFailedGenerations},
		{"disabled", Termination{MaxFailedGenerations: -1}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustNew(t, Config{X0: constVec(4, 1), Sigma0: 0.5, Seed: 2, Termination: tt.term, Restarts: Restarts{IPOP: tt.ipop}})
			step(t, e, sphere)
			// Failures broken by a generation with one value do not add up.
			pre := tt.want - 1
			if tt.want == 0 {
				pre = 30
			}
			for range pre {
				tellFailed(t, e)
			}
			tellPartlyFailed(t, e)
			if why := e.Stopped(); why != nil {
				t.Fatalf("stopped by %v after failures broken by a partial generation", reasonNames(why))
			}
			for g := 1; g <= 200; g++ {
				rec := tellFailed(t, e)
				if e.Stopped() == nil {
					continue
				}
				if g != tt.want {
					t.Fatalf("stopped by %v after %d failed generations, want %d", reasonNames(e.Stopped()), g, tt.want)
				}
				r, ok := hasReason(rec.Stop, StopFailedEvaluations)
				if !ok || r.Value != float64(tt.want) || len(rec.Stop) != 1 {
					t.Fatalf("stop reasons %v, want %s with value %d", rec.Stop, StopFailedEvaluations, tt.want)
				}
				if rec.Restarted || e.Run() != 0 {
					t.Fatal("failed evaluations restarted the run")
				}
				if _, err := e.Tell(make([]float64, e.Params().Lambda)); err != ErrStopped {
					t.Fatalf("tell after the stop: %v, want ErrStopped", err)
				}
				return
			}
			if tt.want != 0 {
				t.Fatal("200 failed generations did not stop the run")
			}
		})
	}
}
