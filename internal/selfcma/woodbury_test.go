package selfcma

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// woodburyCase runs a self-CMA-ES on Rosenbrock and, at each generation
// from the second on, evaluates h_t's distances for thetas random θ by the
// Cholesky factor of C' and by the Woodbury identity. It returns the
// largest relative difference of a distance d_k², the number of θ whose
// h_t differ, the number of θ compared, and the number of generations whose
// basis fell back to the Cholesky factor.
func woodburyCase(tb testing.TB, n, lambda int, active, bounds bool, gens, thetas int) (worst float64, hDiff, compared, fallback int) {
	cfg := cmaes.Config{X0: uniformX0(uint64(n), n), Sigma0: 1, Lambda: lambda, Seed: uint64(n) + 7, Active: active, Termination: never}
	if bounds {
		lo, hi := make([]float64, n), make([]float64, n)
		for i := range n {
			lo[i], hi[i] = -5, 1.5
			cfg.X0[i] = math.Min(cfg.X0[i], 1)
		}
		cfg.Bounds = &cmaes.Bounds{Lower: lo, Upper: hi}
	}
	s := mustNew(tb, Config{CMA: cfg})
	r := rand.New(rand.NewPCG(uint64(n), 11))
	prev := new(cmaes.Step)
	chol, wood := &workspace{}, &workspace{}
	for g := range gens {
		step(tb, s, rosenbrock)
		cur := s.Primary().LastStep()
		if g > 0 {
			wood.basis = newReplayBasis(prev, cur)
			if wood.basis == nil {
				fallback++
			}
			mu := s.Primary().Params().Mu
			def := s.Primary().Params().Hyper()
			for j := range thetas {
				theta := randomTheta(r, def, j%2 == 0)
				hc, okc := chol.h(theta, prev, cur, mu)
				dc := append([]float64(nil), chol.d...)
				hw, okw := wood.h(theta, prev, cur, mu)
				if okc != okw {
					tb.Fatalf("n=%d g=%d θ=%+v: positive definite by Cholesky %v, by Woodbury %v", n, g, theta, okc, okw)
				}
				if !okc {
					continue
				}
				compared++
				if hc != hw {
					hDiff++
				}
				for k, d := range dc {
					worst = math.Max(worst, math.Abs(wood.d[k]-d)/d)
				}
			}
		}
		prev.CopyFrom(cur)
	}
	return worst, hDiff, compared, fallback
}

// randomTheta is a feasible θ: uniform over the feasible set (scaled by
// Scale), or the defaults each times e^{N(0, 1)}.
func randomTheta(r *rand.Rand, def cmaes.Hyper, uniform bool) cmaes.Hyper {
	if uniform {
		u0, u1 := r.Float64(), r.Float64()
		if u0+u1 > 1 {
			u0, u1 = 1-u0, 1-u1
		}
		return cmaes.Hyper{C1: Scale * u0, CMu: Scale * u1, Cc: Scale * r.Float64()}
	}
	f := func(v float64) float64 { return math.Min(Scale*0.45, v*math.Exp(r.NormFloat64())) }
	return cmaes.Hyper{C1: f(def.C1), CMu: f(def.CMu), Cc: f(def.Cc)}
}

// TestWoodburyAgrees checks that h_t's distances by the Woodbury identity
// are those by the Cholesky factor of C' within 1e-9 relative, active and
// not, with bounds and without, and that both paths agree on positive
// definiteness.
func TestWoodburyAgrees(t *testing.T) {
	for _, n := range []int{2, 10, 40} {
		for _, active := range []bool{false, true} {
			for _, bounds := range []bool{false, true} {
				worst, hDiff, compared, fallback := woodburyCase(t, n, 24, active, bounds, 25, 10)
				if worst > 1e-9 || fallback > 0 || compared < 200 {
					t.Errorf("n=%d active=%v bounds=%v: worst relative difference %.3g, h differs for %d of %d θ, %d fallbacks",
						n, active, bounds, worst, hDiff, compared, fallback)
				}
			}
		}
	}
}

// TestWoodburyAccuracyTable: the Woodbury distances agree with the
// Cholesky ones within 1e-9 relative, at n = 10 and 40 (5 generations of
// 5 θ). WOODBURY_TABLE=1 go test -run WoodburyAccuracyTable -v
// ./internal/selfcma/ prints the table of docs/algorithm.md §2 instead
// (n up to 400, λ = 100, 20 generations of 20 θ).
func TestWoodburyAccuracyTable(t *testing.T) {
	sizes, gens, thetas, table := []int{10, 40}, 5, 5, os.Getenv("WOODBURY_TABLE") != ""
	if table {
		sizes, gens, thetas = []int{10, 40, 100, 200, 400}, 20, 20
	}
	for _, n := range sizes {
		for _, active := range []bool{false, true} {
			for _, bounds := range []bool{false, true} {
				worst, hDiff, compared, fallback := woodburyCase(t, n, 100, active, bounds, gens, thetas)
				if table {
					fmt.Printf("| %d | %v | %v | %.2g | %d of %d | %d |\n", n, active, bounds, worst, hDiff, compared, fallback)
				}
				if !(worst <= 1e-9) {
					t.Errorf("n=%d active=%v bounds=%v: distances differ by %g relative", n, active, bounds, worst)
				}
			}
		}
	}
}

// BenchmarkWoodbury is 20 evaluations of h_t (feasible θ) of one generation (λ =
// 100), serially as one goroutine does them, by the Cholesky factor of each
// C' and by the Woodbury identity (its θ-free basis included), in the same
// run.
func BenchmarkWoodbury(b *testing.B) {
	for _, n := range []int{10, 20, 40, 70, 100, 200, 400} {
		for _, active := range []bool{false, true} {
			benchWoodburyPaths(b, n, 100, active)
		}
	}
}

// BenchmarkWoodburyGrid is BenchmarkWoodbury over n and λ, to place the
// break-even rank k (μ + 1; active: λ + 1) of the Woodbury path against
// the Cholesky one (docs/algorithm.md §2, "h_t by the determinant lemma
// and Woodbury").
func BenchmarkWoodburyGrid(b *testing.B) {
	for _, n := range []int{20, 50, 100, 200} {
		for _, lambda := range []int{20, 50, 100, 200, 400} {
			for _, active := range []bool{false, true} {
				benchWoodburyPaths(b, n, lambda, active)
			}
		}
	}
}

// benchWoodburyPaths times h_t of 20 feasible θ near the defaults, after a
// few generations on Rosenbrock, by both paths.
func benchWoodburyPaths(b *testing.B, n, lambda int, active bool) {
	s := mustNew(b, Config{CMA: cmaes.Config{X0: uniformX0(1, n), Sigma0: 1, Lambda: lambda, Seed: 1, Active: active, Termination: never}})
	prev := new(cmaes.Step)
	step(b, s, rosenbrock)
	for range 3 {
		prev.CopyFrom(s.Primary().LastStep())
		step(b, s, rosenbrock)
	}
	cur := s.Primary().LastStep()
	mu := s.Primary().Params().Mu
	r := rand.New(rand.NewPCG(1, 1))
	thetas := make([]cmaes.Hyper, AuxLambda) // feasible, near the defaults
	for j := range thetas {
		thetas[j] = randomTheta(r, s.Primary().Params().Hyper(), false)
	}
	for _, path := range []string{"cholesky", "woodbury"} {
		b.Run(fmt.Sprintf("n=%d/λ=%d/active=%v/%s", n, lambda, active, path), func(b *testing.B) {
			ws := &workspace{}
			b.ReportAllocs()
			for b.Loop() {
				if path == "woodbury" {
					ws.basis = newReplayBasis(prev, cur)
				}
				for _, theta := range thetas {
					if _, ok := ws.h(theta, prev, cur, mu); !ok {
						b.Fatal("C' not positive definite")
					}
				}
			}
		})
	}
}

// BenchmarkGenerationWoodbury is BenchmarkGeneration's self-CMA-ES
// generation (λ = 100, 20 evaluations of h_t over GOMAXPROCS goroutines)
// with h_t by the Cholesky factors and by the Woodbury identity, in the same
// run.
func BenchmarkGenerationWoodbury(b *testing.B) {
	for _, n := range []int{40, 100, 200, 400, 1000} {
		for _, active := range []bool{false, true} {
			for _, wood := range []bool{false, true} {
				path := map[bool]string{false: "cholesky", true: "woodbury"}[wood]
				b.Run(fmt.Sprintf("n=%d/λ=100/active=%v/%s", n, active, path), func(b *testing.B) {
					cfg := cmaes.Config{X0: uniformX0(1, n), Sigma0: 1, Lambda: 100, Seed: 1, Active: active, Termination: never}
					s := mustNew(b, Config{CMA: cfg})
					s.woodbury = wood
					r := rand.New(rand.NewPCG(2, 2))
					f := make([]float64, 100)
					gen := func() {
						_ = s.Ask()
						for k := range f {
							f[k] = r.Float64()
						}
						if _, err := s.Tell(f); err != nil {
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
}

// TestNumericsWoodbury checks the choice of NumericsWoodbury (only where
// named, at any dimension), that a session at it is deterministic, and
// that a state pairing it with another primary numerics is refused.
func TestNumericsWoodbury(t *testing.T) {
	for _, c := range []struct {
		n, numerics int
		active      bool
		want        bool
	}{
		{4, NumericsWoodbury, false, true}, {4, 0, false, false}, {4, cmaes.NumericsDC, false, false},
		{400, 0, false, false}, {400, 0, true, false}, {400, NumericsWoodbury, true, true},
		{400, cmaes.NumericsDC, false, false},
	} {
		s := mustNew(t, Config{CMA: cmaes.Config{X0: uniformX0(1, c.n), Sigma0: 1, Seed: 1, Numerics: c.numerics, Active: c.active}})
		if got := s.Numerics() == NumericsWoodbury; got != c.want || s.State().Woodbury != c.want {
			t.Errorf("n=%d numerics %d active %v: Woodbury %v, want %v", c.n, c.numerics, c.active, got, c.want)
		}
		if c.want && (s.Primary().Config().Numerics != cmaes.NumericsDC || s.aux.Config().Numerics != cmaes.NumericsDC) {
			t.Errorf("n=%d: primary numerics %d, auxiliary %d; want %d", c.n, s.Primary().Config().Numerics, s.aux.Config().Numerics, cmaes.NumericsDC)
		}
	}

	cfg := Config{CMA: cmaes.Config{X0: uniformX0(3, 6), Sigma0: 1, Lambda: 40, Seed: 3, Active: true, Numerics: NumericsWoodbury}}
	a, b := mustNew(t, cfg), mustNew(t, cfg)
	for g := range 30 {
		step(t, a, rosenbrock)
		step(t, b, rosenbrock)
		am, _ := a.AuxMean()
		bm, _ := b.AuxMean()
		if fmt.Sprint(a.Primary().Mean(), am) != fmt.Sprint(b.Primary().Mean(), bm) {
			t.Fatalf("g=%d: two runs of one configuration differ", g)
		}
	}

	st := mustNew(t, Config{CMA: cmaes.Config{X0: uniformX0(1, 4), Sigma0: 1, Seed: 1, Numerics: cmaes.NumericsBlocked}}).State()
	st.Woodbury = true
	if _, err := Restore(st); err == nil {
		t.Fatal("Restore accepted Woodbury on a primary of numerics 2")
	}
}
