package symeig

import (
	"runtime"
	"sync"
)

// The back-transformation of version DivideConquer: the eigenvectors of A
// are Q Z, Q = H_{n−2} ⋯ H_1 H_0 the reflectors of the reduction (as gonum's
// Dsytrd leaves them for uplo = Upper: H_p = I − τ_p v_p v_pᵀ, v_p[p] = 1,
// v_p[0:p] = A[0:p, p+1], v_p[p+1:] = 0) and Z the eigenvectors of T. As
// LAPACK's dormtr (dormql), the reflectors are applied in blocks of ormNB,
// each block H_{p0+nb−1} ⋯ H_{p0} = I − V Tᵀ Vᵀ with T the upper triangular
// factor of dlarft (direction forward), so that Z ← Z + Ṽ (Vᵀ Z) with
// Ṽ = −V Tᵀ formed once per block: two products by gemm. The columns of Z are split
// into slabs, one per goroutine, each taken through every block: a column's
// result depends on that column alone, so the split does not change the
// bits.

// ormNB is the number of reflectors in a block.
const ormNB = 32

// ormWork holds the back-transformation's buffers.
type ormWork struct {
	vt   []float64   // row p: v_p (length n, zero past p)
	negV []float64   // one block's −V, row-major (p0+nb)×nb
	t    []float64   // one block's T, nb×nb upper triangular
	tt   []float64   // Tᵀ
	vtil [][]float64 // per block: Ṽ = −V Tᵀ, row-major (p0+nb)×nb
	mm   gemmWork
	slab []ormSlab // per goroutine
}

// ormSlab is one goroutine's scratch.
type ormSlab struct {
	w  []float64 // Vᵀ C, nb × slab width
	mm gemmWork
}

// prepare reads the reflectors in a (stride lda) and tau, as
// Dsytrd(Upper) left them, for apply: v_p, and Ṽ of each block.
func (o *ormWork) prepare(n int, a []float64, lda int, tau []float64) {
	nref := n - 1
	if len(o.vt) < n*n {
		o.vt = make([]float64, n*n)
	}
	vt := o.vt[:n*n]
	for p := range nref {
		row := vt[p*n : (p+1)*n]
		for r := range p {
			row[r] = a[r*lda+p+1]
		}
		row[p] = 1
		clear(row[p+1:])
	}
	clear(vt[nref*n:])

	// Ṽ = −V Tᵀ of each block.
	nblocks := (nref + ormNB - 1) / ormNB
	for len(o.vtil) < nblocks {
		o.vtil = append(o.vtil, nil)
	}
	if len(o.negV) < n*ormNB {
		o.negV = make([]float64, n*ormNB)
		o.t = make([]float64, ormNB*ormNB)
		o.tt = make([]float64, ormNB*ormNB)
	}
	for bk := range nblocks {
		p0 := bk * ormNB
		nb := min(ormNB, nref-p0)
		m := p0 + nb
		if len(o.vtil[bk]) < m*nb {
			o.vtil[bk] = make([]float64, m*nb)
		}
		negV, t, tt := o.negV[:m*nb], o.t[:nb*nb], o.tt[:nb*nb]
		for r := range m {
			for j := range nb {
				negV[r*nb+j] = -vt[(p0+j)*n+r]
			}
		}
		o.larftForward(nb, m, vt[p0*n:], n, negV, tau[p0:p0+nb], t, tt)
		for i := range nb {
			for j := range nb {
				tt[i*nb+j] = t[j*nb+i]
			}
		}
		o.mm.mul(m, nb, nb, negV, nb, tt, nb, o.vtil[bk][:m*nb], nb, false, 1)
	}
}

// apply sets c (n×n, row-major, stride ldc) to Q c, Q as prepare read it.
func (o *ormWork) apply(n int, c []float64, ldc int) {
	if n < 2 {
		return
	}
	nblocks := (n - 1 + ormNB - 1) / ormNB

	workers := 1
	if n >= minOrmParallel {
		workers = max(1, min(runtime.GOMAXPROCS(0), n/minOrmSlab))
	}
	for len(o.slab) < workers {
		o.slab = append(o.slab, ormSlab{})
	}
	for i := range o.slab {
		o.slab[i].mm.plain = o.mm.plain
	}
	if workers == 1 {
		o.applySlab(0, n, n, nblocks, c, ldc, &o.slab[0])
		return
	}
	// Slab boundaries on multiples of gemmNR.
	bound := func(k int) int { return (k * n / workers) / gemmNR * gemmNR }
	var wg sync.WaitGroup
	for k := 1; k < workers; k++ {
		hi := n
		if k+1 < workers {
			hi = bound(k + 1)
		}
		wg.Go(func() { o.applySlab(bound(k), hi, n, nblocks, c, ldc, &o.slab[k]) })
	}
	o.applySlab(0, bound(1), n, nblocks, c, ldc, &o.slab[0])
	wg.Wait()
}

// Parallel back-transformation: from order minOrmParallel, slabs of at
// least minOrmSlab columns.
const (
	minOrmParallel = 128
	minOrmSlab     = 64
)

// applySlab applies every block, in order, to columns [lo, hi) of c.
func (o *ormWork) applySlab(lo, hi, n, nblocks int, c []float64, ldc int, s *ormSlab) {
	w := hi - lo
	if w <= 0 {
		return
	}
	if len(s.w) < ormNB*w {
		s.w = make([]float64, ormNB*w)
	}
	cs := c[lo:]
	for bk := range nblocks {
		p0 := bk * ormNB
		nb := min(ormNB, n-1-p0)
		m := p0 + nb
		vtil, wv := o.vtil[bk][:m*nb], s.w[:nb*w]
		// W = Vᵀ C(0:m, lo:hi).
		s.mm.mul(nb, w, m, o.vt[p0*n:], n, cs, ldc, wv, w, false, 1)
		// C(0:m, lo:hi) += Ṽ W.
		s.mm.mul(m, w, nb, vtil, nb, wv, w, cs, ldc, true, 1)
	}
}

// larftForward is dlarft(DIRECT = 'F', STOREV = 'R' on vᵀ): the upper
// triangular T (nb×nb, row-major) with H_0 H_1 ⋯ H_{nb−1} = I − V T Vᵀ,
// V's columns the rows of vt (stride ldv, length m), H_j = I − τ_j v_j v_jᵀ.
// T[j, j] = τ_j, T[0:j, j] = −τ_j T[0:j, 0:j] (V[:, 0:j]ᵀ v_j), with the
// Gram matrix −VᵀV = vt · negV (negV = −V, m×nb) from gemm into g.
func (o *ormWork) larftForward(nb, m int, vt []float64, ldv int, negV []float64, tau, t, g []float64) {
	o.mm.mul(nb, nb, m, vt, ldv, negV, nb, g, nb, false, 1)
	clear(t[:nb*nb])
	for j := range nb {
		if tau[j] == 0 {
			continue
		}
		for i := range j {
			t[i*nb+j] = float64(tau[j] * g[i*nb+j])
		}
		// T[0:j, j] = T[0:j, 0:j] T[0:j, j], upper triangular, top down.
		for i := range j {
			var s float64
			for l := i; l < j; l++ {
				s += float64(t[i*nb+l] * t[l*nb+j])
			}
			t[i*nb+j] = s
		}
		t[j*nb+j] = tau[j]
	}
}
