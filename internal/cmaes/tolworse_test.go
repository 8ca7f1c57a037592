package cmaes

import (
	"math"
	"testing"
)

// TolWorse on a sphere whose restart's optimum is shift above the first
// run's: the restart ends on tol_worse at the first generation where the
// range of the values TolFun reads is below ε times the distance of their
// lowest to the best point (recomputed here from the values told), with
// that ratio as its value, unless the distance is below δ
// (TolWorseDelta, DefaultTolWorseDelta when 0, none when negative) times
// the run's descent from its first generation; the first run never
// fires it (not even when its values rise above its own best: jump), nor
// a restart that finds better points than the first run's, nor an ES
// without it.
func TestTolWorse(t *testing.T) {
	const eps = 0.1
	for _, c := range []struct {
		name     string
		shift    float64 // the restart's optimum, relative to the first run's
		jump     float64 // added to the first run's values from generation 50 on
		tolWorse float64
		delta    float64 // Termination.TolWorseDelta
		want     string  // the restart's end
	}{
		{"restart above the best", 1, 0, eps, 0, StopTolWorse},
		{"restart below the best", -1, 0, eps, 0, StopTolFun},
		{"restart within δ of its descent", 1e-4, 0, eps, 0, StopTolFun},
		{"restart beyond a smaller δ", 1e-4, 0, eps, 1e-5, StopTolWorse},
		{"no δ", 1e-4, 0, eps, -1, StopTolWorse},
		{"first run above its own best", -2, 1, eps, 0, StopTolFun},
		{"off", 1, 0, 0, 0, StopTolFun},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := mustNew(t, Config{X0: constVec(4, 1), Sigma0: 1, Seed: 3, Restarts: Restarts{IPOP: true, Max: 1},
				Termination: Termination{TolFun: 1e-10, TolX: -1, TolWorse: c.tolWorse, TolWorseDelta: c.delta,
					NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true, NoEqualFunVal: true}})
			var bests []float64 // the restart's best value of each generation
			for g := 0; e.Stopped() == nil; g++ {
				if g > 5000 {
					t.Fatal("no end of the restart within 5000 generations")
				}
				run, best := e.State().Run, e.State().Best.F
				f := func(x []float64) float64 { return sphere(x) + c.shift*float64(run) }
				if run == 0 && g >= 50 {
					f = func(x []float64) float64 { return sphere(x) + c.jump }
				}
				var v []float64 // the values told, in order
				rec := step(t, e, func(x []float64) float64 { y := f(x); v = append(v, y); return y })
				if run == 0 {
					continue
				}
				bests = append(bests, rec.Best)
				w := len(e.s.FunHist)
				if len(bests) < w {
					continue
				}
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, b := range append(bests[len(bests)-w:], v...) {
					lo, hi = math.Min(lo, b), math.Max(hi, b)
				}
				delta := max(c.delta, 0)
				if c.delta == 0 {
					delta = DefaultTolWorseDelta
				}
				fires := c.tolWorse > 0 && lo > best && hi-lo < c.tolWorse*(lo-best) && lo-best >= delta*(bests[0]-best)
				r, fired := hasReason(rec.Stop, StopTolWorse)
				if fired != fires {
					t.Fatalf("generation %d of the restart: tol_worse fired %t, want %t (range %g, distance %g)", len(bests), fired, fires, hi-lo, lo-best)
				}
				if fired && math.Abs(r.Value-(hi-lo)/(lo-best)) > 1e-12 {
					t.Fatalf("tol_worse's value %g, want the ratio %g", r.Value, (hi-lo)/(lo-best))
				}
			}
			// The restart is the last run (Max 1): its end stops the ES.
			ends := e.RunEnds()
			if e.State().Run != 1 || len(ends) != 1 || len(bests) == 0 {
				t.Fatalf("run %d, %d generations of the restart; want the restart's end", e.State().Run, len(bests))
			}
			if _, ok := hasReason(ends[0].Reasons, StopTolWorse); ok {
				t.Fatalf("the first run ended on %v", reasonNames(ends[0].Reasons))
			}
			if _, ok := hasReason(e.Stopped(), c.want); !ok {
				t.Fatalf("the restart ended on %v, want %s", reasonNames(e.Stopped()), c.want)
			}
		})
	}
}
