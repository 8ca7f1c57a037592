package sepcma

import (
	"math"
	"testing"
)

func TestParams(t *testing.T) {
	for _, tc := range []struct{ n, lambda int }{{2, 0}, {10, 0}, {100, 0}, {100000, 0}, {2, 100}, {20, 400}} {
		for _, r := range []Rates{RatesSepCMA, RatesPaper} {
			p, err := NewParams(tc.n, tc.lambda, r)
			if err != nil {
				t.Fatal(err)
			}
			nf := float64(tc.n)
			if tc.lambda == 0 && p.Lambda != 4+int(math.Floor(3*math.Log(nf))) {
				t.Errorf("n=%d: λ = %d", tc.n, p.Lambda)
			}
			var sum float64
			for i, w := range p.Weights {
				sum += w
				if i > 0 && !(w < p.Weights[i-1]) {
					t.Errorf("weights not decreasing: %v", p.Weights)
				}
			}
			closeTo(t, "Σw", sum, 1, 1e-15)
			if !(p.C1 > 0 && p.CMu > 0 && p.C1+p.CMu <= 1) {
				t.Errorf("n=%d λ=%d %v: c_1 = %g, c_μ = %g, want positive with c_1 + c_μ ≤ 1", tc.n, tc.lambda, r, p.C1, p.CMu)
			}
			sep := (nf + 2) / 3 * cCov(nf, p.MuW)
			switch r {
			case RatesPaper:
				// Ros and Hansen: c_cov^sep = (n + 2)/3 c_cov, split 1/μ_cov : 1 − 1/μ_cov.
				closeTo(t, "c_1 + c_μ", p.C1+p.CMu, math.Min(1, sep), 1e-14)
				closeTo(t, "c_1 μ_w", p.C1*p.MuW, math.Min(1, sep), 1e-14)
			case RatesSepCMA:
				closeTo(t, "c_1", p.C1, 2/((nf+1.3)*(nf+1.3)+p.MuW), 1e-15)
				closeTo(t, "c_μ", p.CMu, math.Min(sep, 1-p.C1), 1e-15)
			}
		}
	}
	if _, err := NewParams(0, 0, RatesSepCMA); err == nil {
		t.Error("n = 0 accepted")
	}
	if _, err := NewParams(3, 1, RatesSepCMA); err == nil {
		t.Error("λ = 1 accepted")
	}
	if _, err := NewParams(3, 0, ratesCount); err == nil {
		t.Error("unknown rates accepted")
	}
}

// TestRatesScaleWithN: the reason for sep-CMA-ES's rates, (n + 2)/3 times
// full CMA-ES's: at n = 1000 c_μ is about 334 times c_cov.
func TestRatesScaleWithN(t *testing.T) {
	p, _ := NewParams(1000, 0, RatesPaper)
	if got := (p.C1 + p.CMu) / cCov(1000, p.MuW); math.Abs(got-334) > 1e-9 {
		t.Errorf("c_cov^sep/c_cov = %v, want 334", got)
	}
}
