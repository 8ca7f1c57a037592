// Package symeig is the symmetric eigendecomposition C = B D² Bᵀ that
// CMA-ES samples from every generation (Algorithm 1 of Loshchilov,
// Schoenauer, Sebag, Hansen, PPSN XIII 2014, arXiv:1406.2623): gonum's
// LAPACK dsyev (Dsytrd, Dorgtr, Dsteqr) with one change, in how the
// eigenvectors are accumulated.
//
// Dsteqr's implicit QL/QR iterations apply each sweep's plane rotations to
// the columns of Z (the orthogonal matrix of the tridiagonal reduction) as
// soon as they are made: a strided pass over all of Z per sweep, more than
// half of a generation at n = 100. Here the rotations are logged instead and
// applied when the iterations end, one row of Z at a time (a rotation from
// the right mixes two entries of each row and never two rows), the rows
// split between goroutines; on amd64 eight rows at a time in SSE2
// (rot_amd64.s), two rows to a register. Every entry goes through the same
// floating-point operations in the same order as in gonum, so the result is
// bit for bit lapack64.Syev's whatever the number of goroutines (tested).
//
// That is numerics version Dsyev (Factorize). Version Blocked
// (FactorizeBlocked, blocked.go) replaces the reduction's kernels and so
// rounds differently; callers that must reproduce a run keep its version.
//
// Dorgtr, which forms Q, runs on its own goroutine while the QL/QR
// iterations run (they read only the tridiagonal matrix). The iteration
// below (iterate, finish) is gonum's Dsteqr (lapack/gonum/dsteqr.go, gonum
// v0.17.0, BSD-3-Clause, Copyright ©2016 The Gonum Authors) with the
// eigenvalue-only and tridiagonal-only branches left out.
package symeig

import (
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"
)

// Machine parameters as gonum's LAPACK defines them.
const (
	dlamchE = 0x1p-53 // ε
	dlamchP = 2 * dlamchE
	dlamchS = 0x1p-1022 // safe minimum
)

// minRowsPerWorker is the fewest rows of Z a goroutine applies the logged
// rotations to; below it the work is done on the calling goroutine.
const minRowsPerWorker = 32

var impl gonum.Implementation

// Workspace holds the buffers of Factorize for one order n, reused from call
// to call. The zero value is ready; a Workspace is not safe for concurrent
// use.
type Workspace struct {
	n        int
	work     []float64 // Dlansy, Dsytrd, Dorgtr
	e, tau   []float64 // off-diagonal of T, reflector scalars
	sweepC   []float64 // one sweep's rotations, as Dsteqr keeps them
	sweepS   []float64
	logC     []float64 // every rotation of every sweep, in order
	logS     []float64
	sweeps   []sweep
	parallel int // goroutines for the rotations; 0 = GOMAXPROCS

	panels     [][]float64 // per rotating goroutine: eight rows, transposed
	xbuf, ybuf []float64   // FactorizeBlocked: unit-stride x and y of symvUpper
	vt, wt     []float64   // FactorizeBlocked: transposed panels of syr2k
	symvY      []float64   // FactorizeDivideConquer: symvFused's partial products
	// plain runs the Go and SSE2 kernels even where the AVX ones would, as
	// on a processor without AVX (the tests compare the two).
	plain bool
	dc    dcWork // FactorizeDivideConquer
}

// sweep is one call of Dlasr(Right, Variable, dir) in gonum's Dsteqr:
// count rotations of the planes (col+j, col+j+1), j = 0..count−1, taken in
// increasing j if forward and decreasing j otherwise; their cosines and
// sines are logC, logS[off : off+count].
type sweep struct {
	col, count, off int
	forward         bool
}

// Factorize overwrites the symmetric n×n matrix held in the upper triangle
// of a (row-major, stride lda) with its eigenvectors, as columns, and puts
// the eigenvalues in ascending order in w. It returns false when the QL/QR
// iteration does not converge (a and w are then unspecified), as
// lapack64.Syev does.
func (ws *Workspace) Factorize(n int, a []float64, lda int, w []float64) bool {
	return ws.factorize(n, a, lda, w, Dsyev)
}

// factorize is dsyev: scale, reduce to tridiagonal form (gonum's Dsytrd, or
// version Blocked's sytrd in later versions, with syr2kTiled and
// symvFused in version DivideConquer), form Q and iterate
// (orgtrSteqr) or, in version DivideConquer above order dcMinOrder, divide
// and conquer and multiply (orgtrStedc), scale back.
func (ws *Workspace) factorize(n int, a []float64, lda int, w []float64, version int) bool {
	if n == 0 {
		return true
	}
	ws.grow(n)
	if n == 1 {
		w[0] = a[0]
		a[0] = 1
		return true
	}

	// Scale the matrix to the allowable range if necessary (dsyev).
	smlnum := dlamchS / dlamchP
	rmin, rmax := math.Sqrt(smlnum), math.Sqrt(1/smlnum)
	anrm := impl.Dlansy(lapack.MaxAbs, blas.Upper, n, a, lda, ws.work)
	var sigma float64
	switch {
	case anrm > 0 && anrm < rmin:
		sigma = rmin / anrm
	case anrm > rmax:
		sigma = rmax / anrm
	}
	if sigma != 0 {
		impl.Dlascl(lapack.UpperTri, 0, 0, 1, sigma, n, n, a, lda)
	}

	if version == Dsyev {
		impl.Dsytrd(blas.Upper, n, a, lda, w, ws.e, ws.tau, ws.work, len(ws.work))
	} else {
		ws.sytrd(n, a, lda, w, ws.e, ws.tau, version == DivideConquer)
	}
	if version == DivideConquer && n > dcMinOrder {
		if !ws.orgtrStedc(n, a, lda, w) {
			return false
		}
	} else if !ws.orgtrSteqr(n, a, lda, w) {
		return false
	}
	if sigma != 0 {
		blas64.Implementation().Dscal(n, 1/sigma, w, 1)
	}
	return true
}

// grow sizes the buffers for order n, with the work length dsyev would use
// (the blocked reduction depends on it).
func (ws *Workspace) grow(n int) {
	if ws.n == n && ws.work != nil {
		ws.logC, ws.logS, ws.sweeps = ws.logC[:0], ws.logS[:0], ws.sweeps[:0]
		return
	}
	nb := impl.Ilaenv(1, "DSYTRD", "U", n, -1, -1, -1)
	ws.n = n
	ws.work = make([]float64, max(1, nb*n, n))
	ws.e = make([]float64, max(1, n-1))
	ws.tau = make([]float64, max(1, n-1))
	ws.sweepC = make([]float64, max(1, n-1))
	ws.sweepS = make([]float64, max(1, n-1))
	ws.logC, ws.logS, ws.sweeps = ws.logC[:0], ws.logS[:0], ws.sweeps[:0]
}

// logSweep records the rotations c[col:col+count], s[col:col+count] of the
// planes (col+j, col+j+1).
func (ws *Workspace) logSweep(col, count int, forward bool) {
	ws.sweeps = append(ws.sweeps, sweep{col: col, count: count, off: len(ws.logC), forward: forward})
	ws.logC = append(ws.logC, ws.sweepC[col:col+count]...)
	ws.logS = append(ws.logS, ws.sweepS[col:col+count]...)
}

// minOverlap is the smallest order at which Dorgtr runs on its own
// goroutine while the QL/QR iterations run.
const minOverlap = 64

// orgtrSteqr forms Q from the reflectors in a (Dorgtr) and runs the QL/QR
// iterations on d and ws.e at the same time (they share no data: the
// iterations only log their rotations), then applies the rotations to Q.
// Each computation is the same as one after the other, so are the bits.
func (ws *Workspace) orgtrSteqr(n int, a []float64, lda int, d []float64) bool {
	var wg sync.WaitGroup
	if n >= minOverlap {
		wg.Go(func() { impl.Dorgtr(blas.Upper, n, a, lda, ws.tau, ws.work, len(ws.work)) })
	} else {
		impl.Dorgtr(blas.Upper, n, a, lda, ws.tau, ws.work, len(ws.work))
	}
	ok := ws.iterate(n, d, ws.e)
	wg.Wait()
	if !ok {
		return false
	}
	ws.finish(n, d, a, lda)
	return true
}

// iterate is the QL/QR iteration of gonum's Dsteqr (compz = EVOrig) on d
// and e, logging the rotations instead of applying them; false if it does
// not converge.
func (ws *Workspace) iterate(n int, d, e []float64) bool {
	wc, wsn := ws.sweepC, ws.sweepS
	eps := dlamchE
	eps2 := eps * eps
	safmin := dlamchS
	safmax := 1 / safmin
	ssfmax := math.Sqrt(safmax) / 3
	ssfmin := math.Sqrt(safmin) / eps2

	const maxit = 30
	nmaxit := n * maxit
	jtot := 0

	l1 := 0
	nm1 := n - 1

	type scaletype int
	const (
		down scaletype = iota + 1
		up
	)
	var iscale scaletype

	for l1 <= n-1 {
		if l1 > 0 {
			e[l1-1] = 0
		}
		var m int
		if l1 <= nm1 {
			for m = l1; m < nm1; m++ {
				test := math.Abs(e[m])
				if test == 0 {
					break
				}
				if test <= (math.Sqrt(math.Abs(d[m]))*math.Sqrt(math.Abs(d[m+1])))*eps {
					e[m] = 0
					break
				}
			}
		}
		l := l1
		lsv := l
		lend := m
		lendsv := lend
		l1 = m + 1
		if lend == l {
			continue
		}

		// Scale submatrix in rows and columns l to lend.
		anorm := impl.Dlanst(lapack.MaxAbs, lend-l+1, d[l:], e[l:])
		switch {
		case anorm == 0:
			continue
		case anorm > ssfmax:
			iscale = down
			impl.Dlascl(lapack.General, 0, 0, anorm, ssfmax, lend-l+1, 1, d[l:], 1)
			impl.Dlascl(lapack.General, 0, 0, anorm, ssfmax, lend-l, 1, e[l:], 1)
		case anorm < ssfmin:
			iscale = up
			impl.Dlascl(lapack.General, 0, 0, anorm, ssfmin, lend-l+1, 1, d[l:], 1)
			impl.Dlascl(lapack.General, 0, 0, anorm, ssfmin, lend-l, 1, e[l:], 1)
		}

		// Choose between QL and QR.
		if math.Abs(d[lend]) < math.Abs(d[l]) {
			lend = lsv
			l = lendsv
		}
		if lend > l {
			// QL iteration. Look for small subdiagonal element.
			for {
				if l != lend {
					for m = l; m < lend; m++ {
						v := math.Abs(e[m])
						if v*v <= (eps2*math.Abs(d[m]))*math.Abs(d[m+1])+safmin {
							break
						}
					}
				} else {
					m = lend
				}
				if m < lend {
					e[m] = 0
				}
				p := d[l]
				if m == l {
					l++
					if l > lend {
						break
					}
					continue
				}
				if m == l+1 {
					d[l], d[l+1], wc[l], wsn[l] = impl.Dlaev2(d[l], e[l], d[l+1])
					ws.logSweep(l, 1, false)
					e[l] = 0
					l += 2
					if l > lend {
						break
					}
					continue
				}
				if jtot == nmaxit {
					break
				}
				jtot++

				// Form shift.
				g := (d[l+1] - p) / (2 * e[l])
				r := impl.Dlapy2(g, 1)
				g = d[m] - p + e[l]/(g+math.Copysign(r, g))
				s := 1.0
				c := 1.0
				p = 0.0
				for i := m - 1; i >= l; i-- {
					f := s * e[i]
					b := c * e[i]
					c, s, r = impl.Dlartg(g, f)
					if i != m-1 {
						e[i+1] = r
					}
					g = d[i+1] - p
					r = (d[i]-g)*s + 2*c*b
					p = s * r
					d[i+1] = g + p
					g = c*r - b
					wc[i] = c
					wsn[i] = -s
				}
				ws.logSweep(l, m-l, false)
				d[l] -= p
				e[l] = g
			}
		} else {
			// QR iteration. Look for small superdiagonal element.
			for {
				if l != lend {
					for m = l; m > lend; m-- {
						v := math.Abs(e[m-1])
						if v*v <= (eps2*math.Abs(d[m])*math.Abs(d[m-1]) + safmin) {
							break
						}
					}
				} else {
					m = lend
				}
				if m > lend {
					e[m-1] = 0
				}
				p := d[l]
				if m == l {
					l--
					if l < lend {
						break
					}
					continue
				}
				if m == l-1 {
					d[l-1], d[l], wc[m], wsn[m] = impl.Dlaev2(d[l-1], e[l-1], d[l])
					ws.logSweep(m, 1, true)
					e[l-1] = 0
					l -= 2
					if l < lend {
						break
					}
					continue
				}
				if jtot == nmaxit {
					break
				}
				jtot++

				// Form shift.
				g := (d[l-1] - p) / (2 * e[l-1])
				r := impl.Dlapy2(g, 1)
				g = d[m] - p + (e[l-1])/(g+math.Copysign(r, g))
				s := 1.0
				c := 1.0
				p = 0.0
				for i := m; i < l; i++ {
					f := s * e[i]
					b := c * e[i]
					c, s, r = impl.Dlartg(g, f)
					if i != m {
						e[i-1] = r
					}
					g = d[i] - p
					r = (d[i+1]-g)*s + 2*c*b
					p = s * r
					d[i] = g + p
					g = c*r - b
					wc[i] = c
					wsn[i] = s
				}
				ws.logSweep(m, l-m, true)
				d[l] -= p
				e[l-1] = g
			}
		}

		// Undo scaling if necessary.
		switch iscale {
		case down:
			impl.Dlascl(lapack.General, 0, 0, ssfmax, anorm, lendsv-lsv+1, 1, d[lsv:], 1)
			impl.Dlascl(lapack.General, 0, 0, ssfmax, anorm, lendsv-lsv, 1, e[lsv:], 1)
		case up:
			impl.Dlascl(lapack.General, 0, 0, ssfmin, anorm, lendsv-lsv+1, 1, d[lsv:], 1)
			impl.Dlascl(lapack.General, 0, 0, ssfmin, anorm, lendsv-lsv, 1, e[lsv:], 1)
		}
		if jtot >= nmaxit {
			break
		}
	}
	for i := 0; i < n-1; i++ {
		if e[i] != 0 {
			return false
		}
	}
	return true
}

// finish applies the logged rotations to z and sorts the eigenvalues in d
// and the columns of z, as Dsteqr ends.
func (ws *Workspace) finish(n int, d, z []float64, ldz int) {
	ws.rotate(n, z, ldz)

	// Order eigenvalues and eigenvectors (selection sort, as Dsteqr); the
	// eigenvectors are the columns of z.
	bi := blas64.Implementation()
	sortAscending(n, d, func(i, k int) { bi.Dswap(n, z[i:], ldz, z[k:], ldz) })
}

// sortAscending sorts d[:n] ascending by LAPACK's selection sort (as Dsteqr
// and dstedc end), calling swap(i, k) for every exchange of d[i] and d[k]
// so that the caller exchanges the eigenvectors too.
func sortAscending(n int, d []float64, swap func(i, k int)) {
	for ii := 1; ii < n; ii++ {
		i := ii - 1
		k := i
		p := d[i]
		for j := ii; j < n; j++ {
			if d[j] < p {
				k = j
				p = d[j]
			}
		}
		if k != i {
			d[k] = d[i]
			d[i] = p
			swap(i, k)
		}
	}
}

// rotate applies the logged sweeps to the n rows of z, in blocks of rows on
// up to GOMAXPROCS goroutines.
func (ws *Workspace) rotate(n int, z []float64, ldz int) {
	workers := ws.parallel
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, n/minRowsPerWorker))
	if haveRot8 {
		for len(ws.panels) < workers {
			ws.panels = append(ws.panels, nil)
		}
		for k := range workers {
			if len(ws.panels[k]) < 16*n {
				ws.panels[k] = make([]float64, 16*n)
			}
		}
	}
	if workers == 1 {
		ws.rotateRows(0, n, n, z, ldz, 0)
		return
	}
	ws.rotateParallel(workers, n, z, ldz)
}

// rotateParallel splits the rows between workers goroutines (apart from
// rotate, whose serial path then allocates nothing).
func (ws *Workspace) rotateParallel(workers, n int, z []float64, ldz int) {
	var wg sync.WaitGroup
	for k := 1; k < workers; k++ {
		wg.Go(func() { ws.rotateRows(k*n/workers, (k+1)*n/workers, n, z, ldz, k) })
	}
	ws.rotateRows(0, n/workers, n, z, ldz, 0)
	wg.Wait()
}

// rotatePanels applies the logged sweeps to rows i, i+1, … of z in blocks
// of w (8 or 16) rows, up to hi, on a transposed copy of each block in
// ws.panels[worker], and returns the first row not done.
func (ws *Workspace) rotatePanels(i, hi, w, n int, z []float64, ldz int, worker int) int {
	p := ws.panels[worker][:w*n]
	for ; i+w <= hi; i += w {
		for r := range w {
			row := z[(i+r)*ldz : (i+r)*ldz+n]
			for j, v := range row {
				p[w*j+r] = v
			}
		}
		for _, sw := range ws.sweeps {
			c := ws.logC[sw.off : sw.off+sw.count]
			s := ws.logS[sw.off : sw.off+sw.count]
			a := p[w*sw.col : w*(sw.col+sw.count+1)]
			switch {
			case w == 16 && sw.forward:
				rotForward16(c, s, a)
			case w == 16:
				rotBackward16(c, s, a)
			case sw.forward:
				rotForward8(c, s, a)
			default:
				rotBackward8(c, s, a)
			}
		}
		for r := range w {
			row := z[(i+r)*ldz : (i+r)*ldz+n]
			for j := range row {
				row[j] = p[w*j+r]
			}
		}
	}
	return i
}

// rotateRows applies the logged sweeps to rows [lo, hi) of z: sixteen rows
// at a time in AVX, then eight in SSE2, where there are (rot_amd64.s, on
// transposed copies of the rows), then four at a time so that the rows'
// independent chains overlap. For each entry the operations are those of
// gonum's Dlasr(Right, Variable, ·) on the whole matrix, in the same order:
// a rotation of planes (j, j+1) sets a[j+1] = c·a[j+1] − s·a[j] and
// a[j] = s·a[j+1] + c·a[j] (old values), and the entry a sweep carries from
// one plane to the next stays in a register.
func (ws *Workspace) rotateRows(lo, hi, n int, z []float64, ldz int, worker int) {
	i := lo
	if haveRot16 && !ws.plain && hi-lo >= 16 {
		i = ws.rotatePanels(i, hi, 16, n, z, ldz, worker)
	}
	if haveRot8 && hi-i >= 8 {
		i = ws.rotatePanels(i, hi, 8, n, z, ldz, worker)
	}
	for ; i+3 < hi; i += 4 {
		r0 := z[i*ldz : i*ldz+n]
		r1 := z[(i+1)*ldz : (i+1)*ldz+n]
		r2 := z[(i+2)*ldz : (i+2)*ldz+n]
		r3 := z[(i+3)*ldz : (i+3)*ldz+n]
		for _, sw := range ws.sweeps {
			c := ws.logC[sw.off : sw.off+sw.count]
			s := ws.logS[sw.off : sw.off+sw.count]
			a0 := r0[sw.col : sw.col+sw.count+1]
			a1 := r1[sw.col : sw.col+sw.count+1]
			a2 := r2[sw.col : sw.col+sw.count+1]
			a3 := r3[sw.col : sw.col+sw.count+1]
			if sw.forward {
				x0, x1, x2, x3 := a0[0], a1[0], a2[0], a3[0]
				for j := range c {
					ct, st := c[j], s[j]
					t0, t1, t2, t3 := a0[j+1], a1[j+1], a2[j+1], a3[j+1]
					if ct != 1 || st != 0 {
						a0[j], x0 = st*t0+ct*x0, ct*t0-st*x0
						a1[j], x1 = st*t1+ct*x1, ct*t1-st*x1
						a2[j], x2 = st*t2+ct*x2, ct*t2-st*x2
						a3[j], x3 = st*t3+ct*x3, ct*t3-st*x3
					} else {
						a0[j], x0 = x0, t0
						a1[j], x1 = x1, t1
						a2[j], x2 = x2, t2
						a3[j], x3 = x3, t3
					}
				}
				k := len(c)
				a0[k], a1[k], a2[k], a3[k] = x0, x1, x2, x3
			} else {
				k := len(c)
				x0, x1, x2, x3 := a0[k], a1[k], a2[k], a3[k]
				for j := k - 1; j >= 0; j-- {
					ct, st := c[j], s[j]
					t0, t1, t2, t3 := a0[j], a1[j], a2[j], a3[j]
					if ct != 1 || st != 0 {
						a0[j+1], x0 = ct*x0-st*t0, st*x0+ct*t0
						a1[j+1], x1 = ct*x1-st*t1, st*x1+ct*t1
						a2[j+1], x2 = ct*x2-st*t2, st*x2+ct*t2
						a3[j+1], x3 = ct*x3-st*t3, st*x3+ct*t3
					} else {
						a0[j+1], x0 = x0, t0
						a1[j+1], x1 = x1, t1
						a2[j+1], x2 = x2, t2
						a3[j+1], x3 = x3, t3
					}
				}
				a0[0], a1[0], a2[0], a3[0] = x0, x1, x2, x3
			}
		}
	}
	for ; i < hi; i++ {
		r := z[i*ldz : i*ldz+n]
		for _, sw := range ws.sweeps {
			c := ws.logC[sw.off : sw.off+sw.count]
			s := ws.logS[sw.off : sw.off+sw.count]
			a := r[sw.col : sw.col+sw.count+1]
			if sw.forward {
				for j := range c {
					if ct, st := c[j], s[j]; ct != 1 || st != 0 {
						t, t2 := a[j+1], a[j]
						a[j+1] = ct*t - st*t2
						a[j] = st*t + ct*t2
					}
				}
			} else {
				for j := len(c) - 1; j >= 0; j-- {
					if ct, st := c[j], s[j]; ct != 1 || st != 0 {
						t, t2 := a[j+1], a[j]
						a[j+1] = ct*t - st*t2
						a[j] = st*t + ct*t2
					}
				}
			}
		}
	}
}
