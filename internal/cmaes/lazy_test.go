package cmaes

import (
	"math"
	"testing"
)

// TestLazyGap checks lazyGap against pycma 4.4.0's lazy_update_gap,
// 1/(c_1 + c_μ)/n/10 with its c_1 and c_μ (printed by
// cma.CMAEvolutionStrategy(n*[1], 1, {'popsize': λ}).sm.lazy_update_gap;
// pycma adds 1e-23 to c_1 + c_μ, below rounding here).
func TestLazyGap(t *testing.T) {
	for _, c := range []struct {
		n, lambda int
		want      float64
	}{
		{40, 15, 0.5464896124038984}, {100, 17, 1.1422813430821708}, {200, 19, 2.0077161963971255},
		{200, 100, 0.38870790210403194}, {400, 100, 0.7694593674519805}, {1000, 100, 1.912065788378402},
	} {
		p, err := NewParamsActive(c.n, c.lambda, true)
		if err != nil {
			t.Fatal(err)
		}
		want := 1 / (p.C1 + p.CMu) / float64(c.n) / 10
		if got := lazyGap(p); got != want || math.Abs(got-c.want) > 1e-9*c.want {
			t.Errorf("n=%d λ=%d: gap %v, want %v (pycma %v)", c.n, c.lambda, got, want, c.want)
		}
	}
}

// TestLazyGapLong checks lazyGapLong against purecma.py's lazy_gap_evals
// (0.5·n·λ/(c_1 + c_μ)/n² evaluations) in updates of λ evaluations: five
// times lazyGap.
func TestLazyGapLong(t *testing.T) {
	for _, c := range [][2]int{{40, 15}, {100, 17}, {200, 100}, {1000, 100}} {
		p, err := NewParamsActive(c[0], c[1], true)
		if err != nil {
			t.Fatal(err)
		}
		n, lambda := float64(c[0]), float64(c[1])
		evals := 0.5 * n * lambda / (p.C1 + p.CMu) / (n * n)
		if got := lazyGapLong(p); math.Abs(got-evals/lambda) > 1e-12*got || math.Abs(got-5*lazyGap(p)) > 1e-12*got {
			t.Errorf("n=%d λ=%d: gap %v, purecma's %v updates, 5·lazyGap %v", c[0], c[1], got, evals/lambda, 5*lazyGap(p))
		}
	}
}

// TestLazySchedule checks which updates decompose C under NumericsLazy
// and NumericsLazyLong (pycma's rule: update k decomposes when k ≥ k_last
// + g, with each version's g), that B and D stay as they were in between,
// and the invariants after every tell.
func TestLazySchedule(t *testing.T) {
	for _, v := range []int{NumericsLazy, NumericsLazyLong} {
		e := mustNew(t, Config{X0: uniformX0(5, 100), Sigma0: 0.5, Seed: 4, Active: true, Numerics: v})
		g := lazyGap(e.p)
		if v == NumericsLazyLong {
			g = lazyGapLong(e.p)
		}
		if g <= 1 {
			t.Fatalf("gap %v: the test wants one > 1", g)
		}
		checkLazySchedule(t, e, g)
	}
}

// checkLazySchedule runs 30 updates of e, whose gap is g (see
// TestLazySchedule).
func checkLazySchedule(t *testing.T, e *ES, g float64) {
	t.Helper()
	last, skipped := 0, 0
	for k := 1; k <= 30; k++ {
		b0 := append([]float64(nil), e.s.B.RawMatrix().Data...)
		d0 := append([]float64(nil), e.s.D...)
		step(t, e, ellipsoid)
		checkInvariants(t, e)
		if float64(k-last) >= g {
			last = k
		} else {
			skipped++
			if !sameFloats(b0, e.s.B.RawMatrix().Data) || !sameFloats(d0, e.s.D) || e.s.DecomposedC {
				t.Fatalf("update %d: B or D changed, or marked C's decomposition, between decompositions", k)
			}
		}
		if e.s.T != k || e.s.EigenT != last {
			t.Fatalf("update %d: T %d, EigenT %d; want %d, %d", k, e.s.T, e.s.EigenT, k, last)
		}
	}
	if skipped == 0 {
		t.Fatal("no update skipped the decomposition")
	}
}

// TestLazySmallGapIsDC checks that where the gap is at most one update
// NumericsLazy samples what NumericsDC samples, bit for bit.
func TestLazySmallGapIsDC(t *testing.T) {
	var hashes [2]string
	for i, v := range []int{NumericsDC, NumericsLazy} {
		e := mustNew(t, Config{X0: uniformX0(6, 40), Sigma0: 0.5, Seed: 5, Active: true, Numerics: v})
		if g := lazyGap(e.p); g > 1 {
			t.Fatalf("gap %v > 1", g)
		}
		hashes[i] = continueHash(t, e, 40)
	}
	if hashes[0] != hashes[1] {
		t.Fatal("NumericsLazy with a gap ≤ 1 samples other points than NumericsDC")
	}
}

// TestLazyRestore checks that an ES restored between two decompositions
// (B and D those of an earlier C) continues bit for bit, through a restart
// (TolFun fires once its history of 10 + ⌈30n/λ⌉ generations is full).
func TestLazyRestore(t *testing.T) {
	for _, v := range []int{NumericsLazy, NumericsLazyLong} {
		e := mustNew(t, Config{X0: uniformX0(7, 50), Sigma0: 0.5, Lambda: 4, Seed: 6, Active: true, Numerics: v,
			Restarts: Restarts{BIPOP: true, Max: 2}, Termination: Termination{TolFun: 1e30}})
		if g := lazyGap(e.p); g <= 1 {
			t.Fatalf("gap %v: the test wants one > 1", g)
		}
		checkLazyRestore(t, e)
	}
}

// checkLazyRestore is TestLazyRestore for one ES.
func checkLazyRestore(t *testing.T, e *ES) {
	t.Helper()
	for e.s.EigenT == e.s.T || e.s.T < len(e.s.FunHist)-5 {
		step(t, e, ellipsoid)
	}
	d, err := restoreCopy(t, e)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := continueHash(t, d, 40), continueHash(t, e, 40); got != want {
		t.Fatal("the restored ES samples other points")
	}
	if e.s.Run == 0 || e.s.EigenT > e.s.T {
		t.Fatalf("run %d, EigenT %d, T %d: want a restart in the continuation", e.s.Run, e.s.EigenT, e.s.T)
	}
}

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestDefaultNumerics checks the dimension from which a new session
// decomposes lazily.
func TestDefaultNumerics(t *testing.T) {
	for _, c := range []struct{ n, want int }{{2, NumericsLatest}, {LazyMinDimension - 1, NumericsLatest}, {LazyMinDimension, NumericsLazyLong}, {1000, NumericsLazyLong}} {
		if got := DefaultNumerics(c.n); got != c.want {
			t.Errorf("n=%d: %d, want %d", c.n, got, c.want)
		}
	}
}
