package selfcma

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"gonum.org/v1/gonum/mat"
)

// Inject reaches the primary: the next batch takes the points.
func TestInjectPassesToThePrimary(t *testing.T) {
	s := mustNew(t, Config{CMA: cmaes.Config{X0: uniformX0(1, 4), Sigma0: 1, Lambda: 12, Seed: 1,
		Inject: [][]float64{{1, 2, 3, 4}}}})
	if got := s.Ask()[0]; !slices.Equal(got, []float64{1, 2, 3, 4}) {
		t.Fatalf("first batch starts with %v, want the warm-start point", got)
	}
	p := []float64{0.5, 0.25, 0, -1}
	if err := s.Inject([][]float64{p}, true); err != nil || s.Injected() != 1 {
		t.Fatalf("Inject: %v, %d waiting", err, s.Injected())
	}
	if err := s.Inject([][]float64{{1}}, true); !errors.Is(err, cmaes.ErrInvalidInjection) {
		t.Fatalf("wrong dimension: %v", err)
	}
	step(t, s, sphere)
	if got := s.Ask()[0]; !slices.Equal(got, p) || s.Injected() != 0 {
		t.Fatalf("next batch starts with %v, want %v", got, p)
	}
}

// h_t (Algorithm 3) with injected points among the λ newest: points far
// from the mean, clipped, leave h_t finite, in [1, λ] and equal to the
// reference computed the plain way; the replay with the rates used still
// reproduces C^t and p_c^t; the auxiliary CMA-ES keeps feasible rates.
func TestHWithInjectedPoints(t *testing.T) {
	const n, lambda = 8, 24
	for _, clip := range []bool{true, false} {
		s := mustNew(t, Config{CMA: cmaes.Config{X0: uniformX0(5, n), Sigma0: 1, Lambda: lambda, Seed: 5}})
		r := rand.New(rand.NewPCG(8, 8))
		ws := &workspace{}
		prev := new(cmaes.Step)
		checked := 0
		for g := range 40 {
			// Three points per generation: far away, clipped, one of them
			// the best of the generation; or 3σ away per coordinate, without
			// clip, ranked by f (unclipped points that win every generation
			// blow σ up until the σ safeguard rescales p_c, which no replay
			// reproduces).
			far := 1e6
			if !clip {
				far = 3 * s.Primary().Sigma()
			}
			var pts [][]float64
			for range 3 {
				x := s.Primary().Mean()
				for i := range x {
					x[i] += far * r.NormFloat64()
				}
				pts = append(pts, x)
			}
			if err := s.Inject(pts, clip); err != nil {
				t.Fatal(err)
			}
			X := s.Ask()
			v := make([]float64, len(X))
			for k, x := range X {
				v[k] = rosenbrock(x)
			}
			if clip && s.Primary().InjectedInBatch() > 0 {
				v[0] = -1 // an injected point ranks first
			}
			used := s.Primary().Hyper()
			if _, err := s.Tell(v); err != nil {
				t.Fatal(err)
			}
			cur := s.Primary().LastStep()
			if cur == nil {
				t.Fatalf("clip %v, generation %d: no update", clip, g)
			}
			if g > 1 {
				pc, c := make([]float64, n), mat.NewSymDense(n, nil)
				prev.Replay(prev.Hyper, pc, c)
				for i := range n {
					if math.Abs(pc[i]-cur.PC[i]) > 1e-12*math.Max(1, math.Abs(cur.PC[i])) {
						t.Fatalf("clip %v, g=%d: replayed p_c[%d] = %v, want %v", clip, g, i, pc[i], cur.PC[i])
					}
					for j := range n {
						if w := cur.C.At(i, j); math.Abs(c.At(i, j)-w) > 1e-12*math.Abs(cur.C.At(i, i)) {
							t.Fatalf("clip %v, g=%d: replayed C[%d][%d] = %v, want %v", clip, g, i, j, c.At(i, j), w)
						}
					}
				}
				for range 10 {
					u := []float64{r.Float64() * 0.5, r.Float64() * 0.5, r.Float64()}
					theta := cmaes.Hyper{C1: Scale * u[0], CMu: Scale * u[1], Cc: Scale * u[2]}
					h, ok := ws.h(theta, prev, cur, s.Primary().Params().Mu)
					if !ok || math.IsNaN(h) || h < 1 || h > lambda {
						t.Fatalf("clip %v, g=%d: h_t(%+v) = %v (ok %v), want finite in [1, %d]", clip, g, theta, h, ok, lambda)
					}
					if want := hReference(t, theta, prev, cur, s.Primary().Params()); h != want {
						t.Fatalf("clip %v, g=%d: h_t = %v, reference %v", clip, g, h, want)
					}
					checked++
				}
			}
			if !s.Primary().Hyper().Valid() || !used.Valid() {
				t.Fatalf("clip %v, g=%d: rates %+v", clip, g, s.Primary().Hyper())
			}
			prev.CopyFrom(cur)
		}
		if checked == 0 || s.Primary().Stopped() != nil {
			t.Fatalf("clip %v: %d values of h_t checked, stopped by %v", clip, checked, s.Primary().Stopped())
		}
	}
}

// The queue survives MarshalBinary/Unmarshal: a self-CMA-ES run with
// injected points continues bit for bit.
func TestInjectionsSurviveMarshal(t *testing.T) {
	cfg := Config{CMA: cmaes.Config{X0: uniformX0(3, 5), Sigma0: 1, Lambda: 16, Seed: 3,
		Bounds: &cmaes.Bounds{Lower: []float64{-4, -4, -4, -4, -4}, Upper: []float64{4, 4, 4, 4, 4}}}}
	inject := func(s *ES) {
		g := s.Primary().Generation()
		if g%2 == 1 {
			return
		}
		x := []float64{1, 1, 1, 1, 4 - float64(g%5)}
		if err := s.Inject([][]float64{x}, g%4 == 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, at := range []int{0, 1, 2, 9} {
		a := mustNew(t, cfg)
		for range at {
			inject(a)
			step(t, a, rosenbrock)
		}
		inject(a)
		b, err := restoreCopy(t, a)
		if err != nil {
			t.Fatal(err)
		}
		for g := range 20 {
			if !slices.EqualFunc(a.Ask(), b.Ask(), slices.Equal) {
				t.Fatalf("snapshot at %d: generation +%d differs", at, g)
			}
			ra, rb := step(t, a, rosenbrock), step(t, b, rosenbrock)
			if ra.AuxMean != rb.AuxMean || ra.Injected != rb.Injected {
				t.Fatalf("snapshot at %d: generation +%d: records differ", at, g)
			}
			inject(a)
			inject(b)
		}
		ba, bb := stateBits(t, a), stateBits(t, b)
		if !bytes.Equal(ba, bb) {
			t.Fatalf("snapshot at %d: states differ", at)
		}
	}
}

// A primary whose every evaluation fails stops on failed_evaluations.
func TestFailedEvaluationsStopSelfCMA(t *testing.T) {
	s := mustNew(t, Config{CMA: cmaes.Config{X0: uniformX0(3, 4), Sigma0: 1, Lambda: 12, Seed: 3,
		Restarts: cmaes.Restarts{IPOP: true}}})
	step(t, s, sphere)
	for g := 1; g <= cmaes.DefaultMaxFailedGenerations; g++ {
		if s.Primary().Stopped() != nil {
			t.Fatalf("stopped after %d failed generations", g-1)
		}
		v := make([]float64, 12)
		for k := range v {
			v[k] = math.NaN()
		}
		if _, err := s.Tell(v); err != nil {
			t.Fatal(err)
		}
	}
	why := s.Primary().Stopped()
	if len(why) != 1 || why[0].Name != cmaes.StopFailedEvaluations || s.Primary().Run() != 0 {
		t.Fatalf("stopped by %v in run %d, want %s and no restart", why, s.Primary().Run(), cmaes.StopFailedEvaluations)
	}
}
