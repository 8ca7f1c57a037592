package selfcma

import (
	"math"

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
//  2. Dpotf2 factors the diagonal block: for its row i, u_ii =
//     √(a_ii − Ddot(u_·i, u_·i)) over the block's rows above i, then
//     Dgemv (Trans, f64.GemvT: a_ic ← (u_lc · (−u_li)) + a_ic, l ascending,
//     no term left out) and Dscal by 1/u_ii on the rest of the row;
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
// above i0 taken from U. Step 2 is trsm.potf2: the same terms for the rows
// of a block of 4 from the rows above it, then the 4 rows one by one with
// the dot product in f64.DotInc's order. Where a zero u_li would be left
// out, cholesky gives up and the caller factors with gonum.
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
	if nb%trsmRows != 0 {
		return true, false
	}
	t.resize(n)
	if nb <= 1 || n <= nb {
		// Dpotrf is Dpotf2 alone.
		return t.potf2(a, lda, n, 0, n, avx)
	}
	for j := 0; j < n; j += nb {
		jb := min(nb, n-j)
		// Step 1, with the multipliers of the rows above the block (packed
		// when those rows were done).
		t.updateRows(a, lda, n, j, j+jb, j, j+jb, 0, j, true, avx)
		// Step 2; it packs the multipliers of the block's rows for the
		// block's own rows.
		if ok, fast := t.potf2(a, lda, n, j, jb, avx); !ok || !fast {
			return ok, fast
		}
		if j+jb < n {
			// Steps 3 and 4, then the multipliers of the block's rows for
			// the rows below it.
			t.solveRows(a, lda, n, j, j+jb, j+jb, n, avx)
			if !t.packRows(a, lda, n, j, j+jb) {
				return true, false
			}
		}
	}
	return true, true
}

// packRows fills the panel entries k ∈ [k0, k1) of the blocks of rows from
// k1 (a multiple of 4) on, as packGroup does, reading U by rows, and
// reports whether no multiplier is zero.
func (t *trsm) packRows(a []float64, lda, n, k0, k1 int) bool {
	for k := k0; k < k1; k++ {
		row := a[k*lda : k*lda+n]
		i0 := k1
		for ; i0+trsmRows <= n; i0 += trsmRows {
			u := row[i0 : i0+trsmRows]
			if u[0] == 0 || u[1] == 0 || u[2] == 0 || u[3] == 0 {
				return false
			}
			off := panelOffset(i0) + trsmRows*k
			pk := t.panel[off : off+trsmRows]
			pk[0], pk[1], pk[2], pk[3] = -u[0], -u[1], -u[2], -u[3]
		}
		if i0 < n {
			off := panelOffset(i0) + trsmRows*k
			pk := t.panel[off : off+trsmRows]
			for r := range pk {
				pk[r] = 0
				if i0+r < n {
					if row[i0+r] == 0 {
						return false
					}
					pk[r] = -row[i0+r]
				}
			}
		}
	}
	return true
}

// potf2 is gonum's Dpotf2 (Upper) on the diagonal block [j0, j0+jb) of a,
// bit for bit (step 2 above), leaving the panels of its rows and their
// rinv in t.
func (t *trsm) potf2(a []float64, lda, n, j0, jb int, avx bool) (ok, fast bool) {
	end := j0 + jb
	for i0 := j0; i0 < end; i0 += trsmRows {
		rows := min(trsmRows, end-i0)
		// Dgemv's terms from the rows above the group, l ∈ [j0, i0), into
		// the group's rows right of column i0; not into u_ii, which is
		// a_ii − Ddot.
		if !t.packGroup(a, lda, n, i0, j0, i0) {
			return true, false
		}
		var diag [trsmRows]float64
		for r := range rows {
			diag[r] = a[(i0+r)*lda+i0+r]
		}
		t.updateRows(a, lda, n, i0, i0+trsmRows, i0, end, j0, i0, false, avx)
		for r := range rows {
			a[(i0+r)*lda+i0+r] = diag[r]
		}
		for r := range rows {
			i := i0 + r
			ajj := a[i*lda+i]
			if i != j0 {
				ajj -= dotInc(a, lda, j0, i)
			}
			if ajj <= 0 || math.IsNaN(ajj) {
				a[i*lda+i] = ajj
				return false, true
			}
			ajj = math.Sqrt(ajj)
			a[i*lda+i] = ajj
			s := 1 / ajj
			// The rest of Dgemv's terms, l ∈ [i0, i), then Dscal.
			row := a[i*lda+i+1 : i*lda+end]
			switch r {
			case 0:
				for c := range row {
					row[c] *= s
				}
			case 1:
				m0, u0 := -a[i0*lda+i], a[i0*lda+i+1:i0*lda+end]
				for c := range row {
					row[c] = (float64(u0[c]*m0) + row[c]) * s
				}
			case 2:
				m0, u0 := -a[i0*lda+i], a[i0*lda+i+1:i0*lda+end]
				m1, u1 := -a[(i0+1)*lda+i], a[(i0+1)*lda+i+1:(i0+1)*lda+end]
				for c := range row {
					v := float64(u0[c]*m0) + row[c]
					row[c] = (float64(u1[c]*m1) + v) * s
				}
			default:
				m0, u0 := -a[i0*lda+i], a[i0*lda+i+1:i0*lda+end]
				m1, u1 := -a[(i0+1)*lda+i], a[(i0+1)*lda+i+1:(i0+1)*lda+end]
				m2, u2 := -a[(i0+2)*lda+i], a[(i0+2)*lda+i+1:(i0+2)*lda+end]
				for c := range row {
					v := float64(u0[c]*m0) + row[c]
					v = float64(u1[c]*m1) + v
					row[c] = (float64(u2[c]*m2) + v) * s
				}
			}
		}
		if !t.packGroup(a, lda, n, i0, i0, i0+trsmRows) {
			return true, false
		}
		for i := i0; i < i0+rows; i++ {
			t.rinv[i] = 1 / a[i*lda+i]
		}
	}
	return true, true
}

// dotInc is Σ_{l ∈ [j0, i)} u_li² as f64.DotInc sums it (Ddot with a
// stride): two lanes, the even terms (counted from j0) in one and the odd
// ones in the other, the last term of an odd count in the odd lane, then
// the even lane plus the odd one.
func dotInc(a []float64, lda, j0, i int) float64 {
	var even, odd float64
	l := j0
	for ; l+2 <= i; l += 2 {
		x, y := a[l*lda+i], a[(l+1)*lda+i]
		even += float64(x * x)
		odd += float64(y * y)
	}
	if l < i {
		x := a[l*lda+i]
		odd += float64(x * x)
	}
	return even + odd
}
