package catcma

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// decompose sets B and D from C and rebuilds C = B diag(D²) Bᵀ, after
// symmetrising C and flooring negative eigenvalues at eps: the reference's
// _eigen_decomposition. It reports false, leaving the state as it was, if
// the decomposition fails.
func (o *CatCMA) decompose() bool {
	s, n := &o.State, o.Params.NMi
	sym := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			sym.SetSym(i, j, (s.C[i*n+j]+s.C[j*n+i])/2)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(sym, true) {
		return false
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	for i := range n {
		for j := range n {
			s.B[i*n+j] = vecs.At(i, j)
		}
		d2 := vals[i]
		if d2 < 0 {
			d2 = eps
		}
		s.D[i] = math.Sqrt(d2)
	}
	o.rebuildC(s.C)
	return true
}

// rebuildC writes B diag(D²) Bᵀ into dst (N_mi × N_mi).
func (o *CatCMA) rebuildC(dst []float64) {
	s, n := &o.State, o.Params.NMi
	for i := range n {
		for j := i; j < n; j++ {
			c := 0.0
			for k := range n {
				c += s.B[i*n+k] * (s.D[k] * s.D[k]) * s.B[j*n+k]
			}
			dst[i*n+j], dst[j*n+i] = c, c
		}
	}
}

// updateGaussian is _update_gaussian: sv holds the samples v best first,
// after integer centering. The mean, σ, the paths and C follow Hansen's
// tutorial (arXiv:1604.00772), with active CMA's negative weights; the
// samples are taken back to N(m, σ² C) by A⁻¹ first.
func (o *CatCMA) updateGaussian(sv [][]float64) {
	p, s := o.Params, &o.State
	if o.rates != nil { // an experiment's rates (rates_test.go); nil in every run
		p.C1, p.CMu, p.Weights = o.rates.C1, o.rates.CMu, o.rates.Weights
	}
	n, lam := p.NMi, p.Lambda
	y := make([][]float64, lam)
	for k := range lam {
		y[k] = make([]float64, n)
		for i := range n {
			x := (sv[k][i]-s.Mean[i])/s.A[i] + s.Mean[i] // ~ N(m, σ² C)
			y[k][i] = (x - s.Mean[i]) / s.Sigma          // ~ N(0, C)
		}
	}
	// C^{-1/2} = B D⁻¹ Bᵀ of the C that sampled the batch.
	cInvSqrt := make([]float64, n*n)
	for i := range n {
		for j := range n {
			v := 0.0
			for k := range n {
				v += s.B[i*n+k] * (1 / s.D[k]) * s.B[j*n+k]
			}
			cInvSqrt[i*n+j] = v
		}
	}
	mulVec := func(v []float64) []float64 {
		out := make([]float64, n)
		for i := range n {
			for j := range n {
				out[i] += cInvSqrt[i*n+j] * v[j]
			}
		}
		return out
	}

	// Selection and recombination: m ← m + c_m σ y_w.
	yw := make([]float64, n)
	for i := range n {
		for k := range p.Mu {
			yw[i] += y[k][i] * p.Weights[k]
		}
	}
	for i := range n {
		s.Mean[i] += p.Cm * s.Sigma * yw[i]
	}

	// Step-size control.
	cy := mulVec(yw)
	a := math.Sqrt(p.CSigma * (2 - p.CSigma) * p.MuEff)
	norm := 0.0
	for i := range n {
		s.PSigma[i] = (1-p.CSigma)*s.PSigma[i] + a*cy[i]
		norm += s.PSigma[i] * s.PSigma[i]
	}
	norm = math.Sqrt(norm)
	s.Sigma *= math.Exp((p.CSigma / p.DSigma) * (norm/p.ChiN - 1))
	s.Sigma = math.Min(s.Sigma, sigmaMax)

	// Covariance matrix adaptation; h_σ with the reference's g + 1.
	left := norm / math.Sqrt(1-math.Pow(1-p.CSigma, float64(2*(s.Generation+1))))
	right := (1.4 + 2/float64(n+1)) * p.ChiN
	hSigma := 0.0
	if left < right {
		hSigma = 1
	}
	b := hSigma * math.Sqrt(p.Cc*(2-p.Cc)*p.MuEff)
	for i := range n {
		s.PC[i] = (1-p.Cc)*s.PC[i] + b*yw[i]
	}
	wio := make([]float64, lam)
	sumW := 0.0
	for k, w := range p.Weights {
		sumW += w
		wio[k] = w
		if w < 0 {
			z := mulVec(y[k])
			nz := 0.0
			for _, v := range z {
				nz += v * v
			}
			wio[k] = w * (float64(n) / (nz + eps))
		}
	}
	deltaH := (1 - hSigma) * p.Cc * (2 - p.Cc)
	decay := 1 + p.C1*deltaH - p.C1 - p.CMu*sumW
	for i := range n {
		for j := range n {
			rankMu := 0.0
			for k := range lam {
				rankMu += wio[k] * (y[k][i] * y[k][j])
			}
			s.C[i*n+j] = decay*s.C[i*n+j] + p.C1*(s.PC[i]*s.PC[j]) + p.CMu*rankMu
		}
	}

	// Post-processing: keep the smallest eigenvalue of σ²C above 1e-30.
	o.decompose()
	dmin := math.Inf(1)
	for _, d := range s.D {
		dmin = math.Min(dmin, d)
	}
	s.Sigma = math.Max(s.Sigma, math.Sqrt(minEigenvalue/dmin))
}
