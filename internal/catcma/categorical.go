package catcma

import "math"

// updateCategorical is _update_categorical: the natural-gradient step of
// the categorical parameters with the ASNG's adaptive step size (Akimoto,
// Shirakawa, Yoshinari, Uchida, Saito, Nishida, "Adaptive Stochastic
// Natural Gradient Method for One-Shot Neural Architecture Search", ICML
// 2019, Algorithm 1 and Appendix B), then the margin q ≥ q_min (CatCMA,
// Hamano et al., GECCO 2024, §4.3). sc holds the categories best first.
func (o *CatCMA) updateCategorical(sc [][]int) {
	p, s := o.Params, &o.State
	// The natural gradient Σ_{i≤μ} w_i (c_i − q), c_i one-hot.
	ngrad := make([][]float64, p.NCa)
	for j, q := range s.Q {
		ngrad[j] = make([]float64, len(q))
		for i := range p.Mu {
			for k := range q {
				onehot := 0.0
				if sc[i][j] == k {
					onehot = 1
				}
				ngrad[j][k] += p.Weights[i] * (onehot - q[k])
			}
		}
	}
	// F^{1/2} times the gradient, in the first K − 1 parameters of each
	// variable (Appendix B).
	sqF := make([]float64, 0, p.ParamSum)
	for j, q := range s.Q {
		kk := len(q) - 1
		qK := q[kk]
		sum := 0.0
		for k := range kk {
			sum += ngrad[j][k]
		}
		for k := range kk {
			v := 1.0 / math.Sqrt(q[k]) * ngrad[j][k]
			v += math.Sqrt(q[k]) * sum / (qK + math.Sqrt(qK))
			sqF = append(sqF, v)
		}
	}
	pnorm := 0.0
	for _, v := range sqF {
		pnorm += v * v
	}
	pnorm = math.Sqrt(pnorm)
	epsQ := s.TrustDelta / (pnorm + eps)
	for j, q := range s.Q {
		for k := range q {
			q[k] += epsQ * ngrad[j][k]
		}
	}

	// ASNG's step-size adaptation.
	s.TrustDelta = deltaInit / s.Delta
	beta := s.TrustDelta / math.Sqrt(float64(p.ParamSum))
	c := math.Sqrt(beta * (2 - beta))
	ss := 0.0
	for i := range s.S {
		s.S[i] = (1-beta)*s.S[i] + c*sqF[i]/pnorm
		ss += s.S[i] * s.S[i]
	}
	s.Gamma = (1-beta)*(1-beta)*s.Gamma + beta*(2-beta)
	s.Delta *= math.Exp(beta * (s.Gamma - ss/alphaSNR))

	// The margin of each categorical distribution.
	for j, q := range s.Q {
		qmin, kf := p.QMin[j], float64(len(q))
		sum := 0.0
		for k := range q {
			q[k] = math.Max(q[k], qmin)
			sum += q[k]
		}
		tmp := sum - qmin*kf
		for k := range q {
			q[k] -= (sum - 1) * (q[k] - qmin) / tmp
		}
		sum = 0
		for _, v := range q {
			sum += v
		}
		for k := range q {
			q[k] /= sum
		}
	}
}
