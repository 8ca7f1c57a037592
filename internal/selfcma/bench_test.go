package selfcma

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"gonum.org/v1/gonum/mat"
)

var never = cmaes.Termination{TolFun: -1, TolX: -1, ConditionCov: -1, TolUpSigma: -1,
	NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true, NoEqualFunVal: true}

type teller interface {
	Ask() [][]float64
}

// BenchmarkGeneration compares one self-CMA-ES generation (primary update
// and 20 evaluations of h_t; fitness excluded: random values, a random walk
// that neither converges nor diverges) with one plain CMA-ES generation, in
// the same run.
func BenchmarkGeneration(b *testing.B) {
	for _, n := range []int{10, 100, 200, 400, 1000} {
		for _, alg := range []string{"cma-es", "self-cma-es"} {
			b.Run(fmt.Sprintf("n=%d/λ=100/%s", n, alg), func(b *testing.B) {
				cfg := cmaes.Config{X0: uniformX0(1, n), Sigma0: 1, Lambda: 100, Seed: 1, Termination: never}
				r := rand.New(rand.NewPCG(2, 2))
				f := make([]float64, 100)
				var tell func() error
				var es teller
				if alg == "cma-es" {
					c, _ := cmaes.New(cfg)
					es, tell = c, func() error { _, err := c.Tell(f); return err }
				} else {
					s := mustNew(b, Config{CMA: cfg})
					es, tell = s, func() error { _, err := s.Tell(f); return err }
				}
				gen := func() {
					_ = es.Ask()
					for k := range f {
						f[k] = r.Float64()
					}
					if err := tell(); err != nil {
						b.Fatal(err)
					}
				}
				for range 3 {
					gen()
				}
				b.ReportAllocs()
				for b.Loop() {
					gen()
				}
			})
		}
	}
}

// hEigen is h_t with an eigendecomposition of C' in place of the Cholesky
// factor: the variant the fast path replaced, kept to measure the gain.
func hEigen(theta cmaes.Hyper, prev, cur *cmaes.Step, mu int, eig *mat.EigenSym) float64 {
	lambda, n := cur.X.Dims()
	pc := make([]float64, n)
	c := mat.NewSymDense(n, nil)
	prev.Replay(theta, pc, c)
	eig.Factorize(c, true)
	var bm mat.Dense
	eig.VectorsTo(&bm)
	vals := eig.Values(nil)
	dx := mat.NewDense(lambda, n, nil)
	for k := range lambda {
		x := cur.X.RawRowView(k)
		for i := range n {
			dx.Set(k, i, x[i]-cur.Mean[i])
		}
	}
	var proj mat.Dense
	proj.Mul(dx, &bm)
	d := make([]float64, lambda)
	for k := range lambda {
		for a, v := range proj.RawRowView(k) {
			d[k] += v * v / vals[a]
		}
	}
	idx := make([]int, lambda)
	for k := range idx {
		idx[k] = k
	}
	sort.SliceStable(idx, func(a, b int) bool { return d[idx[a]] > d[idx[b]] })
	rank := make([]float64, lambda)
	for r, k := range idx {
		rank[k] = float64(r + 1)
	}
	var h float64
	for _, k := range cur.Order[:mu] {
		h += rank[k]
	}
	return h / float64(mu)
}

// BenchmarkAuxGeneration is the 20 evaluations of h_t alone, by the
// Cholesky path (serial, as one goroutine does them) and by the
// eigendecomposition variant.
func BenchmarkAuxGeneration(b *testing.B) {
	for _, n := range []int{10, 100} {
		s := mustNew(b, Config{CMA: cmaes.Config{X0: uniformX0(1, n), Sigma0: 1, Lambda: 100, Seed: 1, Termination: never}})
		r := rand.New(rand.NewPCG(2, 2))
		f := make([]float64, 100)
		for range 4 {
			for k := range f {
				f[k] = r.Float64()
			}
			if _, err := s.Tell(f); err != nil {
				b.Fatal(err)
			}
		}
		prev, cur := s.prev, s.Primary().LastStep()
		prevCopy := new(cmaes.Step)
		prevCopy.CopyFrom(prev)
		// prev is the step just kept; the one before it is what h_t replays.
		U := s.aux.Ask()
		mu := s.Primary().Params().Mu
		b.Run(fmt.Sprintf("n=%d/λ=100/cholesky", n), func(b *testing.B) {
			ws := &workspace{}
			b.ReportAllocs()
			for b.Loop() {
				for _, u := range U {
					objective(u, prevCopy, cur, mu, ws)
				}
			}
		})
		b.Run(fmt.Sprintf("n=%d/λ=100/eigen", n), func(b *testing.B) {
			var eig mat.EigenSym
			b.ReportAllocs()
			for b.Loop() {
				for _, u := range U {
					if infeasibility(u) == 0 {
						hEigen(cmaes.Hyper{C1: Scale * u[0], CMu: Scale * u[1], Cc: Scale * u[2]}, prevCopy, cur, mu, &eig)
					}
				}
			}
		})
	}
}

func TestHEigenAgrees(t *testing.T) {
	s := mustNew(t, Config{CMA: cmaes.Config{X0: uniformX0(1, 7), Sigma0: 1, Lambda: 30, Seed: 1}})
	prev := new(cmaes.Step)
	var eig mat.EigenSym
	ws := &workspace{}
	for g := range 20 {
		step(t, s, rosenbrock)
		cur := s.Primary().LastStep()
		if g > 0 {
			theta := cmaes.Hyper{C1: 0.1, CMu: 0.3, Cc: 0.4}
			want, _ := ws.h(theta, prev, cur, 15)
			if got := hEigen(theta, prev, cur, 15, &eig); got != want {
				t.Fatalf("g=%d: eigen variant %v, Cholesky %v", g, got, want)
			}
		}
		prev.CopyFrom(cur)
	}
}
