package selfcma

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack/gonum"
)

// The Cholesky factorization of h_t (Algorithm 3, line 4), C' = UᵀU, bit
// for bit as gonum's Dpotrf (lapack64.Potrf) computes it.
//
// gonum's Dpotrf (Upper) works on blocks of nb = 64 columns (Ilaenv; one
// block, Dpotf2 alone, for n ≤ nb). For the block J = [j, j+jb):
//
//  1. Dsyrk: a_ic −= Σ_{l<j} u_li u_lc on its upper triangle (i ≤ c in J);
//  2. Dpotf2 factors the diagonal block (its own dot products);
//  3. Dgemm: a_ic −= Σ_{l<j} u_li u_lc for i ∈ J, c ≥ j+jb;
//  4. Dtrsm (Left, Upper, Trans, NonUnit, the case of trsm.go) solves those
//     rows with the diagonal block.
//
// Dsyrk and Dgemm (Trans, NoTrans, also split over goroutines in blocks of
// 64, each entry within one goroutine) both run l ascending with
// f64.AxpyUnitary(−u_li, row l, row i), leaving out a zero u_li: each term
// is a_ic ← (u_lc · (−u_li)) + a_ic, the term of trsm.go. So step 1 is
// trsm.updateRows, and steps 3 and 4 together are one continuous sum over
// l < i, then the multiplication by 1/u_ii: trsm.solveRows with the rows
// above i0 taken from U. Step 2 is gonum's own Dpotf2. Where a zero u_li
// would be left out, cholesky gives up and the caller factors with gonum.
//
// Besides U, cholesky leaves the panels of U in t for the solve of V. The
// entries below the diagonal of the diagonal blocks (not part of U) are
// overwritten.

// cholesky factors the upper triangle of a (n×n, stride lda) in place. ok
// is Dpotrf's result (false: not positive definite); fast false means a
// zero above the diagonal of U: a is then part-way and must be refactored
// by gonum.
func (t *trsm) cholesky(a []float64, n, lda int, avx bool) (ok, fast bool) {
	var impl gonum.Implementation
	nb := impl.Ilaenv(1, "DPOTRF", string(blas.Upper), n, -1, -1, -1)
	if nb <= 1 || n <= nb || nb%trsmRows != 0 {
		ok = impl.Dpotrf(blas.Upper, n, a, lda)
		if !ok {
			return false, true
		}
		t.resize(n)
		for i0 := 0; i0 < n; i0 += trsmRows {
			if !t.packGroup(a, lda, n, i0, 0, i0+trsmRows) {
				return true, false
			}
		}
		for i := range n {
			t.rinv[i] = 1 / a[i*lda+i]
		}
		return true, true
	}
	t.resize(n)
	for j := 0; j < n; j += nb {
		jb := min(nb, n-j)
		// Step 1, with the multipliers of the rows above the block.
		for i0 := j; i0 < j+jb; i0 += trsmRows {
			if !t.packGroup(a, lda, n, i0, 0, j) {
				return true, false
			}
		}
		t.updateRows(a, lda, n, j, j+jb, j, j+jb, j, true, avx)
		// Step 2.
		if !impl.Dpotf2(blas.Upper, jb, a[j*lda+j:], lda) {
			return false, true
		}
		// Steps 3 and 4, with the multipliers of the block's rows.
		for i0 := j; i0 < j+jb; i0 += trsmRows {
			if !t.packGroup(a, lda, n, i0, j, i0+trsmRows) {
				return true, false
			}
		}
		for i := j; i < j+jb; i++ {
			t.rinv[i] = 1 / a[i*lda+i]
		}
		if j+jb < n {
			t.solveRows(a, lda, n, j, j+jb, j+jb, n, avx)
		}
	}
	return true, true
}
