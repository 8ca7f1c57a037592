package cmaes

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/selfcma/selfcma/internal/symeig"
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

	// Active CMA-ES only (Params.Active; zero otherwise): the negative part
	// of the update, which the Mahalanobis norms under C^t (its B and D,
	// not kept) determine, so it is kept whole.
	Active bool
	// CMuNeg is C_μ^- = Σ_{i>μ} w°_i (n/‖C^{−1/2} y_i‖²) y_i y_iᵀ with w° =
	// Params.WeightsNeg (Σ = −1), y_i = (x_{i:λ} − m)/σ and C^{−1/2} = B
	// D^{−1} Bᵀ of time t. Injected points are left out (pycma's
	// CMA_active_injected = 0).
	CMuNeg *mat.SymDense
	// WNegSum is Σ w°_i over the points in CMuNeg: −1, or less negative
	// when injected points were left out.
	WNegSum float64
	// AlphaMuWNeg is Params.AlphaMuWNeg of the Step's (n, λ).
	AlphaMuWNeg float64
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
// or, for active CMA-ES (Hansen's tutorial, arXiv:1604.00772v2, eq. 47,
// as pycma computes it),
//
//	C' = (1 + c_1 δ(h_σ) − c_1 − c_μ Σw) C^t + c_1 p_c' p_c'ᵀ + c_μ C_μ^t + c_μ α C_μ^-
//
// with δ(h_σ) = (1 − h_σ) c_c (2 − c_c), α = alphaNeg(h) the scale of the
// negative weights for these rates and Σw = 1 + α WNegSum, into pc (length
// n) and c (n×n). The Step is not changed.
func (s *Step) Replay(h Hyper, pc []float64, c *mat.SymDense) {
	n := len(s.PC)
	k := s.HSigma * math.Sqrt(h.Cc*(2-h.Cc)*s.MuW)
	for i := range n {
		pc[i] = (1-h.Cc)*s.PC[i] + k*s.Yw[i]
	}
	if s.Active {
		s.replayActive(h, pc, c)
		return
	}
	old, cmu, dst := s.C.RawSymmetric(), s.CMu.RawSymmetric(), c.RawSymmetric()
	a := 1 - h.C1 - h.CMu
	triangleRows(n, 5, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			o := old.Data[i*old.Stride : i*old.Stride+n]
			m := cmu.Data[i*cmu.Stride : i*cmu.Stride+n]
			d := dst.Data[i*dst.Stride : i*dst.Stride+n]
			r := h.C1 * pc[i]
			for j := i; j < n; j++ {
				d[j] = a*o[j] + r*pc[j] + h.CMu*m[j]
			}
		}
	})
}

// replayActive is Replay's C' for active CMA-ES, given p_c' in pc.
func (s *Step) replayActive(h Hyper, pc []float64, c *mat.SymDense) {
	n := len(s.PC)
	alpha := alphaNeg(h, n, s.AlphaMuWNeg)
	delta := (1 - s.HSigma) * h.Cc * (2 - h.Cc)
	a := 1 + h.C1*delta - h.C1 - h.CMu*(1+alpha*s.WNegSum)
	cn := h.CMu * alpha
	old, cmu, neg, dst := s.C.RawSymmetric(), s.CMu.RawSymmetric(), s.CMuNeg.RawSymmetric(), c.RawSymmetric()
	triangleRows(n, 7, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			o := old.Data[i*old.Stride : i*old.Stride+n]
			m := cmu.Data[i*cmu.Stride : i*cmu.Stride+n]
			g := neg.Data[i*neg.Stride : i*neg.Stride+n]
			d := dst.Data[i*dst.Stride : i*dst.Stride+n]
			r := h.C1 * pc[i]
			for j := i; j < n; j++ {
				d[j] = a*o[j] + r*pc[j] + h.CMu*m[j] + cn*g[j]
			}
		}
	})
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
	s.Active, s.WNegSum, s.AlphaMuWNeg = src.Active, src.WNegSum, src.AlphaMuWNeg
	switch {
	case src.CMuNeg == nil:
		s.CMuNeg = nil
	case s.CMuNeg == nil || s.CMuNeg.SymmetricDim() != n:
		s.CMuNeg = mat.NewSymDense(n, nil)
		fallthrough
	default:
		s.CMuNeg.CopySym(src.CMuNeg)
	}
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

// CMuInto sets cmu to the C_μ that the Step's points, order, mean and σ
// give with the weights of its (n, λ, Active), computed as the update
// computes it (Algorithm 1, line 12), so bit for bit the update's C_μ for a
// Step an update made. ym is an n×μ buffer (nil: one is allocated). It
// reports false, leaving cmu as it was, if the Step's sizes give no
// weights.
func (s *Step) CMuInto(cmu *mat.SymDense, ym *mat.Dense) bool {
	l, n := s.X.Dims()
	p, err := NewParamsActive(n, l, s.Active)
	if err != nil || len(s.Mean) != n || len(s.Order) != l || cmu.SymmetricDim() != n {
		return false
	}
	if ym == nil {
		ym = mat.NewDense(n, p.Mu, nil)
	}
	cMuInto(cmu, ym, s.X, s.Order, s.Mean, s.Sigma, p.Weights)
	return true
}

// cMuInto sets cmu to C_μ = Σ_{i≤μ} w_i y_i y_iᵀ, y_i = (x_{i:λ} − m)/σ
// (Algorithm 1, line 12), formed as Y Yᵀ where column i of the n×μ matrix
// ym is √w_i y_i. x is λ×n, row k = x_k; order ranks its rows, best first.
// The update and Step.CMuInto (for a Step stored without its C_μ) both
// compute C_μ here, so the recomputed C_μ is the update's bit for bit.
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
	symOuterK(cmu, 1, ym)
}

// cMuNegInto sets neg to C_μ^- = Σ_{i>μ} w°_i (n/‖C^{−1/2} y_i‖²) y_i y_iᵀ
// (Step.CMuNeg) for active CMA-ES, formed as −Y Yᵀ where column j of the
// n×(λ−μ) matrix ym is √(|w°_{μ+j}| n/‖C^{−1/2} y‖²) y. b and d are B and D
// of C^t; the points k < injected (injected ones) are left out, and so is a
// y of norm 0 (its y yᵀ is 0). It returns Σ w° over the points not left out
// as injected. nw holds the scratch (y and bty of at least (λ−μ)·n).
func cMuNegInto(neg *mat.SymDense, ym *mat.Dense, x *mat.Dense, order []int, mean []float64, sigma float64, weightsNeg []float64, b *mat.Dense, d []float64, injected int, nw *negWork) float64 {
	n, k := len(mean), len(weightsNeg)
	mu := len(order) - k
	xr, yr, bm := x.RawMatrix(), ym.RawMatrix(), b.RawMatrix()
	// Row j of Y is y_{μ+j}ᵀ; row j of Y B is (Bᵀ y)ᵀ, each entry summed
	// over the rows of B in order, as an axpy of each row of B into a
	// zeroed vector sums it (the loop this product replaced: the same
	// bits of ‖C^{−1/2} y‖²).
	for j := range k {
		row := xr.Data[order[mu+j]*xr.Stride : order[mu+j]*xr.Stride+n]
		yj := nw.y[j*n : (j+1)*n]
		for i := range n {
			yj[i] = (row[i] - mean[i]) / sigma
		}
	}
	nw.prod.Mul(k, n, n, nw.y, n, bm.Data, bm.Stride, nw.bty, n)
	var sum float64
	for j, w := range weightsNeg {
		for i := range n {
			yr.Data[i*yr.Stride+j] = 0
		}
		if order[mu+j] < injected {
			continue
		}
		sum += w
		// ‖C^{−1/2} y‖² = ‖D^{−1} Bᵀ y‖², summed as in the update's p_σ.
		bty := nw.bty[j*n : (j+1)*n]
		var norm2 float64
		for l := range n {
			v := bty[l] / d[l]
			norm2 += v * v
		}
		if !(norm2 > 0) || w == 0 {
			continue
		}
		sw := math.Sqrt(-w * float64(n) / norm2)
		row := xr.Data[order[mu+j]*xr.Stride : order[mu+j]*xr.Stride+n]
		for i := range n {
			yr.Data[i*yr.Stride+j] = sw * (row[i] - mean[i]) / sigma
		}
	}
	symOuterK(neg, -1, ym)
	return sum
}

// negWork is cMuNegInto's scratch: the points' steps y and Bᵀ y, row by
// row, and the product (the ES lends its sampling buffers, free during
// the update).
type negWork struct {
	y, bty []float64
	prod   *symeig.Product
}
