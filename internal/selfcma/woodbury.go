package selfcma

import (
	"math"

	"github.com/selfcma/selfcma/internal/cmaes"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
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

	// Without active CMA-ES, the positive block in the eigenbasis of
	// Ĝ = W^{1/2} G_yy W^{1/2} = Q Λ Qᵀ (W = diag(w_i)): ĥ = Qᵀ W^{1/2} H_y
	// (μ×λ), b̂ = Qᵀ W^{1/2} G_{y,·} for p_c and y_w.
	lam           []float64
	hhat          []float64
	bpc, byw      []float64
	gpp, gpw, gww float64
	hpc, hyw      []float64
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
	var tr trsm
	ok, packed := false, false
	if trsmFast && haveAVX {
		// The kernels of h_t's Cholesky path (cholesky.go, trsm.go).
		if ok, packed = tr.cholesky(r, n, n, true); !packed {
			for i := range n {
				copy(r[i*n+i:i*n+n], c.Data[i*c.Stride+i:i*c.Stride+n])
			}
		}
	}
	if !packed {
		_, ok = lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: r})
	}
	if !ok {
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
	tr.solve(rt, t, cols, packed, true)

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
	if !prev.Active && !b.eigen() {
		return nil
	}
	return b
}

// eigen sets the eigenbasis fields of a basis without active CMA-ES.
func (b *replayBasis) eigen() bool {
	m, mu, lambda := b.m, b.mu, b.lambda
	sw := make([]float64, mu)
	for i, w := range b.w[:mu] {
		sw[i] = math.Sqrt(w)
	}
	gh := mat.NewSymDense(mu, nil)
	for i := range mu {
		for j := i; j < mu; j++ {
			gh.SetSym(i, j, sw[i]*sw[j]*b.g[(2+i)*m+2+j])
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(gh, true) {
		return false
	}
	b.lam = eig.Values(nil)
	var q mat.Dense
	eig.VectorsTo(&q)
	// Rows of W^{1/2}[G_{y,p}, G_{y,w}, H_y], then Qᵀ times them.
	rhs := mat.NewDense(mu, 2+lambda, nil)
	for i := range mu {
		row := rhs.RawRowView(i)
		row[0], row[1] = sw[i]*b.g[(2+i)*m], sw[i]*b.g[(2+i)*m+1]
		for c, v := range b.h[(2+i)*lambda : (3+i)*lambda] {
			row[2+c] = sw[i] * v
		}
	}
	var out mat.Dense
	out.Mul(q.T(), rhs)
	b.bpc, b.byw = make([]float64, mu), make([]float64, mu)
	b.hhat = make([]float64, mu*lambda)
	for i := range mu {
		row := out.RawRowView(i)
		b.bpc[i], b.byw[i] = row[0], row[1]
		copy(b.hhat[i*lambda:(i+1)*lambda], row[2:])
	}
	b.gpp, b.gpw, b.gww = b.g[0], b.g[1], b.g[m+1]
	b.hpc, b.hyw = b.h[:lambda], b.h[lambda:2*lambda]
	for _, v := range out.RawMatrix().Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// distancesEigen is distances without active CMA-ES: C' = aC + c_1 p_c'
// p_c'ᵀ + c_μ Σ w_i y_i y_iᵀ, so with M = G + a diag(1/s) (s = c_1, c_μ w_i)
// h̃ᵀ(aJ + G̃)^{−1}h̃ = hᵀM^{−1}h. The y block of M is W^{−1/2}(Ĝ + tI)
// W^{−1/2}, t = a/c_μ, whose inverse is diagonal in the eigenbasis, e_i =
// 1/(λ_i + t); p_c' borders it (its Schur complement den). O(μλ) per θ.
func (b *replayBasis) distancesEigen(theta cmaes.Hyper, lr *lowRank, d []float64) bool {
	prev := b.prev
	a := 1 - theta.C1 - theta.CMu
	if !(a > 0) {
		return false
	}
	mu := b.mu
	if len(lr.scale) != mu || len(lr.t) != len(d) {
		*lr = lowRank{scale: make([]float64, mu), sign: make([]float64, mu), t: make([]float64, len(d))}
	}
	e, beta, r := lr.scale, lr.sign, lr.t
	for c := range d {
		d[c], r[c] = 0, 0
	}
	a0 := 1 - theta.Cc
	a1 := prev.HSigma * math.Sqrt(theta.Cc*(2-theta.Cc)*prev.MuW)
	var bab float64
	if theta.CMu > 0 {
		t := a / theta.CMu
		for i, l := range b.lam {
			e[i] = 1 / (l + t)
			beta[i] = a0*b.bpc[i] + a1*b.byw[i]
			bab += beta[i] * beta[i] * e[i]
			be := beta[i] * e[i]
			for c, h := range b.hhat[i*b.lambda : (i+1)*b.lambda] {
				he := h * e[i]
				d[c] += h * he
				r[c] += h * be
			}
		}
	}
	if theta.C1 > 0 {
		den := a0*a0*b.gpp + 2*a0*a1*b.gpw + a1*a1*b.gww + a/theta.C1 - bab
		if !(den > 0) {
			return false
		}
		for c := range d {
			v := a0*b.hpc[c] + a1*b.hyw[c] - r[c]
			d[c] += v * v / den
		}
	}
	for c := range d {
		d[c] = (b.q[c] - d[c]) / a
	}
	return true
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
	if !prev.Active {
		return b.distancesEigen(theta, lr, d)
	}
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

// NumericsWoodbury is self-CMA-ES's numerics version 5: version 3
// (cmaes.NumericsDC) in both CMA-ES, and h_t by the Woodbury identity in
// place of a Cholesky factor of each C'. Config.CMA.Numerics names it; the
// primary then runs cmaes.NumericsDC, and State.Woodbury keeps it.
const NumericsWoodbury = 5

// resolveNumerics sets c.Numerics to the primary's version and reports
// whether h_t goes by the Woodbury identity: only where Config.CMA.Numerics
// names it. A new session (Numerics 0) does not get it: its cost grows with
// k³, k = μ + 1 (active: λ + 1), and the default gate runs h_t only at
// λ ≥ 10n, where k > n and a Cholesky factor of each C' costs less. It pays
// at λ = 100 from n = 200 (active: 400), the paper's setting at large n
// (docs/algorithm.md §2, "h_t by the determinant lemma and Woodbury").
func resolveNumerics(c *cmaes.Config) bool {
	if c.Numerics == NumericsWoodbury {
		c.Numerics = cmaes.NumericsDC
		return true
	}
	return false
}

// Numerics is the ES's numerics version: NumericsWoodbury, or the
// primary's (docs/algorithm.md §3).
func (s *ES) Numerics() int {
	if s.woodbury {
		return NumericsWoodbury
	}
	return s.primary.Config().Numerics
}
