package catcma

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/mixedfn"
)

// Does self-CMA-ES's rate adaptation carry over to the continuous and
// integer part of CatCMA with margin? (issue 26; docs/mixed.md, "Rate
// adaptation"). At CatCMA's default λ, internal/selfcma adapts c_1 and c_μ
// by the signal-to-noise rule (snr.go: η ∈ [1, 3] times the default rates;
// h_t runs only at λ ≥ 10n, where it is measured to pay). This experiment
// runs that rule, and fixed factors η of c_1 and c_μ (the rule's range: an
// upper bound on what choosing η can gain), on the Gaussian's update
// through the unexported CatCMA.rates hook, and counts evaluations to
// mixedfn.Target. RATES_TABLE=1 prints docs' table (15 seeds, n = 9, 30;
// RATES_SEEDS=k and RATES_N=9 for other runs):
//
//	RATES_TABLE=1 go test -count=1 -run TestRatesExperiment -v -timeout 30m ./internal/catcma/

// rateRule sets the rates of the next update and learns from the last.
type rateRule interface {
	before(o *CatCMA) // before Tell: sets o.rates
	after(o *CatCMA)  // after Tell
}

// scaledRates returns p's Gaussian rates with c_1 and c_μ times eta (their
// sum capped at 0.9, as selfcma's SNR rule caps it) and the negative
// weights' α_min recomputed from them, as newParams computes it, so that
// the active update keeps C positive definite.
func scaledRates(p Params, eta float64) *Params {
	q := p
	q.C1, q.CMu = eta*p.C1, eta*p.CMu
	if s := q.C1 + q.CMu; s > 0.9 {
		q.C1, q.CMu = q.C1*0.9/s, q.CMu*0.9/s
	}
	l, n := float64(p.Lambda), float64(p.NMi)
	wp := make([]float64, p.Lambda)
	neg := 0.0
	for i := range wp {
		wp[i] = math.Log((l+1)/2) - math.Log(float64(i+1))
		if wp[i] < 0 {
			neg -= wp[i]
		}
	}
	muEffMinus := sumSq(wp[p.Mu:])
	minAlpha := math.Min(1+q.C1/q.CMu, math.Min(1+2*muEffMinus/(p.MuEff+2), (1-q.C1-q.CMu)/(n*q.CMu)))
	q.Weights = slices.Clone(p.Weights)
	for i, w := range wp {
		if w < 0 {
			q.Weights[i] = minAlpha / neg * w
		}
	}
	return &q
}

// fixedRates is η fixed for the whole run (η = 1: CatCMA's own rates).
type fixedRates float64

func (e fixedRates) before(o *CatCMA) {
	if e != 1 {
		o.rates = scaledRates(o.Params, float64(e))
	}
}
func (fixedRates) after(*CatCMA) {}

// snrRates is selfcma's signal-to-noise rule (snr.go, its defaults): E and
// V, moving averages of C's update at η = 1 in the coordinates of C^t and
// of its squared norm, move η by exp(min(γη, β) clip(SNR/(αη) − 1, −1, 1)),
// η ∈ [1, 3].
type snrRates struct {
	eta, v float64
	e      []float64
	c0     []float64 // C^t
	b0, d0 []float64 // its B and D
}

func (r *snrRates) before(o *CatCMA) {
	s := &o.State
	r.c0, r.b0, r.d0 = slices.Clone(s.C), slices.Clone(s.B), slices.Clone(s.D)
	o.rates = scaledRates(o.Params, r.eta)
}

func (r *snrRates) after(o *CatCMA) {
	const alpha, beta, gamma = 0.02, 0.03, 0.1
	n := o.Params.NMi
	if r.e == nil {
		r.e = make([]float64, n*(n+1)/2)
	}
	isq := make([]float64, n*n) // C^{−1/2} = B D⁻¹ Bᵀ of C^t
	for i := range n {
		for j := range n {
			for k := range n {
				isq[i*n+j] += r.b0[i*n+k] / r.d0[k] * r.b0[j*n+k]
			}
		}
	}
	dc := make([]float64, n*n)
	for i := range dc {
		dc[i] = o.State.C[i] - r.c0[i]
	}
	delta := mul(n, mul(n, isq, dc), isq)
	k := 1 / (r.eta * math.Sqrt2)
	var sq, e2 float64
	q := 0
	for i := range n {
		for j := i; j < n; j++ {
			x := (delta[i*n+j] + delta[j*n+i]) / 2 * k
			r.e[q] = (1-beta)*r.e[q] + beta*x
			m := 2.0
			if i == j {
				m = 1
			}
			sq += m * x * x
			e2 += m * r.e[q] * r.e[q]
			q++
		}
	}
	r.v = (1-beta)*r.v + beta*sq
	snr := (e2 - beta/(2-beta)*r.v) / (r.v - e2)
	if math.IsNaN(snr) {
		return
	}
	rel := max(-1, min(1, snr/(alpha*r.eta)-1))
	r.eta = max(1, min(3, r.eta*math.Exp(min(gamma*r.eta, beta)*rel)))
}

func mul(n int, a, b []float64) []float64 {
	c := make([]float64, n*n)
	for i := range n {
		for k := range n {
			for j := range n {
				c[i*n+j] += a[i*n+k] * b[k*n+j]
			}
		}
	}
	return c
}

// solveRates runs CatCMA (the reference's defaults, no should_stop) with
// the rule on p until the best value reaches mixedfn.Target or maxEvals;
// the evaluations (maxEvals + 1 when not reached) and the last η.
func solveRates(t testing.TB, p mixedfn.Problem, seed uint64, maxEvals int, rule rateRule) (int, float64) {
	x, z, c := p.Space()
	o, err := New(Config{Space: Space{X: x, Z: z, C: c}, Seed: seed, Termination: Termination{NoShouldStop: true}})
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]float64, o.Params.Lambda)
	evals := 0
	for evals < maxEvals {
		for i, cand := range o.Ask() {
			vals[i] = p.F(cand.X, cand.Z, cand.C)
			evals++
			if vals[i] <= mixedfn.Target {
				return evals, etaOf(rule)
			}
		}
		rule.before(o)
		if err := o.Tell(vals); err != nil {
			t.Fatal(err)
		}
		rule.after(o)
	}
	return maxEvals + 1, etaOf(rule)
}

func etaOf(r rateRule) float64 {
	switch r := r.(type) {
	case fixedRates:
		return float64(r)
	case *snrRates:
		return r.eta
	}
	return math.NaN()
}

// TestRatesExperiment: η = 1 through the hook is CatCMA bit for bit; every
// rule solves SphereIntCOM-9 within its budget. RATES_TABLE=1 prints the
// table of docs/mixed.md.
func TestRatesExperiment(t *testing.T) {
	p := mixedfn.Problems(9)[0]
	plain := func(seed uint64) []float64 {
		x, z, c := p.Space()
		o, err := New(Config{Space: Space{X: x, Z: z, C: c}, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]float64, o.Params.Lambda)
		for range 30 {
			for i, cand := range o.Ask() {
				vals[i] = p.F(cand.X, cand.Z, cand.C)
			}
			o.rates = scaledRates(o.Params, 1)
			if err := o.Tell(vals); err != nil {
				t.Fatal(err)
			}
			o.rates = nil
		}
		return append(slices.Clone(o.State.Mean), o.State.Sigma)
	}
	want, _ := solveRates(t, p, 1, 20000*9, fixedRates(1))
	x, z, c := p.Space()
	ref, _ := New(Config{Space: Space{X: x, Z: z, C: c}, Seed: 3})
	vals := make([]float64, ref.Params.Lambda)
	for range 30 {
		for i, cand := range ref.Ask() {
			vals[i] = p.F(cand.X, cand.Z, cand.C)
		}
		if err := ref.Tell(vals); err != nil {
			t.Fatal(err)
		}
	}
	if got := plain(3); !slices.Equal(got, append(slices.Clone(ref.State.Mean), ref.State.Sigma)) {
		t.Fatalf("η = 1 through the hook: mean and σ %v, want CatCMA's %v", got, ref.State.Mean)
	}
	for _, rule := range []rateRule{fixedRates(2), &snrRates{eta: 1}} {
		if got, _ := solveRates(t, p, 1, 20000*9, rule); got > 20000*9 {
			t.Errorf("%T: %s not solved in %d evaluations (η = 1: %d)", rule, p.Name, 20000*9, want)
		}
	}
	if os.Getenv("RATES_TABLE") == "" {
		return
	}
	rules := []struct {
		name string
		mk   func() rateRule
	}{
		{"η = 1 (CatCMA)", func() rateRule { return fixedRates(1) }},
		{"η = 1.5", func() rateRule { return fixedRates(1.5) }},
		{"η = 2", func() rateRule { return fixedRates(2) }},
		{"η = 3", func() rateRule { return fixedRates(3) }},
		{"SNR rule", func() rateRule { return &snrRates{eta: 1} }},
	}
	seeds, dims := 15, []int{9, 30}
	if v := os.Getenv("RATES_SEEDS"); v != "" {
		if _, err := fmt.Sscan(v, &seeds); err != nil || seeds < 1 {
			t.Fatalf("RATES_SEEDS=%q: want a count", v)
		}
	}
	if v := os.Getenv("RATES_N"); v != "" {
		dims = dims[:1]
		if _, err := fmt.Sscan(v, &dims[0]); err != nil || dims[0] < 3 {
			t.Fatalf("RATES_N=%q: want a dimension ≥ 3", v)
		}
	}
	optunaProblemTable(t, seeds)
	var head []string
	for _, r := range rules {
		head = append(head, r.name)
	}
	fmt.Printf("| problem | %s |\n|---|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(rules)))
	for _, n := range dims {
		for _, p := range mixedfn.Problems(n) {
			var cells []string
			var base float64
			for k, r := range rules {
				ev := make([]float64, seeds)
				etas := make([]float64, seeds)
				reached := 0
				for seed := range seeds {
					e, eta := solveRates(t, p, uint64(seed), 20000*n, r.mk())
					ev[seed], etas[seed] = float64(e), eta
					if e <= 20000*n {
						reached++
					}
				}
				slices.Sort(ev)
				slices.Sort(etas)
				med := median(ev)
				cell := fmt.Sprintf("%.0f (%d/%d)", med, reached, seeds)
				if k == 0 {
					base = med
				} else {
					cell += fmt.Sprintf(" ×%.2f", med/base)
				}
				if _, ok := r.mk().(*snrRates); ok {
					cell += fmt.Sprintf(", final η %.2f", median(etas))
				}
				cells = append(cells, cell)
			}
			fmt.Printf("| %s | %s |\n", p.Name, strings.Join(cells, " | "))
		}
	}
}

// optunaProblem is scripts/optuna_mixed_bench.py's com problem in the
// space SelfCmaSampler makes of it (x: lr as ln lr, x0, x1, x2; z: k as
// ln k, n0, n1, s; c: c0, c1), σ0 0.35 as the sampler's.
func optunaProblem() (Space, func(x, z []float64, c []int) float64) {
	var sp Space
	sp.X = [][2]float64{{math.Log(1e-5), math.Log(1e-1)}, {-2, 2}, {-2, 2}, {-2, 2}}
	var lnk, n, st []float64
	for k := 1; k <= 1000; k++ {
		lnk = append(lnk, math.Log(float64(k)))
	}
	for v := -5; v <= 5; v++ {
		n = append(n, float64(v))
	}
	for k := range 11 {
		st = append(st, min(float64(k)*0.1, 1))
	}
	sp.Z = [][]float64{lnk, n, n, st}
	sp.C = []int{4, 4}
	f := func(x, z []float64, c []int) float64 {
		v := []float64{x[1], x[2], x[3], z[1], z[2]}
		r := 0.0
		for i := range 4 {
			r += 100*(v[i+1]-v[i]*v[i])*(v[i+1]-v[i]*v[i]) + (1-v[i])*(1-v[i])
		}
		lr, k := math.Log10(math.Exp(x[0])), math.Log10(math.Round(math.Exp(z[0])))
		r += (lr+3)*(lr+3) + (k-2)*(k-2) + 10*(z[3]-0.3)*(z[3]-0.3)
		for _, ci := range c {
			if ci != 0 {
				r++
			}
		}
		return r
	}
	return sp, f
}

// optunaProblemTable prints the median best value after 300 and 500
// evaluations on optunaProblem, CatCMA's rates against the SNR rule.
func optunaProblemTable(t *testing.T, seeds int) {
	sp, f := optunaProblem()
	fmt.Printf("| optuna_mixed_bench com, σ0 0.35, %d seeds | best after 300 | after 500 |\n|---|---|---|\n", seeds)
	for _, r := range []struct {
		name string
		mk   func() rateRule
	}{{"η = 1 (CatCMA)", func() rateRule { return fixedRates(1) }}, {"SNR rule", func() rateRule { return &snrRates{eta: 1} }}} {
		b300, b500 := make([]float64, seeds), make([]float64, seeds)
		for seed := range seeds {
			o, err := New(Config{Space: sp, Sigma: 0.35, Seed: uint64(seed), Termination: Termination{NoShouldStop: true}})
			if err != nil {
				t.Fatal(err)
			}
			rule := r.mk()
			vals := make([]float64, o.Params.Lambda)
			best, evals := math.Inf(1), 0
			for evals < 500 {
				for i, cand := range o.Ask() {
					vals[i] = f(cand.X, cand.Z, cand.C)
					if evals < 500 {
						best = min(best, vals[i])
					}
					evals++
					if evals == 300 {
						b300[seed] = best
					}
				}
				rule.before(o)
				if err := o.Tell(vals); err != nil {
					t.Fatal(err)
				}
				rule.after(o)
			}
			b500[seed] = best
		}
		fmt.Printf("| %s | %.3g | %.3g |\n", r.name, median(b300), median(b500))
	}
}
