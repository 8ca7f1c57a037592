package cmaes

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Step is what the update t → t+1 used, kept so that it can be replayed with
// other learning rates (Algorithm 3, line 3). The mean, p_σ, h_σ and σ of a
// replay do not depend on (c_1, c_μ, c_c); only p_c and C do.
type Step struct {
	C      *mat.SymDense // C^t, before the update
	PC     []float64     // p_c^t
	Yw     []float64     // y_w^t = (m^{t+1} − m^t)/σ^t
	HSigma float64       // h_σ of the update (Algorithm 1, line 10)
	CMu    *mat.SymDense // C_μ^t (Algorithm 1, line 12)
	MuW    float64
	Hyper  Hyper      // the rates the update used
	Sigma  float64    // σ^t
	PSigma []float64  // p_σ^{t+1}
	Mean   []float64  // m^t, the mean generation t was sampled around
	X      *mat.Dense // λ×n: the points of generation t (genotypes) as the update used them, row k = x_k (an injected point's step clipped: inject.go)
	Order  []int      // indices of X sorted by fitness, best first
}

func newStep(n, lambda int) Step {
	return Step{
		C:      mat.NewSymDense(n, nil),
		PC:     make([]float64, n),
		Yw:     make([]float64, n),
		CMu:    mat.NewSymDense(n, nil),
		PSigma: make([]float64, n),
		Mean:   make([]float64, n),
		X:      mat.NewDense(lambda, n, nil),
		Order:  make([]int, lambda),
	}
}

// Replay computes, in O(n²), p_c and C after the update with the rates h in
// place of the ones used (Algorithm 1, lines 11 and 13):
//
//	p_c' = (1 − c_c) p_c^t + h_σ √(c_c(2 − c_c) μ_w) y_w
//	C'   = (1 − c_1 − c_μ) C^t + c_1 p_c' p_c'ᵀ + c_μ C_μ^t
//
// into pc (length n) and c (n×n). The Step is not changed.
func (s *Step) Replay(h Hyper, pc []float64, c *mat.SymDense) {
	n := len(s.PC)
	k := s.HSigma * math.Sqrt(h.Cc*(2-h.Cc)*s.MuW)
	for i := range n {
		pc[i] = (1-h.Cc)*s.PC[i] + k*s.Yw[i]
	}
	old, cmu, dst := s.C.RawSymmetric(), s.CMu.RawSymmetric(), c.RawSymmetric()
	a := 1 - h.C1 - h.CMu
	for i := range n {
		o := old.Data[i*old.Stride : i*old.Stride+n]
		m := cmu.Data[i*cmu.Stride : i*cmu.Stride+n]
		d := dst.Data[i*dst.Stride : i*dst.Stride+n]
		r := h.C1 * pc[i]
		for j := i; j < n; j++ {
			d[j] = a*o[j] + r*pc[j] + h.CMu*m[j]
		}
	}
}

// CopyFrom makes s a deep copy of src, reusing s's memory where the sizes
// allow.
func (s *Step) CopyFrom(src *Step) {
	n, _ := src.C.Dims()
	l, _ := src.X.Dims()
	if s.C == nil || s.C.SymmetricDim() != n || s.X.RawMatrix().Rows != l {
		*s = newStep(n, l)
	}
	s.C.CopySym(src.C)
	s.CMu.CopySym(src.CMu)
	s.X.Copy(src.X)
	copy(s.PC, src.PC)
	copy(s.Yw, src.Yw)
	copy(s.PSigma, src.PSigma)
	copy(s.Mean, src.Mean)
	copy(s.Order, src.Order)
	s.HSigma, s.MuW, s.Hyper, s.Sigma = src.HSigma, src.MuW, src.Hyper, src.Sigma
}

// LastStep returns what the last update used, or nil if the last Tell made
// no update (the ES was just created, restored, restarted, or every
// evaluation of the generation failed). It is valid until the next Tell.
func (e *ES) LastStep() *Step {
	if !e.stepValid {
		return nil
	}
	return &e.lastStep
}

// cMuInto sets cmu to C_μ = Σ_{i≤μ} w_i y_i y_iᵀ, y_i = (x_{i:λ} − m)/σ
// (Algorithm 1, line 12), formed as Y Yᵀ where column i of the n×μ matrix
// ym is √w_i y_i. x is λ×n, row k = x_k; order ranks its rows, best first.
// The update and the decoding of a Step without its C_μ both compute C_μ
// here, so the decoded C_μ is the update's bit for bit.
func cMuInto(cmu *mat.SymDense, ym *mat.Dense, x *mat.Dense, order []int, mean []float64, sigma float64, weights []float64) {
	n := len(mean)
	xr, yr := x.RawMatrix(), ym.RawMatrix()
	for i, w := range weights {
		row := xr.Data[order[i]*xr.Stride : order[i]*xr.Stride+n]
		sw := math.Sqrt(w)
		for j := range n {
			yr.Data[j*yr.Stride+i] = sw * (row[j] - mean[j]) / sigma
		}
	}
	cmu.SymOuterK(1, ym)
}
