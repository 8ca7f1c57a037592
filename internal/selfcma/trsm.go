package selfcma

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// The triangular solve of h_t (Algorithm 3, line 4): Uᵀ W = V in place, for
// the upper Cholesky factor U (n×n) and V (n×λ, row-major, stride λ).
//
// It gives bit for bit what blas64.Trsm(blas.Left, blas.Trans, 1, U, V)
// gives, because it does the same floating-point operations in the same
// order for every entry. gonum's Dtrsm (Left, Upper, Trans, NonUnit,
// α = 1) runs k = 0, …, n−1: row k of B is multiplied by 1/u_kk (one
// division, then a multiplication per entry), then for each i > k with
// u_ki ≠ 0, row i of B gets f64.AxpyUnitary(−u_ki, row k, row i), that is
// b_ic ← (b_kc · (−u_ki)) + b_ic, rounded after the multiplication and after
// the addition (SSE2, no fused multiply–add). So each entry is
//
//	w_ic = ((…((v_ic + (−u_0i)·w_0c) + (−u_1i)·w_1c) + …) + (−u_{i−1,i})·w_{i−1,c}) · (1/u_ii)
//
// with k ascending, each product and sum rounded, and the term of a zero
// u_ki left out. Here the sums for 4 rows × 8 columns are kept in registers
// while k runs (trsm_amd64.s); which entries are computed together changes
// nothing in any entry's sequence. Where U has a zero above the diagonal,
// the solve is gonum's: adding the left-out term could change a result
// (∞·0 is NaN, −0 + 0 is +0).

// trsmRows is the number of rows of W solved together.
const trsmRows = 4

// trsm holds a solve's packed factor: for the block of rows i0 … i0+3,
// panel entry 4k+r is −u_{k,i0+r} for k < i0+r (the multipliers of row
// i0+r, k ascending; 0 elsewhere), and rinv_i = 1/u_ii.
type trsm struct {
	panel []float64
	rinv  []float64
}

// panelOffset is where the panel of the block starting at row i0 begins.
func panelOffset(i0 int) int {
	b := i0 / trsmRows
	return trsmRows * trsmRows * b * (b + 1) / 2
}

// resize makes room for the panels and rinv of an n×n factor.
func (t *trsm) resize(n int) {
	nblock := (n + trsmRows - 1) / trsmRows * trsmRows
	if size := panelOffset(nblock); cap(t.panel) < size {
		t.panel = make([]float64, size)
	} else {
		t.panel = t.panel[:size]
	}
	if cap(t.rinv) < n {
		t.rinv = make([]float64, n)
	}
	t.rinv = t.rinv[:n]
}

// group is the panel of the block of rows starting at i0.
func (t *trsm) group(i0 int) []float64 {
	return t.panel[panelOffset(i0):panelOffset(i0+trsmRows)]
}

// packGroup fills entries k ∈ [lo, hi) of the panel of the block starting
// at row i0 from the upper triangle of a (n×n, stride lda), 0 where k ≥ i
// or i ≥ n, and reports whether no multiplier is zero.
func (t *trsm) packGroup(a []float64, lda, n, i0, lo, hi int) bool {
	p := t.group(i0)
	k := lo
	if i0+trsmRows <= n {
		// Rows above the block: 4 multipliers each.
		for ; k < min(hi, i0); k++ {
			u := a[k*lda+i0 : k*lda+i0+trsmRows]
			if u[0] == 0 || u[1] == 0 || u[2] == 0 || u[3] == 0 {
				return false
			}
			pk := p[trsmRows*k : trsmRows*k+trsmRows]
			pk[0], pk[1], pk[2], pk[3] = -u[0], -u[1], -u[2], -u[3]
		}
	}
	for ; k < hi; k++ {
		pk := p[trsmRows*k : trsmRows*k+trsmRows]
		for r := range pk {
			i := i0 + r
			if k >= i || i >= n {
				pk[r] = 0
				continue
			}
			u := a[k*lda+i]
			if u == 0 {
				return false
			}
			pk[r] = -u
		}
	}
	return true
}

// pack fills the panels and rinv from U and reports whether U has no zero
// above the diagonal.
func (t *trsm) pack(u blas64.Triangular) bool {
	n := u.N
	t.resize(n)
	for i0 := 0; i0 < n; i0 += trsmRows {
		if !t.packGroup(u.Data, u.Stride, n, i0, 0, i0+trsmRows) {
			return false
		}
	}
	for i := range n {
		t.rinv[i] = 1 / u.Data[i*u.Stride+i]
	}
	return true
}

// solve overwrites v (n×λ, stride λ) with U^{−T} v, U upper triangular
// with a non-unit diagonal, the bits of blas64.Trsm(Left, Trans, 1, u, v).
// packed says t holds U's panels (from cholesky or pack); otherwise the
// solve is gonum's.
func (t *trsm) solve(u blas64.Triangular, v []float64, lambda int, packed, avx bool) {
	if !packed || u.Uplo != blas.Upper || u.Diag != blas.NonUnit {
		blas64.Trsm(blas.Left, blas.Trans, 1, u, blas64.General{Rows: u.N, Cols: lambda, Stride: lambda, Data: v})
		return
	}
	n := u.N
	t.solveRows(v[:n*lambda], lambda, n, 0, n, 0, lambda, avx)
}

// solveRows solves rows [i0, i1) (i0 a multiple of 4) of the columns
// [c0, c1) of W (n rows, stride ldw) with t's panels; rows above i0 are
// solved already. It goes by strips of 8 columns, each solved from top to
// bottom: a strip of W stays in the L1 cache while the panels stream by.
func (t *trsm) solveRows(w []float64, ldw, n, i0, i1, c0, c1 int, avx bool) {
	c := c0
	for ; c+8 <= c1; c += 8 {
		t.solveStrip(w[c:], ldw, n, i0, i1, 8, avx)
	}
	if c+4 <= c1 {
		t.solveStrip(w[c:], ldw, n, i0, i1, 4, avx)
		c += 4
	}
	if c < c1 {
		t.solveStrip(w[c:], ldw, n, i0, i1, c1-c, false)
	}
}

// solveStrip is solveRows for the width ≤ 8 columns starting at w[0].
func (t *trsm) solveStrip(w []float64, ldw, n, i0, i1, width int, avx bool) {
	for ; i0 < i1; i0 += trsmRows {
		p := t.group(i0)
		rows := min(trsmRows, n-i0)
		rinv := t.rinv[i0 : i0+rows]
		switch {
		case avx && rows == trsmRows && width == 8:
			solve4x8(p, w, ldw, i0, rinv)
		case avx && rows == trsmRows && width == 4:
			solve4x4(p, w, ldw, i0, rinv)
		case width == 8:
			solveRows4(p, w, ldw, i0, rows, rinv)
			solveRows4(p, w[4:], ldw, i0, rows, rinv)
		case width == 4:
			solveRows4(p, w, ldw, i0, rows, rinv)
		default:
			solveRows1(p, w, ldw, i0, rows, width, rinv)
		}
	}
}

// updateRows adds to rows [i0, i1) of the columns [c0, c1) of W the terms
// of rows k ∈ [kmin, kmax) (kmax ≤ i0), t's panels holding their
// multipliers. With upper set, tiles entirely left of column i0 of their
// rows are left out (the lower triangle of a diagonal block).
func (t *trsm) updateRows(w []float64, ldw, n, i0, i1, c0, c1, kmin, kmax int, upper, avx bool) {
	if kmax <= kmin {
		return
	}
	wk := w[kmin*ldw:] // row kmin first: the kernels count rows from there
	for ; i0 < i1; i0 += trsmRows {
		p := t.group(i0)[trsmRows*kmin:]
		rows := min(trsmRows, n-i0)
		c := c0
		if upper {
			c += max(0, i0-c0) / 8 * 8
		}
		if avx && rows == trsmRows {
			for ; c+8 <= c1; c += 8 {
				update4x8(p, wk[c:], ldw, i0-kmin, kmax-kmin)
			}
			if c+4 <= c1 {
				update4x4(p, wk[c:], ldw, i0-kmin, kmax-kmin)
				c += 4
			}
		}
		if c < c1 {
			updateRowsGo(p, wk[c:], ldw, i0-kmin, rows, c1-c, kmax-kmin)
		}
	}
}

// solveRows4 solves rows i0 … i0+rows−1 of the 4 columns starting at w[0]
// (stride ldw) in Go. The conversions float64(…) round each product, so no
// fused multiply–add is formed (the Go specification allows fusing x·y + z
// otherwise).
func solveRows4(p, w []float64, ldw, i0, rows int, rinv []float64) {
	for r := range rows {
		i := i0 + r
		wi := w[i*ldw : i*ldw+4]
		a0, a1, a2, a3 := wi[0], wi[1], wi[2], wi[3]
		for k := range i {
			m := p[trsmRows*k+r]
			wk := w[k*ldw : k*ldw+4]
			a0 = float64(wk[0]*m) + a0
			a1 = float64(wk[1]*m) + a1
			a2 = float64(wk[2]*m) + a2
			a3 = float64(wk[3]*m) + a3
		}
		s := rinv[r]
		wi[0], wi[1], wi[2], wi[3] = a0*s, a1*s, a2*s, a3*s
	}
}

// solveRows1 is solveRows4 for cols < 4 columns, one at a time.
func solveRows1(p, w []float64, ldw, i0, rows, cols int, rinv []float64) {
	for r := range rows {
		i := i0 + r
		for c := range cols {
			a := w[i*ldw+c]
			for k := range i {
				a = float64(w[k*ldw+c]*p[trsmRows*k+r]) + a
			}
			w[i*ldw+c] = a * rinv[r]
		}
	}
}

// updateRowsGo is updateRows's kernel in Go, one entry at a time.
func updateRowsGo(p, w []float64, ldw, i0, rows, cols, kmax int) {
	for r := range rows {
		i := i0 + r
		for c := range cols {
			a := w[i*ldw+c]
			for k := range kmax {
				a = float64(w[k*ldw+c]*p[trsmRows*k+r]) + a
			}
			w[i*ldw+c] = a
		}
	}
}
