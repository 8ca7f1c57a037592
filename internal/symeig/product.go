package symeig

// Product computes matrix products as version DivideConquer does (gemm):
// every entry summed in one fixed order, each product rounded then added,
// whatever GOMAXPROCS and the processor. For callers whose results must
// be reproducible bit for bit under that version. The zero value is ready;
// a Product is not safe for concurrent use.
type Product struct {
	g  gemmWork
	bt []float64
}

// MulTransB sets the m×n matrix c to a·bᵀ, a m×k and b n×k, all row-major
// (strides lda, ldb, ldc); entry (i, j) is Σ_l a[i][l]·b[j][l] summed in
// increasing l from 0. c must not overlap a or b.
func (p *Product) MulTransB(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if len(p.bt) < k*n {
		p.bt = make([]float64, k*n)
	}
	bt := p.bt[:k*n]
	for j := range n {
		row := b[j*ldb : j*ldb+k]
		for l, v := range row {
			bt[l*n+j] = v
		}
	}
	p.g.gemm(m, n, k, a, lda, bt, n, c, ldc)
}
