package enginecodec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/exactbits"
	"github.com/selfcma/selfcma/internal/selfcma"
	"github.com/selfcma/selfcma/internal/testfn"
)

// The shared test functions, under the short names the tests use.
var (
	sphere     = testfn.Sphere
	ellipsoid  = testfn.Ellipsoid
	rosenbrock = testfn.Rosenbrock
	uniformX0  = testfn.UniformX0
)

func rastrigin(x []float64) float64 {
	s := 10 * float64(len(x))
	for _, v := range x {
		s += v*v - 10*math.Cos(2*math.Pi*v)
	}
	return s
}

func constVec(n int, v float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = v
	}
	return x
}

func mustNew(tb testing.TB, cfg cmaes.Config) *cmaes.ES {
	tb.Helper()
	e, err := cmaes.New(cfg)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return e
}

// step asks, evaluates f on every point and tells.
func step(tb testing.TB, e *cmaes.ES, f func([]float64) float64) cmaes.Record {
	tb.Helper()
	X := e.Ask()
	v := make([]float64, len(X))
	for k, x := range X {
		v[k] = f(x)
	}
	rec, err := e.Tell(v)
	if err != nil {
		tb.Fatalf("Tell at generation %d: %v", e.Generation(), err)
	}
	return rec
}

func reasonNames(rs []cmaes.StopReason) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

// samePoints reports whether two lists of points have the same bits.
func samePoints(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !exactbits.Same(a[k], b[k]) {
			return false
		}
	}
	return true
}

// marshal is e's encoding (AppendCMAES), as the tests of the ES's own
// codec called it.
func marshal(e *cmaes.ES) ([]byte, error) { return AppendCMAES(nil, e.State()), nil }

// marshalSelf is s's encoding (AppendSelfCMA).
func marshalSelf(s *selfcma.ES) ([]byte, error) { return AppendSelfCMA(nil, s.State()), nil }

// decodeRestore reads an ES embedded in r in the layout of version, C
// maybe left to the given Step, and restores it.
func decodeRestore(r *binenc.Reader, version uint32, given *cmaes.Step) (*cmaes.ES, error) {
	d, err := decodeCMAES(r, version, given)
	if err != nil {
		return nil, err
	}
	return d.restore()
}

func hasReason(rs []cmaes.StopReason, name string) (cmaes.StopReason, bool) {
	for _, r := range rs {
		if r.Name == name {
			return r, true
		}
	}
	return cmaes.StopReason{}, false
}

// tellFailed tells a generation whose every evaluation failed.
func tellFailed(tb testing.TB, e *cmaes.ES) cmaes.Record {
	tb.Helper()
	v := make([]float64, e.Params().Lambda)
	for k := range v {
		v[k] = math.NaN()
	}
	rec, err := e.Tell(v)
	if err != nil {
		tb.Fatal(err)
	}
	return rec
}

// largeRuns is the number of large runs so far, the current one included.
func largeRuns(e *cmaes.ES) int {
	k := 0
	for _, r := range e.RunEnds() {
		if r.Regime == cmaes.RegimeLarge {
			k++
		}
	}
	if e.Regime() == cmaes.RegimeLarge {
		k++
	}
	return k
}

// sameBitsRows reports whether two lists of points have the same bits.
func sameBitsRows(a, b [][]float64) bool { return samePoints(a, b) }

// appendES and appendSelf are AppendCMAES and AppendSelfCMA after dst.
func appendES(e *cmaes.ES, dst []byte) ([]byte, error) { return AppendCMAES(dst, e.State()), nil }

func appendSelf(s *selfcma.ES, dst []byte) ([]byte, error) {
	return AppendSelfCMA(dst, s.State()), nil
}

// selfMustNew is selfcma.New, with the paper's Algorithm 2 in every run
// (EveryLambda, AdaptRestarts) when cfg names no MinLambda: the encoding of
// the kept step is tested at small λ and through restarts, where the
// default gate would close.
func selfMustNew(tb testing.TB, cfg selfcma.Config) *selfcma.ES {
	tb.Helper()
	if cfg.MinLambda == 0 {
		cfg.MinLambda, cfg.AdaptRestarts = selfcma.EveryLambda, true
	}
	s, err := selfcma.New(cfg)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return s
}

func selfStep(tb testing.TB, s *selfcma.ES, f func([]float64) float64) selfcma.Record {
	tb.Helper()
	X := s.Ask()
	v := make([]float64, len(X))
	for k, x := range X {
		v[k] = f(x)
	}
	rec, err := s.Tell(v)
	if err != nil {
		tb.Fatalf("Tell: %v", err)
	}
	return rec
}

// never disables every criterion, so a benchmark runs as long as it likes.
var never = cmaes.Termination{TolFun: -1, TolX: -1, ConditionCov: -1, TolUpSigma: -1,
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

// benchES returns an ES warmed up for a few generations on random fitness
// (a random walk: the distribution neither converges nor diverges), and the
// fitness stream.
func benchES(b *testing.B, c benchCase) (*cmaes.ES, func() []float64) {
	return benchESNumerics(b, c, 0)
}

// benchESNumerics is benchES with the given numerics version.
func benchESNumerics(b *testing.B, c benchCase, numerics int) (*cmaes.ES, func() []float64) {
	e := mustNew(b, cmaes.Config{X0: uniformX0(1, c.n), Sigma0: 1, Lambda: c.lambda, Seed: 1, Termination: never, Numerics: numerics})
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
