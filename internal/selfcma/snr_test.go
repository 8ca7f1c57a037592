package selfcma

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/testfn"
	"gonum.org/v1/gonum/mat"
)

// newSNRES is a self-CMA-ES with the signal-to-noise rule at the default
// gate (its default λ runs below MinLambda).
func newSNRES(tb testing.TB, cma cmaes.Config) *ES {
	tb.Helper()
	s, err := New(Config{CMA: cma, SNR: true})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestSNRObserveFormula checks one observation against LRA's formulas
// computed by hand: with C^t = B D² Bᵀ and C^{t+1} = C^t + C^{t/2} A C^{t/2}
// the update in C^t's coordinates is A, so E = β A/(η√2), V = β‖A‖²/(2η²)
// and η moves by exp(min(γη, β) clip(SNR/(αη) − 1, −1, 1)).
func TestSNRObserveFormula(t *testing.T) {
	const n = 3
	// B a rotation, D the axis lengths.
	th := 0.3
	b := mat.NewDense(n, n, []float64{math.Cos(th), -math.Sin(th), 0, math.Sin(th), math.Cos(th), 0, 0, 0, 1})
	d := []float64{2, 0.5, 1.5}
	var half mat.Dense // C^{1/2} = B D Bᵀ
	half.Mul(b, mat.NewDense(n, n, []float64{d[0], 0, 0, 0, d[1], 0, 0, 0, d[2]}))
	half.Mul(&half, b.T())
	a := mat.NewSymDense(n, []float64{0.02, -0.01, 0.005, -0.01, -0.03, 0.01, 0.005, 0.01, 0.04})
	var c0d, c1d mat.Dense
	c0d.Mul(&half, &half)
	c1d.Mul(&half, a)
	c1d.Mul(&c1d, &half)
	c1d.Add(&c1d, &c0d)
	sym := func(m *mat.Dense) *mat.SymDense {
		s := mat.NewSymDense(n, nil)
		for i := range n {
			for j := i; j < n; j++ {
				s.SetSym(i, j, (m.At(i, j)+m.At(j, i))/2)
			}
		}
		return s
	}
	w := &snrWork{}
	w.before(&cmaes.State{C: sym(&c0d), B: b, D: d})
	r := newSNR(n, 1)
	r.Eta = 1.5
	params := SNRParams{}.resolved()
	r.observe(w, sym(&c1d), params)

	k := 1 / (1.5 * math.Sqrt2)
	var sq, e2 float64
	p := 0
	for i := range n {
		for j := i; j < n; j++ {
			want := SNRBeta * a.At(i, j) * k
			if math.Abs(r.E[p]-want) > 1e-12 {
				t.Fatalf("E[%d,%d] = %v, want %v", i, j, r.E[p], want)
			}
			m := 2.0
			if i == j {
				m = 1
			}
			sq += m * math.Pow(a.At(i, j)*k, 2)
			e2 += m * want * want
			p++
		}
	}
	if math.Abs(r.V-SNRBeta*sq) > 1e-15 {
		t.Fatalf("V = %v, want %v", r.V, SNRBeta*sq)
	}
	snr := (e2 - SNRBeta/(2-SNRBeta)*SNRBeta*sq) / (SNRBeta*sq - e2)
	rel := max(-1, min(1, snr/(params.Alpha*1.5)-1))
	want := max(SNREtaMin, min(SNREtaMax, 1.5*math.Exp(min(SNRGamma*1.5, SNRBeta)*rel)))
	if math.Abs(r.Eta-want) > 1e-12 {
		t.Fatalf("η = %v, want %v", r.Eta, want)
	}
}

// TestSNRHyper: η scales c_1 and c_μ (SNRRatesBoth) or c_μ alone
// (SNRRatesCMu), c_c kept, c_1 + c_μ capped at 0.9 (keeping their ratio,
// or c_1), and η = 1 is the defaults bit for bit.
func TestSNRHyper(t *testing.T) {
	h := cmaes.Hyper{C1: 0.1, CMu: 0.2, Cc: 0.3}
	r := &SNRState{Eta: 1}
	for _, rates := range []SNRRates{SNRRatesBoth, SNRRatesCMu} {
		if got := r.hyper(h, rates); got != h {
			t.Fatalf("%v, η = 1: %+v, want %+v", rates, got, h)
		}
	}
	r.Eta = 2
	if got := r.hyper(h, SNRRatesBoth); got != (cmaes.Hyper{C1: 0.2, CMu: 0.4, Cc: 0.3}) {
		t.Fatalf("both, η = 2: %+v", got)
	}
	if got := r.hyper(h, SNRRatesCMu); got != (cmaes.Hyper{C1: 0.1, CMu: 0.4, Cc: 0.3}) {
		t.Fatalf("cmu, η = 2: %+v", got)
	}
	r.Eta = 3
	got := r.hyper(h, SNRRatesBoth)
	if math.Abs(got.C1+got.CMu-Scale) > 1e-15 || math.Abs(got.CMu/got.C1-2) > 1e-12 || got.Cc != 0.3 {
		t.Fatalf("both, η = 3: %+v, want c_1 + c_μ = 0.9 in the ratio 1:2", got)
	}
	r.Eta = 5
	if got := r.hyper(h, SNRRatesCMu); got.C1 != 0.1 || math.Abs(got.CMu-0.8) > 1e-15 || got.Cc != 0.3 {
		t.Fatalf("cmu, η = 5: %+v, want c_1 = 0.1 kept and c_μ capped at 0.8", got)
	}
}

// TestSNRDefaults: a new session's rule multiplies c_μ alone, with α =
// SNRAlphaCMu and η from SNREta0CMu (table 14); SNRRatesBoth keeps the
// rule of before (α by snrAlphaOf, η from 1).
func TestSNRDefaults(t *testing.T) {
	cfg := cmaes.Config{X0: uniformX0(5, 10), Sigma0: 1, Seed: 5, MirroredFirstRun: true}
	s, err := New(Config{CMA: cfg, SNR: true})
	if err != nil {
		t.Fatal(err)
	}
	want := SNRParams{Alpha: SNRAlphaCMu, Beta: SNRBeta, EtaMax: SNREtaMax, Eta0: SNREta0CMu, Rates: SNRRatesCMu}
	if got := s.State().SNRParams; got != want {
		t.Fatalf("default parameters %+v, want %+v", got, want)
	}
	if _, eta := s.SNR(); eta != SNREta0CMu {
		t.Fatalf("η at the start %v, want %v", eta, SNREta0CMu)
	}
	d := s.Primary().Params().Hyper()
	if got := s.Primary().Hyper(); got.C1 != d.C1 || got.CMu != SNREta0CMu*d.CMu || got.Cc != d.Cc {
		t.Fatalf("first rates %+v, want c_μ = %v × the default's, %+v", got, SNREta0CMu, d)
	}
	s, err = New(Config{CMA: cfg, SNR: true, SNRParams: SNRParams{Rates: SNRRatesBoth}})
	if err != nil {
		t.Fatal(err)
	}
	want = SNRParams{Alpha: snrAlphaOf(10, true), Beta: SNRBeta, EtaMax: SNREtaMax, Eta0: 1, Rates: SNRRatesBoth}
	if got := s.State().SNRParams; got != want {
		t.Fatalf("both: parameters %+v, want %+v", got, want)
	}
	if _, err := New(Config{CMA: cfg, SNR: true, SNRParams: SNRParams{Rates: 3}}); err == nil {
		t.Fatal("rates 3 accepted")
	}
}

// TestSNRRun: on the ellipsoid the first run's η rises above 1 and stays
// in [1, 3]; each update uses η times the defaults; after a restart the
// rule is gone and the rates are the defaults.
func TestSNRRun(t *testing.T) {
	s := newSNRES(t, cmaes.Config{X0: uniformX0(5, 8), Sigma0: 1, Seed: 5,
		Restarts: cmaes.Restarts{IPOP: true, Max: 1}, Termination: cmaes.Termination{TolX: 1e-9}})
	defaults := s.Primary().Params().Hyper()
	maxEta := 1.0
	for g := 0; s.Primary().Run() == 0; g++ {
		if g > 20000 {
			t.Fatal("no restart in 20000 generations")
		}
		_, eta := s.SNR()
		if want := (&SNRState{Eta: eta}).hyper(defaults, s.snrP.Rates); s.Primary().Hyper() != want {
			t.Fatalf("generation %d: rates %+v, want η = %v times the defaults, %+v", g, s.Primary().Hyper(), eta, want)
		}
		if eta < SNREtaMin || eta > SNREtaMax {
			t.Fatalf("generation %d: η = %v", g, eta)
		}
		maxEta = max(maxEta, eta)
		step(t, s, testfn.Ellipsoid)
	}
	if maxEta < 1.5 {
		t.Fatalf("η reached %v on the ellipsoid, want above 1.5", maxEta)
	}
	if s.snr != nil || s.Primary().Hyper() != s.Primary().Params().Hyper() {
		t.Fatalf("after the restart: rule state %v, rates %+v, want none and the defaults", s.snr != nil, s.Primary().Hyper())
	}
}

// TestSNRSurvivesRestore: a state restored from a copy of its State at any
// generation, told the same values, asks the same points and stays the
// same state for 3 generations, through the restart that ends the rule
// (internal/enginecodec's round trips do the same through the encoding).
func TestSNRSurvivesRestore(t *testing.T) {
	s := newSNRES(t, cmaes.Config{X0: uniformX0(6, 4), Sigma0: 1, Seed: 6,
		Restarts: cmaes.Restarts{IPOP: true, Max: 1}, Termination: cmaes.Termination{TolX: 1e-3}})
	var twins []twin
	for g := 0; s.Primary().Stopped() == nil; g++ {
		if g > 5000 {
			t.Fatal("not stopped in 5000 generations")
		}
		X := s.Ask()
		v := make([]float64, len(X))
		for k, x := range X {
			v[k] = rosenbrock(x)
		}
		if _, err := s.Tell(v); err != nil {
			t.Fatal(err)
		}
		bits := stateBits(t, s)
		kept := twins[:0]
		for _, tw := range twins {
			if !sameRows(tw.es.Ask(), X) {
				t.Fatalf("generation %d: a restored state asks other points", g)
			}
			if _, err := tw.es.Tell(v); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(stateBits(t, tw.es), bits) {
				t.Fatalf("generation %d: a restored state is another state", g)
			}
			if tw.left--; tw.left > 0 {
				kept = append(kept, tw)
			}
		}
		twins = kept
		d, err := restoreCopy(t, s)
		if err != nil {
			t.Fatalf("generation %d: %v", g, err)
		}
		if on, eta := d.SNR(); !on || eta != must(s.SNR()) {
			t.Fatalf("generation %d: decoded rule (%v, η %v)", g, on, eta)
		}
		twins = append(twins, twin{d, 3})
	}
	if s.Primary().Run() == 0 {
		t.Fatal("no restart")
	}
}

func must(_ bool, eta float64) float64 { return eta }

// TestSNRFewerEvaluations: on the ellipsoid (n = 10, nine seeds) the rule
// reaches 10^-8 in fewer evaluations than the defaults in the median (it
// saves 12–16 % on BBOB's f2 and f10, docs/algorithm.md §2, table 9), and
// on the sphere, where the defaults are right, it costs at most 10 %.
func TestSNRFewerEvaluations(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 36 runs to 10^-8")
	}
	median := func(f func([]float64) float64, snr bool) int {
		var evals []int
		for seed := range uint64(9) {
			s, err := New(Config{CMA: cmaes.Config{X0: uniformX0(40+seed, 10), Sigma0: 1, Seed: 40 + seed}, SNR: snr})
			if err != nil {
				t.Fatal(err)
			}
			for g := 0; ; g++ {
				if g > 20000 || s.Primary().Stopped() != nil {
					t.Fatalf("seed %d (snr %v): not at 10^-8 after %d generations", seed, snr, g)
				}
				if rec := step(t, s, f); rec.Best <= 1e-8 {
					break
				}
			}
			evals = append(evals, s.Primary().Evaluations())
		}
		slices.Sort(evals)
		return evals[len(evals)/2]
	}
	ell, ellSNR := median(testfn.Ellipsoid, false), median(testfn.Ellipsoid, true)
	if float64(ellSNR) > 0.95*float64(ell) {
		t.Errorf("ellipsoid: median %d evaluations with the rule, %d without; want at least 5 %% fewer", ellSNR, ell)
	}
	sph, sphSNR := median(sphere, false), median(sphere, true)
	if float64(sphSNR) > 1.1*float64(sph) {
		t.Errorf("sphere: median %d evaluations with the rule, %d without; want at most 10 %% more", sphSNR, sph)
	}
	t.Logf("median evaluations to 1e-8: ellipsoid %d → %d, sphere %d → %d", ell, ellSNR, sph, sphSNR)
}

// TestSNRWhereItRuns: the rule runs in a first run at n ≤ SNRMaxDim, at
// every λ when no MinLambda is named (MinLambda resolves to NoLikelihood),
// below MinLambda when one is; a run that self-adapts by h_t, or a larger
// n (where the gate stays at 10n), keeps no rule state.
func TestSNRWhereItRuns(t *testing.T) {
	cases := []struct {
		name          string
		n, lam, minL  int
		want          bool
		wantMinLambda int
	}{
		{"default λ", 5, 0, 0, true, NoLikelihood},
		{"λ = 10n, no MinLambda named", 5, 50, 0, true, NoLikelihood},
		{"λ ≥ MinLambda named", 5, 50, DefaultMinLambda(5), false, DefaultMinLambda(5)},
		{"λ < MinLambda named", 5, 49, DefaultMinLambda(5), true, DefaultMinLambda(5)},
		{"n > SNRMaxDim", SNRMaxDim + 1, 0, 0, false, DefaultMinLambda(SNRMaxDim + 1)},
	}
	for _, c := range cases {
		s, err := New(Config{CMA: cmaes.Config{X0: make([]float64, c.n), Sigma0: 1, Seed: 1, Lambda: c.lam}, SNR: true, MinLambda: c.minL})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.snr != nil; got != c.want || s.Adapting() == c.want && c.n <= SNRMaxDim {
			t.Errorf("%s: rule state %v, adapting by h_t %v; want the rule %v", c.name, got, s.Adapting(), c.want)
		}
		if s.MinLambda() != c.wantMinLambda {
			t.Errorf("%s: MinLambda %d, want %d", c.name, s.MinLambda(), c.wantMinLambda)
		}
		if on, _ := s.SNR(); !on {
			t.Errorf("%s: Config.SNR lost", c.name)
		}
	}
}

// TestSNRRejectsCorruptState: a state whose η or E no run could have is
// refused by Restore.
func TestSNRRejectsCorruptState(t *testing.T) {
	s := newSNRES(t, cmaes.Config{X0: uniformX0(7, 3), Sigma0: 1, Seed: 7})
	for range 5 {
		step(t, s, sphere)
	}
	for name, spoil := range map[string]func(*SNRState){
		"η below 1": func(r *SNRState) { r.Eta = 0.5 },
		"η NaN":     func(r *SNRState) { r.Eta = math.NaN() },
		"V < 0":     func(r *SNRState) { r.V = -1 },
		"E short":   func(r *SNRState) { r.E = r.E[1:] },
	} {
		st := cloneState(s.State())
		rule := *st.SNRRule
		rule.E = slices.Clone(rule.E)
		spoil(&rule)
		st.SNRRule = &rule
		if _, err := Restore(st); err == nil {
			t.Errorf("%s: restored", name)
		}
	}
}

// TestSNRParamsRestarts: with SNRParams.SmallRestarts each of BIPOP's
// small runs starts the rule afresh at η = Eta0 and the large ones run at
// the defaults; with RestartMaxLambda a restart uses it when its λ is at
// most the bound. A state restored at any generation keeps the parameters.
func TestSNRParamsRestarts(t *testing.T) {
	for _, p := range []SNRParams{{SmallRestarts: true, Eta0: 1.5, Alpha: 0.01}, {RestartMaxLambda: 12, Beta: 0.05, EtaMax: 2}} {
		s, err := New(Config{CMA: cmaes.Config{X0: uniformX0(7, 6), Sigma0: 2, Seed: 7, Active: true,
			Restarts: cmaes.Restarts{BIPOP: true, Max: 4}, Termination: cmaes.Termination{TolX: 1e-3}}, SNR: true, SNRParams: p})
		if err != nil {
			t.Fatal(err)
		}
		runsWithRule, runsWithout := 0, 0
		for g := 0; s.Primary().Stopped() == nil; g++ {
			if g > 20000 {
				t.Fatal("not stopped in 20000 generations")
			}
			rec := step(t, s, rastrigin)
			want := s.Primary().Run() == 0 || s.Primary().Params().Lambda <= p.RestartMaxLambda ||
				p.SmallRestarts && s.Primary().Regime() == cmaes.RegimeSmall
			if (s.snr != nil) != want {
				t.Fatalf("generation %d (%s, λ %d): rule %v, want %v", g, s.Primary().Regime(), s.Primary().Params().Lambda, s.snr != nil, want)
			}
			if rec.Restarted {
				if want {
					runsWithRule++
					if s.snr.Eta != p.resolved().Eta0 || s.snr.V != 0 {
						t.Fatalf("a restart's rule starts at η %v, V %v", s.snr.Eta, s.snr.V)
					}
				} else {
					runsWithout++
				}
			}
			if g%50 == 0 {
				d, err := restoreCopy(t, s)
				if err != nil {
					t.Fatal(err)
				}
				if d.snrP != p.resolved() {
					t.Fatalf("restored parameters %+v, want %+v", d.snrP, p.resolved())
				}
			}
		}
		if runsWithRule == 0 || runsWithout == 0 {
			t.Fatalf("%+v: %d restarts with the rule, %d without; want some of each", p, runsWithRule, runsWithout)
		}
	}
}

// TestSNRParamsRefused: parameters the rule cannot run with are refused.
func TestSNRParamsRefused(t *testing.T) {
	for _, p := range []SNRParams{{Alpha: -1}, {Beta: 1}, {EtaMax: 0.5}, {Eta0: 4}, {RestartMaxLambda: -1}, {Alpha: math.Inf(1)}} {
		if _, err := New(Config{CMA: cmaes.Config{X0: []float64{1, 2}, Sigma0: 1}, SNR: true, SNRParams: p}); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
}

// TestSNRAlphaForDimension: with SNRRatesBoth a new run's default α is
// SNRAlphaFor(n) (0.01 for n from 15 to 28, else 0.02), SNRAlpha at every
// n for a mirrored first run; with the default rates (c_μ alone) it is
// SNRAlphaCMu at every n; an α the config gives is kept, and a
// state keeps the α it recorded (a session created before the rule, with
// 0.02 at n = 20, continues so).
func TestSNRAlphaForDimension(t *testing.T) {
	want := map[int]float64{2: 0.02, 10: 0.02, 14: 0.02, 15: 0.01, 20: 0.01, 28: 0.01, 29: 0.02, 40: 0.02, 100: 0.02}
	for n, a := range want {
		if got := SNRAlphaFor(n); got != a {
			t.Errorf("SNRAlphaFor(%d) = %v, want %v", n, got, a)
		}
		for _, given := range []float64{0, 0.05} {
			s, err := New(Config{CMA: cmaes.Config{X0: uniformX0(uint64(n), n), Sigma0: 2, Seed: 3}, SNR: true, SNRParams: SNRParams{Alpha: given, Rates: SNRRatesBoth}})
			if err != nil {
				t.Fatal(err)
			}
			wantA := a
			if given != 0 {
				wantA = given
			}
			if s.snrP.Alpha != wantA || s.State().SNRParams.Alpha != wantA {
				t.Errorf("n = %d, given α %v: the run's α %v, its state's %v; want %v", n, given, s.snrP.Alpha, s.State().SNRParams.Alpha, wantA)
			}
		}
	}
	for _, n := range []int{10, 20, 40} {
		for _, rates := range []SNRRates{SNRRatesBoth, SNRRatesDefault} {
			s, err := New(Config{CMA: cmaes.Config{X0: uniformX0(uint64(n), n), Sigma0: 2, Seed: 3, MirroredFirstRun: true}, SNR: true,
				SNRParams: SNRParams{Rates: rates}})
			if err != nil {
				t.Fatal(err)
			}
			want := SNRAlpha
			if rates == SNRRatesDefault {
				want = SNRAlphaCMu
			}
			if s.snrP.Alpha != want {
				t.Errorf("n = %d, mirrored first run, rates %v: α %v, want %v at every n", n, rates, s.snrP.Alpha, want)
			}
		}
	}
	s, err := New(Config{CMA: cmaes.Config{X0: uniformX0(4, 20), Sigma0: 2, Seed: 4}, SNR: true})
	if err != nil {
		t.Fatal(err)
	}
	st := cloneState(s.State())
	st.SNRParams.Alpha = SNRAlpha // as a session of before SNRAlphaFor recorded it
	d, err := Restore(st)
	if err != nil {
		t.Fatal(err)
	}
	if d.snrP.Alpha != SNRAlpha {
		t.Fatalf("restored α %v, want the recorded %v", d.snrP.Alpha, SNRAlpha)
	}
}

// TestSNRRosenbrockLambda12: the case of TestRosenbrockLambda12
// with the signal-to-noise rule at its defaults (c_μ alone, η from 2),
// active and mirrored as a new session's first run: every seed reaches
// 10^-10 within the 2·10^4 evaluations the issue gave.
func TestSNRRosenbrockLambda12(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		cfg := rosenbrockLambda12(seed, 20000)
		cfg.Active, cfg.MirroredFirstRun = true, true
		s, err := New(Config{CMA: cfg, SNR: true})
		if err != nil {
			t.Fatal(err)
		}
		maxEta := 0.0
		for s.Primary().Stopped() == nil {
			step(t, s, rosenbrock)
			_, eta := s.SNR()
			maxEta = max(maxEta, eta)
		}
		if b, _ := s.Primary().Best(); b.F > 1e-10 {
			t.Errorf("seed %d: stopped by %v at f = %g after %d evaluations (largest η %v)",
				seed, s.Primary().Stopped(), b.F, s.Primary().Evaluations(), maxEta)
		}
	}
}

// TestParseSNRRates: every name String gives parses back, and nothing else.
func TestParseSNRRates(t *testing.T) {
	for _, r := range []SNRRates{SNRRatesDefault, SNRRatesBoth, SNRRatesCMu} {
		if got, err := ParseSNRRates(r.String()); err != nil || got != r {
			t.Errorf("ParseSNRRates(%q) = %v, %v, want %v", r.String(), got, err, r)
		}
	}
	for _, bad := range []string{"", "c1", "CMU", "SNRRates(3)"} {
		if _, err := ParseSNRRates(bad); err == nil {
			t.Errorf("ParseSNRRates(%q): no error", bad)
		}
	}
}
