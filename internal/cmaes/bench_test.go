package cmaes

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// never disables every criterion, so a benchmark runs as long as it likes.
var never = Termination{TolFun: -1, TolX: -1, ConditionCov: -1, TolUpSigma: -1,
	NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true, NoEqualFunVal: true,
	MaxFailedGenerations: -1}

type benchCase struct {
	n, lambda int
}

func (c benchCase) String() string {
	l := "default"
	if c.lambda != 0 {
		l = fmt.Sprint(c.lambda)
	}
	return fmt.Sprintf("n=%d/λ=%s", c.n, l)
}

var benchCases = []benchCase{{10, 0}, {10, 100}, {100, 0}, {100, 100}, {200, 100}, {400, 0}, {400, 100}, {1000, 100}}

// benchES returns an ES of a new CMA-ES session's configuration (active
// update, DefaultNumerics(n); restarts play no part: no criterion fires)
// warmed up for a few generations on random fitness (a random walk: the
// distribution neither converges nor diverges), and the fitness stream.
func benchES(b *testing.B, c benchCase) (*ES, func() []float64) {
	return benchESNumerics(b, c, DefaultNumerics(c.n))
}

// benchESNumerics is benchES with the given numerics version.
func benchESNumerics(b *testing.B, c benchCase, numerics int) (*ES, func() []float64) {
	e := mustNew(b, Config{X0: uniformX0(1, c.n), Sigma0: 1, Lambda: c.lambda, Seed: 1, Termination: never, Numerics: numerics, Active: true})
	r := rand.New(rand.NewPCG(2, 2))
	f := make([]float64, e.Params().Lambda)
	next := func() []float64 {
		for k := range f {
			f[k] = r.Float64()
		}
		return f
	}
	for range 5 {
		if _, err := e.Tell(next()); err != nil {
			b.Fatal(err)
		}
	}
	return e, next
}

// BenchmarkGeneration is one whole generation: ask, tell (update, eigen-
// decomposition, termination checks, sampling of the next batch), in a new
// CMA-ES session's configuration (benchES).
func BenchmarkGeneration(b *testing.B) {
	for _, c := range benchCases {
		b.Run(c.String(), func(b *testing.B) {
			e, next := benchES(b, c)
			b.ReportAllocs()
			for b.Loop() {
				_ = e.Ask()
				if _, err := e.Tell(next()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGenerationNumerics is BenchmarkGeneration at λ = 100 for each
// numerics version, to compare them in one run.
func BenchmarkGenerationNumerics(b *testing.B) {
	for _, c := range benchCases {
		if c.lambda != 100 {
			continue
		}
		for _, v := range []int{NumericsDsyev, NumericsBlocked, NumericsDC, NumericsLazy, NumericsLazyLong} {
			b.Run(fmt.Sprintf("%v/numerics=%d", c, v), func(b *testing.B) {
				e, next := benchESNumerics(b, c, v)
				b.ReportAllocs()
				for b.Loop() {
					_ = e.Ask()
					if _, err := e.Tell(next()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkAsk(b *testing.B) {
	for _, c := range benchCases {
		b.Run(c.String(), func(b *testing.B) {
			e, _ := benchES(b, c)
			b.ReportAllocs()
			for b.Loop() {
				_ = e.Ask()
			}
		})
	}
}

// BenchmarkTell is the update with the sampling of the next batch.
func BenchmarkTell(b *testing.B) {
	for _, c := range benchCases {
		b.Run(c.String(), func(b *testing.B) {
			e, next := benchES(b, c)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Tell(next()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEigenSym is gonum's symmetric eigendecomposition alone, the
// yardstick of the generation's cost.
func BenchmarkEigenSym(b *testing.B) {
	for _, n := range []int{10, 100, 400} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			a := mat.NewDense(n, n, nil)
			for i := range n {
				for j := range n {
					a.Set(i, j, r.NormFloat64())
				}
			}
			c := mat.NewSymDense(n, nil)
			c.SymOuterK(1, a)
			var eig mat.EigenSym
			b.ReportAllocs()
			for b.Loop() {
				if !eig.Factorize(c, true) {
					b.Fatal("factorize failed")
				}
			}
		})
	}
}

// BenchmarkEigenSymOfC decomposes the C of a running ES (the matrix the
// generation decomposes; QR iterations depend on the spectrum).
func BenchmarkEigenSymOfC(b *testing.B) {
	for _, c := range benchCases {
		b.Run(c.String(), func(b *testing.B) {
			e, _ := benchES(b, c)
			cm := e.C()
			var eig mat.EigenSym
			b.ReportAllocs()
			for b.Loop() {
				if !eig.Factorize(cm, true) {
					b.Fatal("factorize failed")
				}
			}
		})
	}
}
