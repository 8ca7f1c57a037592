package symeig

import (
	"runtime"
	"sync"
)

// syr2kTiled is syr2k (version DivideConquer's reduction): the upper
// triangle of the m×m matrix c becomes c − V Wᵀ − W Vᵀ, V and W m×k, each
// entry c(r, j) summed as c + (−V(r,0)) W(j,0) + (−W(r,0)) V(j,0) +
// (−V(r,1)) W(j,1) + … in that order, each product rounded then added (as
// syr2k's axpys do it, but without skipping a zero multiplier). It is the
// product of the m×2k matrix A = (−V(:,0), −W(:,0), −V(:,1), …) and the
// 2k×m matrix B = (W(:,0), V(:,0), W(:,1), …)ᵀ by gemm's tiles, those of
// the upper triangle only; tiles across the diagonal are computed on a
// copy and only their upper part is written back. Row panels are dealt to
// goroutines in turn, which never changes an entry's operations.
func (ws *Workspace) syr2kTiled(m, k int, v []float64, ldv int, w []float64, ldw int, c []float64, ldc int) {
	if m == 0 || k == 0 {
		return
	}
	kk := 2 * k
	npanels := (m + gemmNR - 1) / gemmNR
	g := &ws.dc.mm
	g.plain = ws.plain
	if need := kk * npanels * gemmNR; len(g.bp) < need {
		g.bp = make([]float64, need)
	}
	bp := g.bp[:kk*npanels*gemmNR]
	for p := range npanels {
		j0 := p * gemmNR
		dst := bp[p*kk*gemmNR : (p+1)*kk*gemmNR]
		for l := range k {
			rw, rv := dst[2*l*gemmNR:(2*l+1)*gemmNR], dst[(2*l+1)*gemmNR:(2*l+2)*gemmNR]
			for jj := range gemmNR {
				if j := j0 + jj; j < m {
					rw[jj], rv[jj] = w[j*ldw+l], v[j*ldv+l]
				} else {
					rw[jj], rv[jj] = 0, 0
				}
			}
		}
	}
	workers := 1
	if m >= minSyr2kParallel {
		workers = max(1, min(runtime.GOMAXPROCS(0), m/gemmMR))
	}
	for len(g.ap) < workers {
		g.ap = append(g.ap, nil)
	}
	for i := range workers {
		if len(g.ap[i]) < kk*gemmMR {
			g.ap[i] = make([]float64, max(kk*gemmMR, gemmKC*gemmMC))
		}
	}
	npan := (m + gemmMR - 1) / gemmMR
	rows := func(wk int) {
		ap := g.ap[wk][:kk*gemmMR]
		var tile [gemmMR * gemmNR]float64
		for q := wk; q < npan; q += workers {
			r0 := q * gemmMR
			h := min(gemmMR, m-r0)
			for r := range gemmMR {
				if r >= h {
					for l := range kk {
						ap[l*gemmMR+r] = 0
					}
					continue
				}
				vr, wr := v[(r0+r)*ldv:], w[(r0+r)*ldw:]
				for l := range k {
					ap[2*l*gemmMR+r] = -vr[l]
					ap[(2*l+1)*gemmMR+r] = -wr[l]
				}
			}
			for p := r0 / gemmNR; p < npanels; p++ {
				j0 := p * gemmNR
				wd := min(gemmNR, m-j0)
				bpp := bp[p*kk*gemmNR : (p+1)*kk*gemmNR]
				ct := c[r0*ldc+j0:]
				if h == gemmMR && wd == gemmNR && j0 >= r0+gemmMR-1 {
					if haveGemm4x8 && !g.plain {
						gemm4x8(kk, ap, bpp, ct, ldc, false)
					} else {
						gemmTileGo(kk, h, wd, ap, bpp, ct, ldc, false)
					}
					continue
				}
				// Across the diagonal or the edge: on a copy.
				for r := range h {
					copy(tile[r*gemmNR:r*gemmNR+wd], ct[r*ldc:r*ldc+wd])
				}
				if haveGemm4x8 && !g.plain {
					gemm4x8(kk, ap, bpp, tile[:], gemmNR, false)
				} else {
					gemmTileGo(kk, h, wd, ap, bpp, tile[:], gemmNR, false)
				}
				for r := range h {
					for jj := max(0, r0+r-j0); jj < wd; jj++ {
						ct[r*ldc+jj] = tile[r*gemmNR+jj]
					}
				}
			}
		}
	}
	if workers == 1 {
		rows(0)
		return
	}
	var wg sync.WaitGroup
	for wk := 1; wk < workers; wk++ {
		wg.Go(func() { rows(wk) })
	}
	rows(0)
	wg.Wait()
}
