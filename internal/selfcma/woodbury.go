package selfcma

import (
	"math"

	"github.com/selfcma/selfcma/internal/cmaes"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// h_t by the matrix determinant lemma and the Woodbury identity
// (docs/algorithm.md §2). The replayed C' (cmaes.Step.Replay) is
//
//	C' = a C + Σ_j s_j u_j u_jᵀ
//
// with C = C^{t−1} and a, s_j depending on θ, the u_j not: p_c' lies in the
// span of p_c^{t−1} and y_w, C_μ is Σ w_i y_i y_iᵀ over the μ best steps,
// and active CMA-ES's C_μ^- is Σ w°_j (n/‖C^{−1/2} y_j‖²) y_j y_jᵀ over the
// others. With one Cholesky factor C = RᵀR per generation, W = R^{−T}U and
// Z = R^{−T}V (V's columns the points of generation t around m^t), the
// Gram matrices G = WᵀW, H = WᵀZ and q_k = ‖z_k‖² are θ-free. For each θ,
// with the columns scaled by √|s_j| (G̃, H̃) and J = diag(sign s_j),
//
//	d_k² = v_kᵀ C'^{−1} v_k = (q_k − h̃_kᵀ (aJ + G̃)^{−1} h̃_k) / a,
//
// an O(k³ + k²λ) step for the rank k = μ + 1 (active: λ + 1) in place of
// a Cholesky factor of C' (O(n³)) and a solve (O(n²λ)). aJ + G̃ is
// factored LDLᵀ without pivoting, the positive columns first: C' is
// positive definite iff the signs of D are J's (the Schur complement of
// the positive block, by Haynsworth's inertia additivity), which is the
// test in place of the Cholesky factor's.

// replayBasis is the θ-free part of h_t for one generation.
type replayBasis struct {
	n, lambda int // dimension; points of generation t
	m         int // columns: p_c, y_w, then the steps y_j
	mu        int // steps of the positive weights
	g         []float64
	h         []float64 // m×λ
	q         []float64 // λ
	w         []float64 // s_j / c_μ for the steps: w_i, or w°_j n/‖C^{−1/2}y_j‖² (≤ 0)
	prev      *cmaes.Step
	alpha     cmaes.Params // the weights of the step's (n, λ)
}

// newReplayBasis builds the basis of the replay of prev for the points of
// cur, or returns nil when h_t must go by the Cholesky factor of C': C^{t−1}
// not positive definite by rounding, or an active step that left injected
// points out of C_μ^- (the Step does not say which).
func newReplayBasis(prev, cur *cmaes.Step) *replayBasis {
	lambda, n := cur.X.Dims()
	pl, _ := prev.X.Dims()
	p, err := cmaes.NewParamsActive(n, pl, prev.Active)
	if err != nil {
		return nil
	}
	neg := 0
	if prev.Active {
		var sum float64
		for _, w := range p.WeightsNeg {
			sum += w
		}
		if sum != prev.WNegSum {
			return nil
		}
		neg = len(p.WeightsNeg)
	}
	b := &replayBasis{n: n, lambda: lambda, mu: p.Mu, m: 2 + p.Mu + neg, prev: prev, alpha: p}

	// R from C^{t−1}'s upper triangle.
	c := prev.C.RawSymmetric()
	r := make([]float64, n*n)
	for i := range n {
		copy(r[i*n+i:i*n+n], c.Data[i*c.Stride+i:i*c.Stride+n])
	}
	rt := blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: n, Stride: n, Data: r}
	if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: r}); !ok {
		return nil
	}

	// T = [U | V], n × (m + λ), column j a vector; then R^{−T} T in place.
	cols := b.m + lambda
	t := make([]float64, n*cols)
	x := prev.X.RawMatrix()
	for i := range n {
		row := t[i*cols : (i+1)*cols]
		row[0], row[1] = prev.PC[i], prev.Yw[i]
		for j := range p.Mu + neg {
			k := prev.Order[j]
			row[2+j] = (x.Data[k*x.Stride+i] - prev.Mean[i]) / prev.Sigma
		}
		for k := range lambda {
			row[b.m+k] = cur.X.At(k, i) - cur.Mean[i]
		}
	}
	tm := blas64.General{Rows: n, Cols: cols, Stride: cols, Data: t}
	blas64.Trsm(blas.Left, blas.Trans, 1, rt, tm)

	// G and H: the first m rows of TᵀT; q: the norms of V's columns.
	gh := blas64.General{Rows: b.m, Cols: cols, Stride: cols, Data: make([]float64, b.m*cols)}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, blas64.General{Rows: n, Cols: b.m, Stride: cols, Data: t}, tm, 0, gh)
	b.g = make([]float64, b.m*b.m)
	b.h = make([]float64, b.m*lambda)
	for i := range b.m {
		copy(b.g[i*b.m:(i+1)*b.m], gh.Data[i*cols:i*cols+b.m])
		copy(b.h[i*lambda:(i+1)*lambda], gh.Data[i*cols+b.m:(i+1)*cols])
	}
	b.q = make([]float64, lambda)
	for i := range n {
		for k, z := range t[i*cols+b.m : (i+1)*cols] {
			b.q[k] += z * z
		}
	}

	b.w = make([]float64, p.Mu+neg)
	copy(b.w, p.Weights)
	for j, w := range p.WeightsNeg[:neg] {
		// ‖C^{−1/2} y_j‖² = y_jᵀ C^{−1} y_j = G_jj; a step of norm 0 adds
		// nothing (cmaes's cMuNegInto).
		jj := 2 + p.Mu + j
		if norm2 := b.g[jj*b.m+jj]; norm2 > 0 && w != 0 {
			b.w[p.Mu+j] = w * float64(n) / norm2
		}
	}
	for _, v := range b.g {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
	}
	return b
}

// lowRank holds one θ's buffers of the Woodbury step.
type lowRank struct {
	scale []float64 // √|s_j| of the k columns
	sign  []float64 // J
	k     []float64 // aJ + G̃, then L (unit lower) and D on the diagonal
	y     []float64 // H̃, then L^{−1} H̃
	t     []float64
}

// distances sets d (length λ) to the squared Mahalanobis distances of the
// points of generation t under the C' of θ, divided by nothing: d_k² as
// above. It reports false if C' is not positive definite.
func (b *replayBasis) distances(theta cmaes.Hyper, lr *lowRank, d []float64) bool {
	prev := b.prev
	k := b.m - 1 // p_c' replaces p_c and y_w
	if len(lr.scale) != k || len(lr.y) != k*b.lambda {
		*lr = lowRank{scale: make([]float64, k), sign: make([]float64, k), k: make([]float64, k*k),
			y: make([]float64, k*b.lambda), t: make([]float64, k)}
	}

	// a, the scale of each column and p_c' = α0 p_c + α1 y_w (Step.Replay).
	a := 1 - theta.C1 - theta.CMu
	cn := 0.0
	if prev.Active {
		alpha := b.alpha.AlphaNeg(theta)
		delta := (1 - prev.HSigma) * theta.Cc * (2 - theta.Cc)
		a = 1 + theta.C1*delta - theta.C1 - theta.CMu*(1+alpha*prev.WNegSum)
		cn = theta.CMu * alpha
	}
	if !(a > 0) {
		return false
	}
	a0 := 1 - theta.Cc
	a1 := prev.HSigma * math.Sqrt(theta.Cc*(2-theta.Cc)*prev.MuW)
	lr.scale[0], lr.sign[0] = math.Sqrt(theta.C1), 1
	for j, w := range b.w {
		s := theta.CMu * w
		if j >= b.mu {
			s = cn * w
		}
		lr.scale[1+j], lr.sign[1+j] = math.Sqrt(math.Abs(s)), 1
		if s < 0 {
			lr.sign[1+j] = -1
		}
	}

	// aJ + G̃ (lower triangle) and H̃; basis column 2+j is column 1+j.
	m, g := b.m, b.g
	s0 := lr.scale[0]
	for i := range k {
		si := lr.scale[i]
		row := lr.k[i*k : i*k+i+1]
		for j := range row {
			sj := lr.scale[j]
			switch {
			case i == 0:
				row[j] = s0 * s0 * (a0*a0*g[0] + 2*a0*a1*g[1] + a1*a1*g[m+1])
			case j == 0:
				row[j] = si * s0 * (a0*g[(1+i)*m] + a1*g[(1+i)*m+1])
			default:
				row[j] = si * sj * g[(1+i)*m+1+j]
			}
		}
		row[i] += a * lr.sign[i]
		y := lr.y[i*b.lambda : (i+1)*b.lambda]
		if i == 0 {
			h0, h1 := b.h[:b.lambda], b.h[b.lambda:2*b.lambda]
			for c := range y {
				y[c] = s0 * (a0*h0[c] + a1*h1[c])
			}
		} else {
			hi := b.h[(1+i)*b.lambda : (2+i)*b.lambda]
			for c := range y {
				y[c] = si * hi[c]
			}
		}
	}

	// LDLᵀ without pivoting, row by row: t_j = L_ij d_j.
	for i := range k {
		ri := lr.k[i*k : i*k+i+1]
		for j := range i {
			rj := lr.k[j*k : j*k+j]
			v := ri[j]
			for p, l := range rj {
				v -= lr.t[p] * l
			}
			lr.t[j] = v
			ri[j] = v / lr.k[j*k+j]
		}
		di := ri[i]
		for p := range i {
			di -= lr.t[p] * ri[p]
		}
		if !(di*lr.sign[i] > 0) {
			return false
		}
		ri[i] = di
	}

	// Y = L^{−1} H̃ by rows; then h̃ᵀ(aJ + G̃)^{−1}h̃ = Σ_i y_i²/d_i.
	for c := range d {
		d[c] = 0
	}
	for i := range k {
		yi := lr.y[i*b.lambda : (i+1)*b.lambda]
		for p, l := range lr.k[i*k : i*k+i] {
			if l == 0 {
				continue
			}
			yp := lr.y[p*b.lambda : (p+1)*b.lambda]
			for c := range yi {
				yi[c] -= l * yp[c]
			}
		}
		inv := 1 / lr.k[i*k+i]
		for c, v := range yi {
			d[c] += v * v * inv
		}
	}
	for c := range d {
		d[c] = (b.q[c] - d[c]) / a
	}
	return true
}
