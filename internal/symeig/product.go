package symeig

import "runtime"

// Product computes matrix products as version DivideConquer does (gemm):
// every entry summed in one fixed order, each product rounded then added,
// whatever GOMAXPROCS and the processor. For callers whose results must
// be reproducible bit for bit under that version. The zero value is ready;
// a Product is not safe for concurrent use.
type Product struct {
	g gemmWork
}

// MulTransB sets the m×n matrix c to a·bᵀ, a m×k and b n×k, all row-major
// (strides lda, ldb, ldc); entry (i, j) is Σ_l a[i][l]·b[j][l] summed in
// increasing l from 0. c must not overlap a or b.
func (p *Product) MulTransB(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	p.g.mulT(m, n, k, a, lda, b, ldb, true, c, ldc, false, runtime.GOMAXPROCS(0))
}

// Mul sets the m×n matrix c to a·b, a m×k and b k×n, all row-major
// (strides lda, ldb, ldc); entry (i, j) is Σ_l a[i][l]·b[l][j] summed in
// increasing l from 0, each product rounded then added: the bits of an
// axpy of each row of b into a zeroed row of c in turn (a zero
// multiplier can change the sign of a zero only). c must not overlap a
// or b.
func (p *Product) Mul(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	p.g.mul(m, n, k, a, lda, b, ldb, c, ldc, false, runtime.GOMAXPROCS(0))
}
