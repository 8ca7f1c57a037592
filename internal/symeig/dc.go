package symeig

// Divide and conquer for the symmetric tridiagonal eigenproblem (numerics
// version DivideConquer): LAPACK's dstedc with COMPZ = 'I' and the routines
// it calls for that case, dlaed0, dlaed1, dlaed2, dlaed3 and dlamrg (the
// secular equation is in laed.go). Ported from Reference LAPACK 3.12
// (SRC/dstedc.f, dlaed0.f, dlaed1.f, dlaed2.f, dlaed3.f, dlamrg.f;
// BSD-3-Clause, Copyright (c) 1992-2023 The University of Tennessee and The
// University of Tennessee Research Foundation, The University of California
// Berkeley, The University of Colorado Denver). Indices count from 0; the
// matrices of eigenvectors here are column-major, as in LAPACK (column j of
// q, eigenvector j, is q[j*ldq : j*ldq+n]), so that a row-major reader
// sees them transposed. The products are gemm (gemm.go), whose result
// depends on neither GOMAXPROCS nor the processor.

import (
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
)

// dcSmall is SMLSIZ of dstedc and dlaed0 (ILAENV(9)): subproblems of this
// order or less are solved by QL/QR (Dsteqr).
const dcSmall = 25

// dcMinOrder is the largest order version DivideConquer decomposes by
// QL/QR (orgtrSteqr, on its own reduction) instead of divide and conquer:
// below about 80 the QL/QR path is faster (measured), above 100 the
// divide and conquer.
const dcMinOrder = 96

// dcWork holds the buffers of the divide and conquer for one order n.
type dcWork struct {
	n      int
	q      []float64 // eigenvectors of T, column-major n×n
	q2     []float64 // dlaed2's compressed copy of q
	s      []float64 // dlaed3's scratch
	z      []float64 // the updating vector, then dlaed2's scratch
	dlamda []float64 // the non-deflated poles
	w      []float64 // the non-deflated z
	tmp    []float64 // dlaed0's permuted eigenvalues; Dsteqr's work
	steqrZ []float64 // a leaf's row-major eigenvectors
	iwork  []int     // dlaed0's partition
	indxq  []int     // the permutation that sorts each subproblem's d
	indx   []int     // dlaed2
	indxc  []int
	indxp  []int
	coltyp []int
	mm     gemmWork // the products
	orm    ormWork  // the back-transformation
	zsign  []float64
	// scratch is one vector of order n per goroutine of split.
	scratch [][]float64
}

// minSplit is the fewest iterations split handles per goroutine.
const minSplit = 48

// workers is the number of goroutines split uses for k iterations.
func (dw *dcWork) workers(k int) int {
	return max(1, min(runtime.GOMAXPROCS(0), k/minSplit))
}

// split runs fn on [0, k) in contiguous ranges on dw.workers(k)
// goroutines, fn(lo, hi, worker). Callers give it iterations that are
// independent, so the split never changes the result.
func (dw *dcWork) split(k int, fn func(lo, hi, wk int)) {
	nw := dw.workers(k)
	for len(dw.scratch) < nw {
		dw.scratch = append(dw.scratch, make([]float64, dw.n))
	}
	if nw == 1 {
		fn(0, k, 0)
		return
	}
	var wg sync.WaitGroup
	for wk := 1; wk < nw; wk++ {
		wg.Go(func() { fn(wk*k/nw, (wk+1)*k/nw, wk) })
	}
	fn(0, k/nw, 0)
	wg.Wait()
}

func (dw *dcWork) grow(n int) {
	if dw.n == n {
		return
	}
	*dw = dcWork{
		n:      n,
		q:      make([]float64, n*n),
		q2:     make([]float64, n*n),
		s:      make([]float64, n*n),
		z:      make([]float64, n),
		dlamda: make([]float64, n),
		w:      make([]float64, n),
		tmp:    make([]float64, max(n, 2*dcSmall)),
		zsign:  make([]float64, n),
		steqrZ: make([]float64, dcSmall*dcSmall),
		iwork:  make([]int, 2*n+2),
		indxq:  make([]int, n),
		indx:   make([]int, n),
		indxc:  make([]int, n),
		indxp:  make([]int, n),
		coltyp: make([]int, n),
	}
}

// stedc is dstedc(COMPZ = 'I') for n ≥ 2: the eigenvalues of the symmetric
// tridiagonal matrix (d, e) in ascending order in d and its eigenvectors in
// dw.q (column-major, leading dimension n). e is destroyed. It returns
// false if an iteration does not converge or T is not finite.
func (dw *dcWork) stedc(n int, d, e []float64) bool {
	q, ldq := dw.q, n
	// A non-finite T has no decomposition (and gonum's Dlascl panics on a
	// NaN norm).
	for i := range n {
		if math.IsNaN(d[i]) || math.IsInf(d[i], 0) || i < n-1 && (math.IsNaN(e[i]) || math.IsInf(e[i], 0)) {
			return false
		}
	}
	if n <= dcSmall {
		return dw.steqr(n, d, e, q, ldq)
	}
	impl.Dlaset(blas.All, n, n, 0, 1, q, ldq)
	orgnrm := impl.Dlanst(lapack.MaxAbs, n, d, e)
	if orgnrm == 0 {
		return true
	}
	eps := dlamchE
	for start := 0; start < n; {
		// Split T where an off-diagonal entry is negligible.
		finish := start
		for finish < n-1 {
			tiny := eps * math.Sqrt(math.Abs(d[finish])) * math.Sqrt(math.Abs(d[finish+1]))
			if math.Abs(e[finish]) <= tiny {
				break
			}
			finish++
		}
		m := finish - start + 1
		if m == 1 {
			start = finish + 1
			continue
		}
		sub := q[start*ldq+start:]
		if m > dcSmall {
			// Scale to norm 1, solve, scale back.
			orgnrm := impl.Dlanst(lapack.MaxAbs, m, d[start:], e[start:])
			impl.Dlascl(lapack.General, 0, 0, orgnrm, 1, m, 1, d[start:], 1)
			impl.Dlascl(lapack.General, 0, 0, orgnrm, 1, m-1, 1, e[start:], 1)
			if !dw.laed0(m, d[start:], e[start:], sub, ldq) {
				return false
			}
			impl.Dlascl(lapack.General, 0, 0, 1, orgnrm, m, 1, d[start:], 1)
		} else if !dw.steqr(m, d[start:], e[start:], sub, ldq) {
			return false
		}
		start = finish + 1
	}

	// Sort the eigenvalues and eigenvectors (as dstedc); the eigenvectors
	// are the rows of q.
	bi := blas64.Implementation()
	sortAscending(n, d, func(i, k int) { bi.Dswap(n, q[i*ldq:], 1, q[k*ldq:], 1) })
	return true
}

// steqr is Dsteqr(COMPZ = 'I') of order m ≤ dcSmall on (d, e), the
// eigenvectors put in the column-major m×m block q (leading dimension ldq).
func (dw *dcWork) steqr(m int, d, e, q []float64, ldq int) bool {
	z := dw.steqrZ[:m*m]
	if !impl.Dsteqr(lapack.EVTridiag, m, d, e, z, m, dw.tmp) {
		return false
	}
	// z is row-major: column j of the block is column j of z.
	for j := range m {
		col := q[j*ldq : j*ldq+m]
		for i := range col {
			col[i] = z[i*m+j]
		}
	}
	return true
}

// laed0 is dlaed0(ICOMPQ = 2): the eigenvalues and eigenvectors of the
// unreduced symmetric tridiagonal (d, e) of order n > dcSmall, the
// eigenvectors into the column-major n×n block q (leading dimension ldq),
// the eigenvalues in ascending order.
func (dw *dcWork) laed0(n int, d, e, q []float64, ldq int) bool {
	// Split into subproblems of order at most dcSmall: iwork[j] ends
	// subproblem j (cumulative sizes).
	iwork := dw.iwork
	iwork[0] = n
	subpbs := 1
	for iwork[subpbs-1] > dcSmall {
		for j := subpbs; j >= 1; j-- {
			iwork[2*j-1] = (iwork[j-1] + 1) / 2
			iwork[2*j-2] = iwork[j-1] / 2
		}
		subpbs *= 2
	}
	for j := 1; j < subpbs; j++ {
		iwork[j] += iwork[j-1]
	}
	// Tear: T = diag(T1, T2) + |β| u uᵀ with the sign of β in u.
	for i := 0; i < subpbs-1; i++ {
		submat := iwork[i]
		smm1 := submat - 1
		d[smm1] -= math.Abs(e[smm1])
		d[submat] -= math.Abs(e[smm1])
	}

	// Solve each subproblem.
	indxq := dw.indxq[:n]
	for i := 0; i < subpbs; i++ {
		submat, matsiz := 0, iwork[0]
		if i > 0 {
			submat = iwork[i-1]
			matsiz = iwork[i] - iwork[i-1]
		}
		if !dw.steqr(matsiz, d[submat:], e[submat:], q[submat*ldq+submat:], ldq) {
			return false
		}
		for k := range matsiz {
			indxq[submat+k] = k
		}
	}

	// Merge pairs of adjacent subproblems until one is left.
	for subpbs > 1 {
		for i := 0; i <= subpbs-2; i += 2 {
			var submat, matsiz, msd2 int
			if i == 0 {
				submat, matsiz, msd2 = 0, iwork[1], iwork[0]
			} else {
				submat = iwork[i-1]
				matsiz = iwork[i+1] - iwork[i-1]
				msd2 = matsiz / 2
			}
			if !dw.laed1(matsiz, d[submat:], q[submat*ldq+submat:], ldq, indxq[submat:], e[submat+msd2-1], msd2) {
				return false
			}
			iwork[i/2] = iwork[i+1]
		}
		subpbs /= 2
	}

	// Put the eigenvalues and eigenvectors in ascending order.
	tmp, q2 := dw.tmp[:n], dw.q2[:n*n]
	for i := range n {
		j := indxq[i]
		tmp[i] = d[j]
		copy(q2[i*n:(i+1)*n], q[j*ldq:j*ldq+n])
	}
	copy(d, tmp)
	for j := range n {
		copy(q[j*ldq:j*ldq+n], q2[j*n:(j+1)*n])
	}
	return true
}

// laed1 is dlaed1: given the eigendecompositions of T1 (order cutpnt) and
// T2 in the column-major block q and d, each d sorted by indxq, it computes
// that of diag(T1, T2) + ρ u uᵀ (u = (e_cutpnt; e_1)), its eigenvalues
// sorted by the returned indxq.
func (dw *dcWork) laed1(n int, d, q []float64, ldq int, indxq []int, rho float64, cutpnt int) bool {
	// z = (last row of Q1, first row of Q2).
	z := dw.z[:n]
	for j := range cutpnt {
		z[j] = q[j*ldq+cutpnt-1]
	}
	for j := cutpnt; j < n; j++ {
		z[j] = q[j*ldq+cutpnt]
	}
	k, rho := dw.laed2(n, cutpnt, d, q, ldq, indxq, rho)
	if k == 0 {
		for i := range n {
			indxq[i] = i
		}
		return true
	}
	if !dw.laed3(k, n, cutpnt, d, q, ldq, rho) {
		return false
	}
	lamrg(k, n-k, d, 1, -1, indxq)
	return true
}

// lamrg is dlamrg: index such that a[index[0]], a[index[1]], … is the
// ascending merge of a[0:n1] and a[n1:n1+n2], each sorted ascending
// (strd > 0) or descending (strd < 0).
func lamrg(n1, n2 int, a []float64, strd1, strd2 int, index []int) {
	ind1, ind2 := 0, n1
	if strd1 < 0 {
		ind1 = n1 - 1
	}
	if strd2 < 0 {
		ind2 = n1 + n2 - 1
	}
	i := 0
	for n1 > 0 && n2 > 0 {
		if a[ind1] <= a[ind2] {
			index[i] = ind1
			ind1 += strd1
			n1--
		} else {
			index[i] = ind2
			ind2 += strd2
			n2--
		}
		i++
	}
	for ; n2 > 0; n2-- {
		index[i] = ind2
		ind2 += strd2
		i++
	}
	for ; n1 > 0; n1-- {
		index[i] = ind1
		ind1 += strd1
		i++
	}
}

// Column types of dlaed2: nonzero only in the first n1 rows, in both
// halves, only in the last n2 rows, deflated.
const (
	colUpper = iota
	colDense
	colLower
	colDeflated
)

// laed2 is dlaed2: it merges the two sets of eigenvalues and deflates (z
// entries negligible, or two poles close enough that a rotation zeroes one
// z entry). It returns the number k of non-deflated eigenvalues and the
// updated ρ; dw.dlamda[:k] and dw.w[:k] are the poles and z of the secular
// equation, dw.q2 the eigenvectors packed by type for laed3,
// dw.indxc[:k] the permutation laed3 applies, dw.coltyp[:4] the number of
// columns of each type. Deflated eigenpairs are already in d[k:] and
// q[:, k:].
func (dw *dcWork) laed2(n, n1 int, d, q []float64, ldq int, indxq []int, rho float64) (int, float64) {
	bi := blas64.Implementation()
	z, dlamda, w, q2 := dw.z[:n], dw.dlamda[:n], dw.w[:n], dw.q2
	indx, indxc, indxp, coltyp := dw.indx[:n], dw.indxc[:n], dw.indxp[:n], dw.coltyp[:n]
	n2 := n - n1
	if rho < 0 {
		bi.Dscal(n2, -1, z[n1:], 1)
	}
	// Normalise z to norm 1 (each half has norm 1), and ρ with it.
	bi.Dscal(n, 1/math.Sqrt(2), z, 1)
	rho = math.Abs(2 * rho)

	// Sort the eigenvalues into increasing order.
	for i := n1; i < n; i++ {
		indxq[i] += n1
	}
	for i := range n {
		dlamda[i] = d[indxq[i]]
	}
	lamrg(n1, n2, dlamda, 1, 1, indxc)
	for i := range n {
		indx[i] = indxq[indxc[i]]
	}

	imax := bi.Idamax(n, z, 1)
	jmax := bi.Idamax(n, d, 1)
	eps := dlamchE
	tol := 8 * 8 * eps * max(math.Abs(d[jmax]), math.Abs(z[imax]))

	// Everything deflates: sort and return.
	if rho*math.Abs(z[imax]) <= tol {
		for j := range n {
			i := indx[j]
			copy(q2[j*n:(j+1)*n], q[i*ldq:i*ldq+n])
			dlamda[j] = d[i]
		}
		for j := range n {
			copy(q[j*ldq:j*ldq+n], q2[j*n:(j+1)*n])
		}
		copy(d, dlamda)
		return 0, rho
	}

	for i := range n1 {
		coltyp[i] = colUpper
	}
	for i := n1; i < n; i++ {
		coltyp[i] = colLower
	}
	k := 0
	k2 := n
	j := 0
	pj := -1
	for ; j < n; j++ {
		nj := indx[j]
		if rho*math.Abs(z[nj]) <= tol {
			// Deflate: negligible z entry.
			k2--
			coltyp[nj] = colDeflated
			indxp[k2] = nj
			continue
		}
		pj = nj
		break
	}
	for j++; j < n; j++ {
		nj := indx[j]
		if rho*math.Abs(z[nj]) <= tol {
			k2--
			coltyp[nj] = colDeflated
			indxp[k2] = nj
			continue
		}
		// Close poles pj, nj: a rotation that zeroes z[pj] deflates if
		// it changes the matrix by at most tol.
		s := z[pj]
		c := z[nj]
		tau := impl.Dlapy2(c, s)
		t := d[nj] - d[pj]
		c /= tau
		s = -s / tau
		if math.Abs(t*c*s) <= tol {
			z[nj] = tau
			z[pj] = 0
			if coltyp[nj] != coltyp[pj] {
				coltyp[nj] = colDense
			}
			coltyp[pj] = colDeflated
			bi.Drot(n, q[pj*ldq:pj*ldq+n], 1, q[nj*ldq:nj*ldq+n], 1, c, s)
			t = d[pj]*(c*c) + d[nj]*(s*s)
			d[nj] = d[pj]*(s*s) + d[nj]*(c*c)
			d[pj] = t
			k2--
			i := 1
			for {
				if k2+i < n && d[pj] < d[indxp[k2+i]] {
					indxp[k2+i-1] = indxp[k2+i]
					indxp[k2+i] = pj
					i++
					continue
				}
				indxp[k2+i-1] = pj
				break
			}
			pj = nj
		} else {
			dlamda[k] = d[pj]
			w[k] = z[pj]
			indxp[k] = pj
			k++
			pj = nj
		}
	}
	// The last non-deflated eigenvalue (LAPACK's K = K + 1 after it is
	// not needed: k is not read again).
	dlamda[k] = d[pj]
	w[k] = z[pj]
	indxp[k] = pj

	// Count the columns of each type and pack q into q2 by type: upper,
	// dense, lower, deflated.
	var ctot, psm [4]int
	for j := range n {
		ctot[coltyp[j]]++
	}
	psm[0] = 0
	psm[1] = ctot[0]
	psm[2] = psm[1] + ctot[1]
	psm[3] = psm[2] + ctot[2]
	k = n - ctot[3]
	for j := range n {
		js := indxp[j]
		ct := coltyp[js]
		indx[psm[ct]] = js
		indxc[psm[ct]] = j
		psm[ct]++
	}
	i := 0
	iq1 := 0
	iq2 := (ctot[0] + ctot[1]) * n1
	for range ctot[0] {
		js := indx[i]
		copy(q2[iq1:iq1+n1], q[js*ldq:js*ldq+n1])
		z[i] = d[js]
		i++
		iq1 += n1
	}
	for range ctot[1] {
		js := indx[i]
		copy(q2[iq1:iq1+n1], q[js*ldq:js*ldq+n1])
		copy(q2[iq2:iq2+n2], q[js*ldq+n1:js*ldq+n])
		z[i] = d[js]
		i++
		iq1 += n1
		iq2 += n2
	}
	for range ctot[2] {
		js := indx[i]
		copy(q2[iq2:iq2+n2], q[js*ldq+n1:js*ldq+n])
		z[i] = d[js]
		i++
		iq2 += n2
	}
	iq1 = iq2
	for range ctot[3] {
		js := indx[i]
		copy(q2[iq2:iq2+n], q[js*ldq:js*ldq+n])
		iq2 += n
		z[i] = d[js]
		i++
	}
	// The deflated eigenpairs go to the end of d and q.
	if k < n {
		for j := range ctot[3] {
			copy(q[(k+j)*ldq:(k+j)*ldq+n], q2[iq1+j*n:iq1+(j+1)*n])
		}
		copy(d[k:n], z[k:n])
	}
	copy(coltyp[:4], ctot[:])
	return k, rho
}

// laed3 is dlaed3: the roots of the secular equation of order k (dlaed4)
// into d[:k], and the eigenvectors of the rank-one update from the
// recomputed ẑ (Gu and Eisenstat: ẑ_i² = Π_j (λ_j − d_i) / Π_{j≠i} (d_j −
// d_i), so that the computed vectors are orthogonal to working precision),
// multiplied by the eigenvectors of T1 and T2 into q[:, :k].
func (dw *dcWork) laed3(k, n, n1 int, d, q []float64, ldq int, rho float64) bool {
	dlamda, w, q2, s := dw.dlamda[:k], dw.w[:k], dw.q2, dw.s
	indx, ctot := dw.indxc[:k], dw.coltyp[:4]
	// The roots, each independent of the others: column j of q gets
	// delta_i = dlamda_i − λ_j.
	failed := make([]bool, dw.workers(k))
	dw.split(k, func(lo, hi, wk int) {
		for j := lo; j < hi; j++ {
			var ok bool
			if d[j], ok = laed4(k, j, dlamda, w, q[j*ldq:j*ldq+k], rho); !ok {
				failed[wk] = true
				return
			}
		}
	})
	for _, f := range failed {
		if f {
			return false
		}
	}
	switch k {
	case 1:
	case 2:
		for j := range 2 {
			col := q[j*ldq : j*ldq+2]
			w[0], w[1] = col[0], col[1]
			col[0] = w[indx[0]]
			col[1] = w[indx[1]]
		}
	default:
		// ẑ from the computed roots (Gu–Eisenstat), signs of z; row i's
		// product in increasing j, rows split between goroutines.
		zsign := dw.zsign[:k]
		copy(zsign, w)
		dw.split(k, func(lo, hi, _ int) {
			for i := lo; i < hi; i++ {
				w[i] = q[i*ldq+i]
			}
			for j := range k {
				col := q[j*ldq : j*ldq+k]
				for i := lo; i < min(hi, j); i++ {
					w[i] *= col[i] / (dlamda[i] - dlamda[j])
				}
				for i := max(lo, j+1); i < hi; i++ {
					w[i] *= col[i] / (dlamda[i] - dlamda[j])
				}
			}
			for i := lo; i < hi; i++ {
				w[i] = math.Copysign(math.Sqrt(-w[i]), zsign[i])
			}
		})
		// Eigenvector j: ẑ_i / (dlamda_i − λ_j), normalised, rows permuted
		// back; columns split between goroutines.
		dw.split(k, func(lo, hi, wk int) {
			bi := blas64.Implementation()
			sv := dw.scratch[wk][:k]
			for j := lo; j < hi; j++ {
				col := q[j*ldq : j*ldq+k]
				for i := range k {
					sv[i] = w[i] / col[i]
				}
				temp := bi.Dnrm2(k, sv, 1)
				for i := range k {
					col[i] = sv[indx[i]] / temp
				}
			}
		})
	}

	// Back-transform: Q(0:n1, :k) = Q1 · S(upper and dense rows), Q(n1:n,
	// :k) = Q2 · S(dense and lower rows).
	n2 := n - n1
	n12 := ctot[colUpper] + ctot[colDense]
	n23 := ctot[colDense] + ctot[colLower]
	// s = q[ctot0 : ctot0+n23, :k], column-major n23×k.
	for j := range k {
		copy(s[j*n23:(j+1)*n23], q[j*ldq+ctot[colUpper]:j*ldq+ctot[colUpper]+n23])
	}
	iq2 := n1 * n12
	if n23 != 0 {
		// Column-major C = A·B is row-major Cᵀ = Bᵀ·Aᵀ.
		dw.mm.gemm(k, n2, n23, s[:k*n23], n23, q2[iq2:iq2+n23*n2], n2, q[n1:], ldq)
	} else {
		for j := range k {
			clear(q[j*ldq+n1 : j*ldq+n])
		}
	}
	for j := range k {
		copy(s[j*n12:(j+1)*n12], q[j*ldq:j*ldq+n12])
	}
	if n12 != 0 {
		dw.mm.gemm(k, n1, n12, s[:k*n12], n12, q2[:n12*n1], n1, q, ldq)
	} else {
		for j := range k {
			clear(q[j*ldq : j*ldq+n1])
		}
	}
	return true
}

// FactorizeDivideConquer is Factorize (same input, output and failure)
// with the numerics of version DivideConquer: version Blocked's reduction
// with its rank-2k updates by gemm tiles (syr2kTiled) and its symmetric
// products in one pass per row (symvFused), T = Qᵀ A Q; then, above order
// dcMinOrder, the eigenvectors Z of T by divide and conquer (stedc) and
// Q·Z by applying the reflectors in blocks (ormWork), and up to it
// version Blocked's QL/QR. Up to order 32, where the reduction is not
// blocked, it is FactorizeBlocked bit for bit. Its result does not depend
// on GOMAXPROCS (tested).
func (ws *Workspace) FactorizeDivideConquer(n int, a []float64, lda int, w []float64) bool {
	return ws.factorize(n, a, lda, w, DivideConquer)
}

// orgtrStedc solves the tridiagonal problem (d, ws.e) by stedc and sets
// a = Q·Z, Q the reflectors left in a by the reduction.
func (ws *Workspace) orgtrStedc(n int, a []float64, lda int, d []float64) bool {
	dw := &ws.dc
	dw.grow(n)
	dw.mm.plain, dw.orm.mm.plain = ws.plain, ws.plain
	if !dw.stedc(n, d, ws.e) {
		return false
	}
	// Take the reflectors out of a, put Z (dw.q is Zᵀ) in, apply.
	dw.orm.prepare(n, a, lda, ws.tau)
	for j := range n {
		col := dw.q[j*n : (j+1)*n]
		for i, v := range col {
			a[i*lda+j] = v
		}
	}
	dw.orm.apply(n, a, lda)
	return true
}
