package enginecodec

import (
	"fmt"
	"math"
	"sync"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/cmaes"
	"gonum.org/v1/gonum/mat"
)

// The encoding of a cmaes.Step (selfcma keeps the step its h_t replays), in
// the versions of the cmaes encoding (cmaes.go): from version 4 C as its
// upper triangle and C_μ only if Step.CMuInto would not recompute it bit
// for bit (a flag before it); from version 6 only the rows of X that C_μ
// uses, in rank order.
//
// From version 7 (versionActiveStep) a flag at the end says whether the
// Step is one of active CMA-ES; if so, Σ w° of its negative part and C_μ^-
// (its upper triangle) follow. C_μ^- is written, not recomputed: it depends
// on the Mahalanobis norms under the B and D of C^t, which the Step does not
// keep (a safeguard may have made them differ from C^t's decomposition), and
// decomposing C^t again would cost O(n³) and another numerics contract. The
// positive C_μ is left out as before (version 4), recomputed with the
// weights of the active parameters. Versions 6 and older have no flag: their
// Steps are not active and decode as before.

// stepSize is about the number of bytes encodeStep writes (C_μ not
// written, as for every Step an update made, and μ ≤ λ/2 rows of X; C_μ^-
// of an active Step).
func stepSize(s *cmaes.Step) int {
	l, n := s.X.Dims()
	size := n*(n+1)/2 + (l/2)*n + 4*n + 2*l
	if s.Active {
		size += n * (n + 1) / 2
	}
	return 8*size + 256
}

// encodeStep writes the Step in the current layout.
func encodeStep(w *binenc.Writer, s *cmaes.Step) {
	writeStepFields(w, s)
	w.Bool(s.Active) // version 7
	if s.Active {
		w.Float(s.WNegSum)
		writeUpper(w, s.CMuNeg)
	}
}

// writeStepFields writes what every Step has, in the layout of version 6.
func writeStepFields(w *binenc.Writer, s *cmaes.Step) {
	writeUpper(w, s.C)
	w.Floats(s.PC)
	w.Floats(s.Yw)
	w.Float(s.HSigma)
	keep := !cMuRecomputes(s)
	w.Bool(keep)
	if keep {
		writeUpper(w, s.CMu)
	}
	w.Float(s.MuW)
	w.Float(s.Hyper.C1)
	w.Float(s.Hyper.CMu)
	w.Float(s.Hyper.Cc)
	w.Float(s.Sigma)
	w.Floats(s.PSigma)
	w.Floats(s.Mean)
	l, _ := s.X.Dims()
	w.Int(l)
	w.FloatRows(usedRows(s)...)
	w.Ints(s.Order)
}

// usedRows returns the rows of X that C_μ uses, x_{1:λ} … x_{μ:λ} (version
// 6), or all rows of X if the Step's sizes give no μ.
func usedRows(s *cmaes.Step) [][]float64 {
	l, n := s.X.Dims()
	mu := l
	if p, err := cmaes.NewParams(n, l); err == nil && len(s.Order) == l {
		mu = p.Mu
	}
	rows := make([][]float64, mu)
	for i := range rows {
		k := i
		if mu < l {
			k = s.Order[i]
		}
		rows[i] = s.X.RawRowView(k)
	}
	return rows
}

// decodeStep decodes a Step written in a state whose cmaes encoding
// version was version (1 to cmaesVersion). A Step of version 4 or later
// without C_μ gets it recomputed (Step.CMuInto); one that carries a C_μ
// that the recomputation gives too is refused, as encodeStep never writes
// it, so that every Step decoded encodes back to the same bytes.
func decodeStep(r *binenc.Reader, version uint32) (*cmaes.Step, error) {
	f := readStepFields(r, version)
	if err := r.Err(); err != nil {
		return nil, err
	}
	s, err := f.step(version)
	if err != nil || version < versionPacked {
		return s, err
	}
	recomputed := mat.NewSymDense(len(s.PC), nil)
	if !s.CMuInto(recomputed, nil) {
		recomputed = nil
	}
	switch {
	case !f.keep:
		s.CMu = recomputed
	case sameSymBits(s.CMu, recomputed):
		return nil, fmt.Errorf("step carries the C_μ its points give: %w", binenc.ErrCorrupt)
	}
	return s, nil
}

// stepFields are a Step's values as written.
type stepFields struct {
	c, pc, yw, cmu, ps, mean, x, cmuNeg []float64
	hs, muw, sigma, wNegSum             float64
	h                                   cmaes.Hyper
	keep, active                        bool // C_μ written; an active Step
	l                                   int
	order                               []int
}

// readStepFields reads a Step's values in the layout of version: from
// version 4 a flag before C_μ, from version 7 the active part at the end.
func readStepFields(r *binenc.Reader, version uint32) stepFields {
	f := stepFields{c: readSym(r, version), pc: r.Floats(), yw: r.Floats(), hs: r.Float(), keep: true}
	if version >= versionPacked {
		f.keep = r.Bool()
	}
	if f.keep {
		f.cmu = readSym(r, version)
	}
	f.muw = r.Float()
	f.h = cmaes.Hyper{C1: r.Float(), CMu: r.Float(), Cc: r.Float()}
	f.sigma, f.ps, f.mean = r.Float(), r.Floats(), r.Floats()
	f.l, f.x, f.order = r.Int(), r.Floats(), r.Ints()
	if version >= versionActiveStep && r.Bool() {
		f.active, f.wNegSum, f.cmuNeg = true, r.Float(), readSym(r, version)
	}
	return f
}

// step checks that the values' sizes agree with each other and makes the
// Step (its C_μ as written, if it was).
func (f *stepFields) step(version uint32) (*cmaes.Step, error) {
	n := len(f.pc)
	if n < 1 || !sizesAre(n*n, f.c) || !sizesAre(n, f.yw, f.ps, f.mean) || f.keep && !sizesAre(n*n, f.cmu) || f.active && !sizesAre(n*n, f.cmuNeg) || f.l < 2 || len(f.order) != f.l {
		return nil, fmt.Errorf("step sizes inconsistent: %w", binenc.ErrCorrupt)
	}
	if f.active && !(f.wNegSum >= -1-1e-12 && f.wNegSum <= 0) {
		return nil, fmt.Errorf("step's sum of negative weights %v, want it in [−1, 0]: %w", f.wNegSum, binenc.ErrCorrupt)
	}
	if !permutation(f.order) {
		return nil, fmt.Errorf("step order is not a permutation: %w", binenc.ErrCorrupt)
	}
	x := stepRows(f.x, f.order, n, version)
	if x == nil {
		return nil, fmt.Errorf("step sizes inconsistent: %d point values, λ = %d, n = %d: %w", len(f.x), f.l, n, binenc.ErrCorrupt)
	}
	s := &cmaes.Step{
		C: mat.NewSymDense(n, f.c), PC: f.pc, Yw: f.yw, HSigma: f.hs, MuW: f.muw,
		Hyper: f.h, Sigma: f.sigma, PSigma: f.ps, Mean: f.mean, X: mat.NewDense(f.l, n, x), Order: f.order,
	}
	if f.keep {
		s.CMu = mat.NewSymDense(n, f.cmu)
	}
	if f.active {
		p, err := cmaes.NewParamsActive(n, f.l, true)
		if err != nil {
			return nil, fmt.Errorf("step: %v: %w", err, binenc.ErrCorrupt)
		}
		s.Active, s.WNegSum, s.CMuNeg, s.AlphaMuWNeg = true, f.wNegSum, mat.NewSymDense(n, f.cmuNeg), p.AlphaMuWNeg
	}
	return s, nil
}

// stepRows returns the λ×n points of a Step from the values written: all
// of them, or from version 6 the μ rows C_μ uses in rank order (usedRows:
// all only if (n, λ) give no μ), put back at their places with NaN in the
// rows left out. It returns nil if the count is not the one written.
func stepRows(x []float64, order []int, n int, version uint32) []float64 {
	l := len(order)
	p, err := cmaes.NewParams(n, l)
	if version < versionStepDerived || err != nil {
		if len(x) != l*n {
			return nil
		}
		return x
	}
	if len(x) != p.Mu*n {
		return nil
	}
	all := make([]float64, l*n)
	for k := range all {
		all[k] = math.NaN()
	}
	for i, k := range order[:p.Mu] {
		copy(all[k*n:(k+1)*n], x[i*n:(i+1)*n])
	}
	return all
}

// replayedC returns C after the update with the Step's own rates
// (Replay with s.Hyper), as the update computed it: version 6 leaves out
// an ES's C that this gives.
func replayedC(s *cmaes.Step) *mat.SymDense {
	n := len(s.PC)
	c := mat.NewSymDense(n, nil)
	s.Replay(s.Hyper, make([]float64, n), c)
	return c
}

// replaysTo reports whether the Step's replay with its own rates gives c
// bit for bit (in buffers of the pool: an encoding makes this check every
// generation).
func replaysTo(s *cmaes.Step, c *mat.SymDense) bool {
	n := len(s.PC)
	if c.SymmetricDim() != n {
		return false
	}
	sc := getScratch(n, 0)
	defer scratchPool.Put(sc)
	s.Replay(s.Hyper, sc.pc, sc.c)
	return sameSymBits(sc.c, c)
}

// cMuRecomputes reports whether Step.CMuInto recomputes the Step's C_μ bit
// for bit from its points (in buffers of the pool, as replaysTo).
func cMuRecomputes(s *cmaes.Step) bool {
	l, n := s.X.Dims()
	p, err := cmaes.NewParamsActive(n, l, s.Active)
	if err != nil || s.CMu == nil {
		return false
	}
	sc := getScratch(n, p.Mu)
	defer scratchPool.Put(sc)
	return s.CMuInto(sc.c, sc.ym) && sameSymBits(sc.c, s.CMu)
}

// codecScratch holds the buffers replaysTo and cMuRecomputes compute in:
// reused, since a session persists every generation (at n = 1000 they are
// 8 MB an encoding, and the 8 MB of C_μ's factor at λ = 2000).
type codecScratch struct {
	c  *mat.SymDense
	ym *mat.Dense // n×μ
	pc []float64
}

var scratchPool = sync.Pool{New: func() any { return new(codecScratch) }}

// getScratch takes buffers from the pool for dimension n and μ (0: no ym),
// made anew where the pooled ones have other sizes.
func getScratch(n, mu int) *codecScratch {
	sc := scratchPool.Get().(*codecScratch)
	if len(sc.pc) != n {
		sc.c, sc.pc, sc.ym = mat.NewSymDense(n, nil), make([]float64, n), nil
	}
	if mu > 0 {
		if r, c := 0, 0; sc.ym != nil {
			if r, c = sc.ym.Dims(); r != n || c != mu {
				sc.ym = nil
			}
		}
		if sc.ym == nil {
			sc.ym = mat.NewDense(n, mu, nil)
		}
	}
	return sc
}

// mirrored returns the n×n data of c with both triangles set from its
// upper one, as readSym returns a matrix.
func mirrored(c *mat.SymDense) []float64 {
	r := c.RawSymmetric()
	n := r.N
	data := make([]float64, n*n)
	for i := range n {
		for j := i; j < n; j++ {
			v := r.Data[i*r.Stride+j]
			data[i*n+j], data[j*n+i] = v, v
		}
	}
	return data
}

// sameSymBits reports whether a and b have the same upper triangle, bit for
// bit.
func sameSymBits(a, b *mat.SymDense) bool {
	if a == nil || b == nil || a.SymmetricDim() != b.SymmetricDim() {
		return false
	}
	ra, rb := a.RawSymmetric(), b.RawSymmetric()
	for i := range ra.N {
		for j := i; j < ra.N; j++ {
			if !sameBits(ra.Data[i*ra.Stride+j], rb.Data[i*rb.Stride+j]) {
				return false
			}
		}
	}
	return true
}

// sizesAre reports whether each of vs has length size.
func sizesAre(size int, vs ...[]float64) bool {
	for _, v := range vs {
		if len(v) != size {
			return false
		}
	}
	return true
}

// permutation reports whether order holds 0 … len(order) − 1, each once.
func permutation(order []int) bool {
	seen := make([]bool, len(order))
	for _, k := range order {
		if k < 0 || k >= len(order) || seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}
