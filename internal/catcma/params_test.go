package catcma

import (
	"math"
	"testing"
)

// TestParams checks the derived quantities against the paper's formulas
// (arXiv:2504.07884v5, §3 and §4; Hansen's tutorial for the Gaussian).
func TestParams(t *testing.T) {
	sp := Space{X: [][2]float64{{0, 1}, {0, 1}}, Z: [][]float64{{0, 1, 2}}, C: []int{3, 5}}
	p, err := newParams(sp, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := 4 + int(math.Floor(3*math.Log(5))); p.Lambda != want || p.Mu != want/2 {
		t.Errorf("λ, μ = %d, %d; want %d, %d", p.Lambda, p.Mu, want, want/2)
	}
	pos, neg := 0.0, 0.0
	for _, w := range p.Weights {
		if w > 0 {
			pos += w
		} else {
			neg += w
		}
	}
	if math.Abs(pos-1) > 1e-15 || neg >= 0 {
		t.Errorf("positive weights sum to %v, negative to %v", pos, neg)
	}
	n := 3.0
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"c1", p.C1, 2 / ((n+1.3)*(n+1.3) + p.MuEff)},
		{"c_sigma", p.CSigma, (p.MuEff + 2) / (n + p.MuEff + 5)},
		{"c_c", p.Cc, (4 + p.MuEff/n) / (n + 4 + 2*p.MuEff/n)},
		{"alpha", p.Alpha, 1 - math.Pow(0.73, 1.0/3)},
		{"q_min[0]", p.QMin[0], (1 - math.Pow(0.73, 1.0/3)) / 2},
		{"q_min[1]", p.QMin[1], (1 - math.Pow(0.73, 1.0/3)) / 4},
	} {
		if math.Abs(c.got-c.want) > 1e-15*math.Abs(c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if p.ParamSum != 2+4 {
		t.Errorf("Σ(K − 1) = %d, want 6", p.ParamSum)
	}
}

// TestChi2PPF: the quantile inverts the χ²₁ distribution function.
func TestChi2PPF(t *testing.T) {
	for _, q := range []float64{1e-8, 0.1, 0.5, 0.9, 0.95, 1 - 1e-8} {
		x := chi2PPF(q)
		if got := math.Erf(math.Sqrt(x / 2)); math.Abs(got-q) > 1e-14 {
			t.Errorf("cdf(ppf(%v)) = %v", q, got)
		}
	}
}
