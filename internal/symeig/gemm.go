package symeig

import (
	"runtime"
	"sync"
)

// gemm is the matrix product of version DivideConquer: C = A·B, row-major,
// A m×k, B k×n. Every entry is summed as the loop
//
//	c := 0.0
//	for l := range k { c += float64(a[i][l] * b[l][j]) }
//
// sums it, each product rounded and added in increasing l, in that order
// whatever the blocking, the kernel (gemm4x8 in AVX, without fused
// multiply-adds, or gemmTileGo) and the goroutine that computes it; so the
// bits depend on neither GOMAXPROCS nor the processor (tested).
//
// The blocking is the usual one: B in column panels of gemmNR and row
// blocks of gemmKC, packed; A in row panels of gemmMR within blocks of
// gemmMC rows, packed; the row blocks shared between goroutines.
const (
	gemmMR = 4
	gemmNR = 8
	gemmKC = 256
	gemmMC = 64
)

// minGemmParallel is the fewest multiply-adds (m·n·k) run on several
// goroutines.
const minGemmParallel = 1 << 18

// gemmWork holds gemm's packing buffers.
type gemmWork struct {
	bp []float64   // B(pc:pc+kc, :) in panels of gemmNR columns
	ap [][]float64 // per goroutine: A(ic:ic+mc, pc:pc+kc) in panels of gemmMR rows
	// plain runs the Go tile even where the AVX kernel would (a processor
	// without AVX; the tests compare the two).
	plain bool
}

// gemm sets c = a·b (see above) on up to GOMAXPROCS goroutines. c must
// not overlap a or b.
func (g *gemmWork) gemm(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	g.mul(m, n, k, a, lda, b, ldb, c, ldc, false, runtime.GOMAXPROCS(0))
}

// mul sets c = a·b, or c = c + a·b if acc (each entry then starts its sum
// from c instead of 0), on up to maxWorkers goroutines.
func (g *gemmWork) mul(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int, acc bool, maxWorkers int) {
	g.mulT(m, n, k, a, lda, b, ldb, false, c, ldc, acc, maxWorkers)
}

// mulT is mul with B = bᵀ (b n×k, stride ldb) if transB.
func (g *gemmWork) mulT(m, n, k int, a []float64, lda int, b []float64, ldb int, transB bool, c []float64, ldc int, acc bool, maxWorkers int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		if !acc {
			for i := range m {
				clear(c[i*ldc : i*ldc+n])
			}
		}
		return
	}
	par := 1
	if m*n*k >= minGemmParallel {
		par = max(1, maxWorkers)
	}
	npanels := (n + gemmNR - 1) / gemmNR
	blocks := (m + gemmMC - 1) / gemmMC
	// Few row blocks (m small, as λ or the active update's points against
	// n): the goroutines share the column panels instead, each packing its
	// own panels of B. Either way every entry is the same kernel's.
	byCols := par > 1 && blocks < 2*par && npanels >= 2*par
	workers := min(par, blocks)
	if byCols {
		workers = par
	}
	if need := min(gemmKC, k) * npanels * gemmNR; len(g.bp) < need {
		g.bp = make([]float64, need)
	}
	for len(g.ap) < workers {
		g.ap = append(g.ap, make([]float64, gemmKC*gemmMC))
	}
	for pc := 0; pc < k; pc += gemmKC {
		kc := min(gemmKC, k-pc)
		first := pc == 0 && !acc
		pack := func(p0, p1 int) {
			if transB {
				g.packBT(kc, p0, p1, n, b[pc:], ldb)
			} else {
				g.packB(kc, p0, p1, n, b[pc*ldb:], ldb)
			}
		}
		switch {
		case byCols:
			cols := func(wk int) {
				p0, p1 := wk*npanels/workers, (wk+1)*npanels/workers
				pack(p0, p1)
				for ib := range blocks {
					g.block(ib, wk, p0, p1, m, n, kc, a[pc:], lda, c, ldc, first)
				}
			}
			var wg sync.WaitGroup
			for wk := 1; wk < workers; wk++ {
				wg.Go(func() { cols(wk) })
			}
			cols(0)
			wg.Wait()
		case workers == 1:
			pack(0, npanels)
			for ib := range blocks {
				g.block(ib, 0, 0, npanels, m, n, kc, a[pc:], lda, c, ldc, first)
			}
		default:
			pack(0, npanels)
			var wg sync.WaitGroup
			for wk := 1; wk < workers; wk++ {
				wg.Go(func() {
					for ib := wk; ib < blocks; ib += workers {
						g.block(ib, wk, 0, npanels, m, n, kc, a[pc:], lda, c, ldc, first)
					}
				})
			}
			for ib := 0; ib < blocks; ib += workers {
				g.block(ib, 0, 0, npanels, m, n, kc, a[pc:], lda, c, ldc, first)
			}
			wg.Wait()
		}
	}
}

// packBT is packB for B = bᵀ, b n×kc with stride ldb: row l of panel p
// holds b(p·gemmNR+jj, l).
func (g *gemmWork) packBT(kc, p0, p1, n int, b []float64, ldb int) {
	for p := p0; p < p1; p++ {
		j0 := p * gemmNR
		w := min(gemmNR, n-j0)
		dst := g.bp[p*kc*gemmNR : (p+1)*kc*gemmNR]
		for jj := range gemmNR {
			if jj >= w {
				for l := range kc {
					dst[l*gemmNR+jj] = 0
				}
				continue
			}
			src := b[(j0+jj)*ldb : (j0+jj)*ldb+kc]
			for l, v := range src {
				dst[l*gemmNR+jj] = v
			}
		}
	}
}

// packB copies panels p0 … p1−1 of B(0:kc, 0:n) into g.bp: panel p
// holds columns p·gemmNR … p·gemmNR+gemmNR−1, row l of the panel at
// bp[p·kc·gemmNR + l·gemmNR:], zero past column n.
func (g *gemmWork) packB(kc, p0, p1, n int, b []float64, ldb int) {
	for p := p0; p < p1; p++ {
		j0 := p * gemmNR
		w := min(gemmNR, n-j0)
		dst := g.bp[p*kc*gemmNR : (p+1)*kc*gemmNR]
		for l := range kc {
			row := dst[l*gemmNR : (l+1)*gemmNR]
			copy(row, b[l*ldb+j0:l*ldb+j0+w])
			clear(row[w:])
		}
	}
}

// block computes rows ib·gemmMC … of C, in the column panels p0 … p1−1,
// for one row block of B (kc rows), with goroutine wk's packing buffer:
// C += A·B, or C = A·B if first.
func (g *gemmWork) block(ib, wk, p0, p1, m, n, kc int, a []float64, lda int, c []float64, ldc int, first bool) {
	i0 := ib * gemmMC
	mc := min(gemmMC, m-i0)
	ap := g.ap[wk]
	// Pack A(i0:i0+mc, 0:kc): panel q holds rows q·gemmMR…, column l at
	// ap[q·kc·gemmMR + l·gemmMR:], zero past row mc.
	for q := 0; q*gemmMR < mc; q++ {
		dst := ap[q*kc*gemmMR : (q+1)*kc*gemmMR]
		h := min(gemmMR, mc-q*gemmMR)
		r0 := i0 + q*gemmMR
		if h == gemmMR {
			s0 := a[r0*lda : r0*lda+kc]
			s1 := a[(r0+1)*lda : (r0+1)*lda+kc]
			s2 := a[(r0+2)*lda : (r0+2)*lda+kc]
			s3 := a[(r0+3)*lda : (r0+3)*lda+kc]
			for l := range kc {
				d := dst[l*gemmMR : l*gemmMR+4 : l*gemmMR+4]
				d[0], d[1], d[2], d[3] = s0[l], s1[l], s2[l], s3[l]
			}
			continue
		}
		for r := range gemmMR {
			if r >= h {
				for l := range kc {
					dst[l*gemmMR+r] = 0
				}
				continue
			}
			src := a[(r0+r)*lda:]
			for l := range kc {
				dst[l*gemmMR+r] = src[l]
			}
		}
	}
	for p := p0; p < p1; p++ {
		j0 := p * gemmNR
		w := min(gemmNR, n-j0)
		bp := g.bp[p*kc*gemmNR : (p+1)*kc*gemmNR]
		for q := 0; q*gemmMR < mc; q++ {
			h := min(gemmMR, mc-q*gemmMR)
			apq := ap[q*kc*gemmMR : (q+1)*kc*gemmMR]
			ct := c[(i0+q*gemmMR)*ldc+j0:]
			switch {
			case !haveGemm4x8 || g.plain:
				gemmTileGo(kc, h, w, apq, bp, ct, ldc, first)
			case h == gemmMR && w == gemmNR:
				gemm4x8(kc, apq, bp, ct, ldc, first)
			default:
				// A partial tile: the packed panels are zero past it, so
				// the kernel runs on a full copy and only the tile goes
				// back.
				var tile [gemmMR * gemmNR]float64
				if !first {
					for r := range h {
						copy(tile[r*gemmNR:r*gemmNR+w], ct[r*ldc:r*ldc+w])
					}
				}
				gemm4x8(kc, apq, bp, tile[:], gemmNR, first)
				for r := range h {
					copy(ct[r*ldc:r*ldc+w], tile[r*gemmNR:r*gemmNR+w])
				}
			}
		}
	}
}

// gemmTileGo is gemm4x8 for an h×w corner of the tile (h ≤ gemmMR, w ≤
// gemmNR): the same operations in the same order.
func gemmTileGo(kc, h, w int, ap, bp, c []float64, ldc int, first bool) {
	for r := range h {
		cr := c[r*ldc : r*ldc+w]
		for j := range w {
			var s float64
			if !first {
				s = cr[j]
			}
			for l := range kc {
				s += float64(ap[l*gemmMR+r] * bp[l*gemmNR+j])
			}
			cr[j] = s
		}
	}
}
