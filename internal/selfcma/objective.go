package selfcma

import (
	"cmp"
	"math"
	"slices"

	"github.com/selfcma/selfcma/internal/cmaes"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// workspace holds the buffers of one goroutine evaluating h_t.
type workspace struct {
	pc   []float64
	c    *mat.SymDense
	v    []float64 // n×λ, column k = x_k − m, then solved in place
	d    []float64
	rank []int
	tr   trsm

	// basis, when set, is the generation's θ-free part of h_t by the
	// Woodbury identity (woodbury.go), and h goes that way.
	basis *replayBasis
	lr    lowRank
}

func (ws *workspace) size(n, lambda int) {
	if len(ws.pc) != n || len(ws.d) != lambda {
		ws.pc = make([]float64, n)
		ws.c = mat.NewSymDense(n, nil)
		ws.v = make([]float64, lambda*n)
		ws.d = make([]float64, lambda)
		ws.rank = make([]int, lambda)
	}
}

// h is Algorithm 3: the mean rank, among the Mahalanobis distances of the
// points of generation t under the replayed C' (largest distance = rank 1),
// of the μ points that were best on f. Larger is better: the best points are
// the most likely ones. It returns false if C' is not positive definite.
//
// For active CMA-ES the replay is the active update (cmaes.Step.Replay):
// C_μ^- with its Mahalanobis norms under C^{t−1}, as the update used them,
// and its weights scaled for θ by min(α_μ^-, α_μeff^-, α_posdef^-), so C' is
// positive definite for every feasible θ (docs/algorithm.md §2) and false
// comes only from rounding in a nearly singular C'. The ranking is of all λ
// points, the μ best being those of the positive weights, as without.
//
// C' comes from the kept C_μ in O(n²) (cmaes.Step.Replay); the distances
// from a Cholesky factor C' = UᵀU and one triangular solve of the λ×n block,
// d_k² = ‖U^{−T}(x_k − m^t)‖². σ is not needed: only the ranking counts.
// The factor and the solve run register-blocked kernels that give the bits
// of gonum's lapack64.Potrf and blas64.Trsm (cholesky.go, trsm.go): sessions
// continue bit for bit, and the ranks cannot change.
func (ws *workspace) h(theta cmaes.Hyper, prev, cur *cmaes.Step, mu int) (float64, bool) {
	lambda, n := cur.X.Dims()
	ws.size(n, lambda)
	if ws.basis != nil {
		if !ws.basis.distances(theta, &ws.lr, ws.d) {
			return 0, false
		}
	} else if !ws.cholesky(theta, prev, cur) {
		return 0, false
	}
	return ws.rankScore(cur, mu)
}

// cholesky sets ws.d to the squared distances of the points of generation
// t under C' by its Cholesky factor (Algorithm 3, lines 2–4), as above.
func (ws *workspace) cholesky(theta cmaes.Hyper, prev, cur *cmaes.Step) bool {
	lambda, n := cur.X.Dims()

	// Algorithm 3, lines 2–3: replay the update t−1 → t with θ.
	prev.Replay(theta, ws.pc, ws.c)
	c := ws.c.RawSymmetric()
	var ok, packed bool
	if trsmFast && haveAVX {
		// lapack64.Potrf's bits (cholesky.go). On a zero in U it gives up
		// part-way, and gonum factors C' replayed afresh. (Without AVX,
		// gonum's SSE2 is faster than the Go kernels.)
		ok, packed = ws.tr.cholesky(c.Data, n, c.Stride, true)
		if !packed {
			prev.Replay(theta, ws.pc, ws.c)
		}
	}
	if !packed {
		_, ok = lapack64.Potrf(c)
	}
	if !ok {
		return false
	}
	u := blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: n, Stride: c.Stride, Data: c.Data}

	// Line 4: d_k for the points x_k of generation t around m^t. V is n×λ,
	// column k = x_k − m; solving Uᵀ W = V leaves column k of W =
	// U^{−T}(x_k − m), whose squared norm is d_k² (rows of length λ keep the
	// solve's inner loops long for small n).
	// The transpose goes by 4 points at a time, each read along its row.
	x := cur.X.RawMatrix()
	mean := cur.Mean[:n]
	k := 0
	for ; k+4 <= lambda; k += 4 {
		x0 := x.Data[k*x.Stride : k*x.Stride+n]
		x1 := x.Data[(k+1)*x.Stride : (k+1)*x.Stride+n]
		x2 := x.Data[(k+2)*x.Stride : (k+2)*x.Stride+n]
		x3 := x.Data[(k+3)*x.Stride : (k+3)*x.Stride+n]
		for i, m := range mean {
			vi := ws.v[i*lambda+k : i*lambda+k+4]
			vi[0], vi[1], vi[2], vi[3] = x0[i]-m, x1[i]-m, x2[i]-m, x3[i]-m
		}
	}
	for ; k < lambda; k++ {
		row := x.Data[k*x.Stride : k*x.Stride+n]
		for i, m := range mean {
			ws.v[i*lambda+k] = row[i] - m
		}
	}
	ws.tr.solve(u, ws.v, lambda, packed, true) // blas64.Trsm(Left, Trans, 1, u, V), bit for bit
	for k := range ws.d {
		ws.d[k] = 0
	}
	for i := range n {
		for k, w := range ws.v[i*lambda : (i+1)*lambda] {
			ws.d[k] += w * w
		}
	}
	return true
}

// rankScore is Algorithm 3, lines 5–6, from the distances in ws.d.
func (ws *workspace) rankScore(cur *cmaes.Step, mu int) (float64, bool) {
	lambda := len(ws.d)
	for _, d := range ws.d {
		if math.IsNaN(d) {
			return 0, false
		}
	}

	// Line 5: ranks of d in decreasing order (rank 1 = largest), ties by
	// index.
	for k := range ws.rank {
		ws.rank[k] = k
	}
	slices.SortFunc(ws.rank, func(a, b int) int {
		if c := cmp.Compare(ws.d[b], ws.d[a]); c != 0 {
			return c
		}
		return a - b
	})
	pos := ws.v[:lambda] // reuse as rank-of-point storage
	for r, k := range ws.rank {
		pos[k] = float64(r + 1)
	}

	// Line 6: h = Σ_{i≤μ} w_sel,i p_{i:λ} with w_sel,i = 1/μ.
	var h float64
	for _, k := range cur.Order[:mu] {
		h += pos[k]
	}
	return h / float64(mu), true
}
