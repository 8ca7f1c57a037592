package sepcma

import "math"

// maxSigmaOverD bounds σ/max √C_ii, as cmaes's: beyond it the scale moves
// from σ into C and p_c exactly (σ x = (σ/s)(s x)). SepCMA has no such
// bound; without it, on Rosenbrock (BBOB f8, n = 20) C shrank towards
// 10^−24 while σ grew, until tol_up_sigma stopped every run.
const maxSigmaOverD = 1e10

// cFloor replaces a negative C_ii in D = √C, as SepCMA's _EPS (C stays
// non-negative: its decay factor 1 − c_1 − c_μ is, Params).
const cFloor = 1e-8

// update moves the distribution by the ranked batch: sep-CMA-ES's update
// (Ros and Hansen 2008, Sect. 2: CMA-ES's with C kept diagonal), line for
// line as SepCMA.tell. It returns false, leaving the state as it was, if a
// non-finite value would enter it. O(μn).
func (e *ES) update(order []int) bool {
	p, s, sc := e.p, &e.s, &e.sc
	n := p.N
	m, sigma := s.Mean, s.Sigma
	x := e.updatePoints()

	// y_i = (x_{i:λ} − m)/σ; y_w = Σ w_i y_i (tutorial eq. 41); and the
	// diagonal of the rank-μ matrix, Σ w_i y_i² (eq. 47's C_μ, diagonal).
	yw, rankMu := sc.yw, sc.rankMu
	clear(yw)
	clear(rankMu)
	var sumW float64
	for i, w := range p.Weights {
		xr := x[order[i]*n : (order[i]+1)*n]
		for j := range xr {
			y := (xr[j] - m[j]) / sigma
			yw[j] += w * y
			rankMu[j] += w * (y * y)
		}
		sumW += w
	}

	// m ← m + c_m σ y_w, c_m = 1 (eqs. 41, 54).
	mNew := sc.mean
	for j := range mNew {
		mNew[j] = m[j] + sigma*yw[j]
	}

	// p_σ ← (1 − c_σ) p_σ + √(c_σ(2 − c_σ) μ_w) C^{−1/2} y_w (eq. 43),
	// C^{−1/2} = D^{−1} with D of the C that sampled the batch.
	cs := math.Sqrt(p.CSigma * (2 - p.CSigma) * p.MuW)
	ps := sc.pSigma
	var ps2 float64
	for j := range ps {
		ps[j] = (1-p.CSigma)*s.PSigma[j] + cs*(yw[j]/e.d[j])
		ps2 += ps[j] * ps[j]
	}
	psNorm := math.Sqrt(ps2)

	// σ ← σ exp((c_σ/d_σ)(‖p_σ‖/E‖N(0, I)‖ − 1)) (eq. 44), at most sigmaMax.
	sigmaNew := math.Min(sigma*math.Exp(p.CSigma/p.DSigma*(psNorm/p.ChiN-1)), sigmaMax)

	// h_σ (tutorial p. 28). SepCMA counts the generation from 1 and then
	// adds one more: the exponent is 2(t + 2) for the t-th update from 0
	// (cmaes uses the tutorial's 2(t + 1)); followed, to be SepCMA's.
	hSigma := 0.0
	if psNorm/math.Sqrt(1-math.Pow(1-p.CSigma, 2*float64(s.T+2))) < (1.4+2/float64(n+1))*p.ChiN {
		hSigma = 1
	}

	// p_c ← (1 − c_c) p_c + h_σ √(c_c(2 − c_c) μ_w) y_w (eq. 45).
	cc := math.Sqrt(p.Cc * (2 - p.Cc) * p.MuW)
	pc := sc.pc
	for j := range pc {
		pc[j] = (1-p.Cc)*s.PC[j] + hSigma*cc*yw[j]
	}

	// C ← (1 + c_1 δ(h_σ) − c_1 − c_μ Σw) C + c_1 p_c² + c_μ Σ w_i y_i²,
	// δ(h_σ) = (1 − h_σ) c_c(2 − c_c) (eq. 47 and p. 28), on the diagonal
	// only: the sep-CMA-ES of Ros and Hansen.
	delta := (1 - hSigma) * p.Cc * (2 - p.Cc)
	decay := 1 + p.C1*delta - p.C1 - p.CMu*sumW
	cNew := sc.c
	for j := range cNew {
		cNew[j] = decay*s.C[j] + p.C1*(pc[j]*pc[j]) + p.CMu*rankMu[j]
	}

	if !finite(mNew) || !finite(ps) || !finite(pc) || !finite(cNew) || !(sigmaNew > 0) || math.IsNaN(sigmaNew) {
		return false
	}
	copy(s.Mean, mNew)
	copy(s.PSigma, ps)
	copy(s.PC, pc)
	copy(s.C, cNew)
	s.Sigma = sigmaNew
	s.T++
	e.setD()
	e.lastHSigma = hSigma
	e.boundSigma()
	return true
}

// boundSigma moves the scale s = σ/max D from σ into C and p_c when σ
// exceeds maxSigmaOverD·max D (cmaes's safeguard).
func (e *ES) boundSigma() {
	s := &e.s
	maxD := maxOf(e.d)
	if !(s.Sigma > maxSigmaOverD*maxD) {
		return
	}
	f := s.Sigma / maxD
	s.Sigma /= f
	for i := range s.C {
		s.C[i] *= f * f
		s.PC[i] *= f
	}
	e.setD()
}

// setD sets D = √C, C_ii < 0 read as cFloor (SepCMA's _eigen_decomposition).
func (e *ES) setD() {
	for j, c := range e.s.C {
		if c < 0 {
			c = cFloor
		}
		e.d[j] = math.Sqrt(c)
	}
}

func finite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}
