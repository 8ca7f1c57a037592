package symeig

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Numerics versions: the algorithm that decomposes C decides the points a
// session samples, so a session keeps the version it was created with.
const (
	// Dsyev is gonum's dsyev bit for bit (Factorize): the numerics of every
	// session created before version 2 existed.
	Dsyev = 1
	// Blocked is dsyev with the tridiagonal reduction's two kernels
	// rewritten (FactorizeBlocked): the symmetric matrix-vector product of
	// each reflector on unit-stride copies with gonum's assembly kernels,
	// and the blocked rank-2k update of the trailing matrix split into
	// fixed row blocks run in parallel. Same algorithm as Dsyev, different
	// rounding.
	Blocked = 2
	// DivideConquer is version Blocked's reduction (with faster kernels)
	// followed, above order 96, by LAPACK's divide and conquer (dstedc) on
	// the tridiagonal matrix and the product of the two orthogonal factors
	// (FactorizeDivideConquer, dc.go), as dsyevd; up to order 32 it is
	// version Blocked bit for bit.
	DivideConquer = 3
	// Latest is the version of new sessions.
	Latest = Blocked
)

// syr2kBlocks is the fixed number of row blocks of the rank-2k update. Each
// entry of the result is computed by the same operations in the same order
// whatever block holds it, so the partition never changes the bits; it only
// bounds the parallelism.
const syr2kBlocks = 8

// minSyr2kParallel is the smallest trailing order updated in parallel.
const minSyr2kParallel = 96

// FactorizeVersion is Factorize with the numerics of the given version
// (Dsyev, Blocked or DivideConquer); it returns false for an unknown
// version.
func (ws *Workspace) FactorizeVersion(version, n int, a []float64, lda int, w []float64) bool {
	switch version {
	case Dsyev:
		return ws.Factorize(n, a, lda, w)
	case Blocked:
		return ws.FactorizeBlocked(n, a, lda, w)
	case DivideConquer:
		return ws.FactorizeDivideConquer(n, a, lda, w)
	}
	return false
}

// FactorizeBlocked is Factorize (same input, output and failure) with the
// tridiagonal reduction of version Blocked. Its result does not depend on
// GOMAXPROCS (tested).
func (ws *Workspace) FactorizeBlocked(n int, a []float64, lda int, w []float64) bool {
	return ws.factorize(n, a, lda, w, Blocked)
}

// sytrd is gonum's Dsytrd (upper) with its own latrd and syr2k (syr2kTiled
// if tiled): it reduces the symmetric matrix in the upper triangle of a to
// tridiagonal form T = Qᵀ A Q, leaving the reflectors in a as Dorgtr
// expects them.
func (ws *Workspace) sytrd(n int, a []float64, lda int, d, e, tau []float64, tiled bool) {
	nb := impl.Ilaenv(1, "DSYTRD", "U", n, -1, -1, -1)
	nx := n
	if 1 < nb && nb < n {
		nx = max(nb, impl.Ilaenv(3, "DSYTRD", "U", n, -1, -1, -1))
	} else {
		nb = 1
	}
	if nx >= n {
		impl.Dsytd2(blas.Upper, n, a, lda, d, e, tau)
		return
	}
	ws.growBlocked(n, nb)
	wk, ldw := ws.work, nb
	kk := n - ((n-nx+nb-1)/nb)*nb
	for i := n - nb; i >= kk; i -= nb {
		// Reduce columns i..i+nb−1, keeping W for the update.
		ws.latrd(i+nb, nb, a, lda, e, tau, wk, ldw, tiled)
		// A(0:i, 0:i) −= V Wᵀ + W Vᵀ, V = A(0:i, i:i+nb).
		if tiled {
			ws.syr2kTiled(i, nb, a[i:], lda, wk, ldw, a, lda)
		} else {
			ws.syr2k(i, nb, a[i:], lda, wk, ldw, a, lda)
		}
		for j := i; j < i+nb; j++ {
			a[(j-1)*lda+j] = e[j-1]
			d[j] = a[j*lda+j]
		}
	}
	impl.Dsytd2(blas.Upper, kk, a, lda, d, e, tau)
}

// growBlocked sizes the buffers of sytrd.
func (ws *Workspace) growBlocked(n, nb int) {
	if len(ws.xbuf) < n {
		ws.xbuf = make([]float64, n)
		ws.ybuf = make([]float64, n)
	}
	if len(ws.vt) < nb*n {
		ws.vt = make([]float64, nb*n)
		ws.wt = make([]float64, nb*n)
	}
}

// latrd is gonum's Dlatrd (upper) with the symmetric product on unit-stride
// copies (symvUpper, or symvFused if fused).
func (ws *Workspace) latrd(n, nb int, a []float64, lda int, e, tau, w []float64, ldw int, fused bool) {
	bi := blas64.Implementation()
	for i := n - 1; i >= n-nb; i-- {
		iw := i - n + nb
		if i < n-1 {
			// Update A(0:i+1, i).
			bi.Dgemv(blas.NoTrans, i+1, n-i-1, -1, a[i+1:], lda, w[i*ldw+iw+1:], 1, 1, a[i:], lda)
			bi.Dgemv(blas.NoTrans, i+1, n-i-1, -1, w[iw+1:], ldw, a[i*lda+i+1:], 1, 1, a[i:], lda)
		}
		if i > 0 {
			// The reflector H(i) that annihilates A(0:i−1, i).
			e[i-1], tau[i-1] = impl.Dlarfg(i, a[(i-1)*lda+i], a[i:], lda)
			a[(i-1)*lda+i] = 1

			// W(0:i, iw).
			if fused {
				ws.symvFused(i, a, lda, a[i:], lda, w[iw:], ldw)
			} else {
				ws.symvUpper(i, a, lda, a[i:], lda, w[iw:], ldw)
			}
			if i < n-1 {
				bi.Dgemv(blas.Trans, i, n-i-1, 1, w[iw+1:], ldw, a[i:], lda, 0, w[(i+1)*ldw+iw:], ldw)
				bi.Dgemv(blas.NoTrans, i, n-i-1, -1, a[i+1:], lda, w[(i+1)*ldw+iw:], ldw, 1, w[iw:], ldw)
				bi.Dgemv(blas.Trans, i, n-i-1, 1, a[i+1:], lda, a[i:], lda, 0, w[(i+1)*ldw+iw:], ldw)
				bi.Dgemv(blas.NoTrans, i, n-i-1, -1, w[iw+1:], ldw, w[(i+1)*ldw+iw:], ldw, 1, w[iw:], ldw)
			}
			bi.Dscal(i, tau[i-1], w[iw:], ldw)
			alpha := -0.5 * tau[i-1] * bi.Ddot(i, w[iw:], ldw, a[i:], lda)
			bi.Daxpy(i, alpha, a[i:], lda, w[iw:], ldw)
		}
	}
}

// symvUpper sets y = A x for the symmetric m×m matrix in the upper triangle
// of a, with x and y strided: each row of the triangle is read once, as a
// dot product with x (its own entry of y) and an axpy into the entries of y
// to its right, both on unit-stride copies.
func (ws *Workspace) symvUpper(m int, a []float64, lda int, x []float64, incx int, y []float64, incy int) {
	bi := blas64.Implementation()
	xc, yc := ws.xbuf[:m], ws.ybuf[:m]
	for r := range m {
		xc[r] = x[r*incx]
		yc[r] = 0
	}
	for r := range m {
		row := a[r*lda+r : r*lda+m]
		yc[r] += bi.Ddot(m-r, row, 1, xc[r:], 1)
		if r+1 < m {
			bi.Daxpy(m-r-1, xc[r], row[1:], 1, yc[r+1:], 1)
		}
	}
	for r := range m {
		y[r*incy] = yc[r]
	}
}

// syr2k sets the upper triangle of the m×m matrix c to c − V Wᵀ − W Vᵀ, V
// and W m×k (row-major, strides ldv and ldw). Row r of the result is
// c(r, r:m) − Σ_l (V(r,l) W(r:m,l)ᵀ + W(r,l) V(r:m,l)ᵀ), summed over l in
// increasing order as unit-stride axpys on transposed copies of V and W;
// rows are updated in syr2kBlocks fixed blocks of about equal work, in
// parallel when m is large.
func (ws *Workspace) syr2k(m, k int, v []float64, ldv int, w []float64, ldw int, c []float64, ldc int) {
	if m == 0 {
		return
	}
	vt, wt := ws.vt[:k*m], ws.wt[:k*m]
	for r := range m {
		for l := range k {
			vt[l*m+r] = v[r*ldv+l]
			wt[l*m+r] = w[r*ldw+l]
		}
	}
	rows := func(lo, hi int) {
		bi := blas64.Implementation()
		for r := lo; r < hi; r++ {
			cr := c[r*ldc+r : r*ldc+m]
			for l := range k {
				bi.Daxpy(m-r, -v[r*ldv+l], wt[l*m+r:(l+1)*m], 1, cr, 1)
				bi.Daxpy(m-r, -w[r*ldw+l], vt[l*m+r:(l+1)*m], 1, cr, 1)
			}
		}
	}
	if m < minSyr2kParallel {
		rows(0, m)
		return
	}
	// Block b ends where the rows above it hold b/syr2kBlocks of the
	// triangle's m(m+1)/2 entries.
	var bounds [syr2kBlocks + 1]int
	bounds[syr2kBlocks] = m
	for b := 1; b < syr2kBlocks; b++ {
		f := float64(b) / syr2kBlocks
		bounds[b] = int(float64(m) * (1 - math.Sqrt(1-f)))
	}
	var wg sync.WaitGroup
	for b := 1; b < syr2kBlocks; b++ {
		if bounds[b] < bounds[b+1] {
			wg.Go(func() { rows(bounds[b], bounds[b+1]) })
		}
	}
	rows(bounds[0], bounds[1])
	wg.Wait()
}
