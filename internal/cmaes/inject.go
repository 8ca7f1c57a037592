package cmaes

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Injected points, in full (Hansen, "Injecting external solutions into CMA-ES",
// arXiv:1110.4181, 2011; pycma's CMAEvolutionStrategy.inject).
//
// A point x given to Inject waits in a queue, part of the state, until the
// next batch is sampled: that batch is sampled as usual (the random stream
// advances as without injection) and then its candidates 0, 1, ... are
// replaced by the waiting points, in the order given. The point handed out
// and evaluated is x itself. At most λ points wait at once, so every waiting
// point goes into the next batch sampled.
//
// In the update (Algorithm 1, lines 8–14) an injected point enters through
// its step y = (x − m)/σ (the genotype's step, with bounds). With clip, y is
// first scaled to at most c_y in the Mahalanobis norm of the distribution its
// batch was sampled from (Hansen 2011; c_y as pycma's repair_genotype, which
// pycma applies to solutions told that it did not sample):
//
//	y ← y · min(1, c_y / ‖C^{−1/2} y‖),   c_y = √n + 2n/(n + 2)
//
// and that clipped y is the step of the point everywhere the update uses
// one: the mean m' = m + σ Σ w_i y_{i:λ} (so the mean does not jump to a far
// injected point), y_w and with it p_σ, h_σ, σ and p_c, and C_μ. The ranking
// uses the value of x as told, like any other point's. Sampled points are
// never clipped: a run without injected points is unchanged bit for bit.
//
// For self-CMA-ES the kept Step holds the points as the update used them
// (m + σ y with the clipped y), so h_t (Algorithm 3) ranks an injected point
// of generation t by the likelihood of its clipped step under the replayed
// C', like the generation's other points: its distance is bounded by c_y
// under C^t, so h_t stays finite and in [1, λ] however far the point was,
// and the replay with the rates used reproduces C^{t+1} and p_c^{t+1}.
//
// Without clip, the raw step enters the update: for points known to lie
// within the distribution (pycma's inject(..., force=True) hands out the
// point itself and does not repair it in the update either). pycma's
// inject without force rescales a long step to a random length at ask time
// instead, so the point it hands out is not the one given; here it always
// is.

// ErrInvalidInjection is wrapped by every error of Inject about the points
// given (dimension, a value not finite or outside the bounds, too many).
var ErrInvalidInjection = errors.New("invalid injected point")

// Injection is a point waiting in the queue or injected into the pending
// batch.
type Injection struct {
	X    []float64 // the point as given (and handed out)
	Clip bool      // clip its step in the update
}

// Inject queues points to replace candidates of the next batch sampled
// (after the pending generation is told, or at an IPOP restart, the first
// batch of the new run): its candidates 0, 1, ... in the order given, after
// the points already waiting. At most λ points may wait at once. Each point
// must have n finite coordinates, inside the bounds of a bounded ES. With
// clip (the service's default) the step y = (x − m)/σ of an injected point is
// scaled to at most c_y = √n + 2n/(n + 2) in the Mahalanobis norm
// ‖C^{−1/2} y‖, and that clipped step is the point's step everywhere the
// update uses one (m, p_σ, h_σ, σ, p_c, C_μ and the kept Step); the ranking
// uses the value told for the point. The point handed out and evaluated is
// the point given, unchanged. On an error (wrapping ErrInvalidInjection)
// nothing is queued; a stopped ES returns ErrStopped.
func (e *ES) Inject(points [][]float64, clip bool) error {
	if len(e.s.Stop) > 0 {
		return ErrStopped
	}
	if err := checkInjection(points, len(e.s.Queued), e.p.Lambda, e.p.N, e.s.Config.Bounds); err != nil {
		return fmt.Errorf("cmaes: inject: %w", err)
	}
	e.s.Queued = appendInjections(e.s.Queued, points, clip)
	return nil
}

// Injected returns the number of points waiting for the next batch (a
// stopped ES keeps them: no batch takes them).
func (e *ES) Injected() int { return len(e.s.Queued) }

// InjectedInBatch returns the number of candidates of the pending batch
// that are injected points: candidates 0 to InjectedInBatch() − 1.
func (e *ES) InjectedInBatch() int { return len(e.s.BatchInjected) }

func appendInjections(q []Injection, points [][]float64, clip bool) []Injection {
	for _, x := range points {
		q = append(q, Injection{X: append([]float64(nil), x...), Clip: clip})
	}
	return q
}

// CheckInjection reports why points cannot join a queue of waiting points
// with population size lambda in dimension n and bounds b (nil: none), as
// Inject checks them; the error wraps ErrInvalidInjection.
func CheckInjection(points [][]float64, waiting, lambda, n int, b *Bounds) error {
	return checkInjection(points, waiting, lambda, n, b)
}

// checkInjection reports why points cannot join a queue of waiting points
// with population size lambda in dimension n.
func checkInjection(points [][]float64, waiting, lambda, n int, b *Bounds) error {
	if waiting+len(points) > lambda {
		return fmt.Errorf("%w: %d points, %d already waiting: at most λ = %d may wait", ErrInvalidInjection, len(points), waiting, lambda)
	}
	for k, x := range points {
		if err := checkPoint(x, n, b); err != nil {
			return fmt.Errorf("point %d: %w", k, err)
		}
	}
	return nil
}

func checkPoint(x []float64, n int, b *Bounds) error {
	if len(x) != n {
		return fmt.Errorf("%w: dimension %d, want %d", ErrInvalidInjection, len(x), n)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: x[%d] = %v is not finite", ErrInvalidInjection, i, v)
		}
		if b != nil && (v < b.Lower[i] || v > b.Upper[i]) {
			return fmt.Errorf("%w: x[%d] = %v is outside the bounds [%v, %v]", ErrInvalidInjection, i, v, b.Lower[i], b.Upper[i])
		}
	}
	return nil
}

// genotypeInto writes the genotype of an injected point: the point itself,
// or with bounds its preimage under the box transformation (pycma's
// inverse, the branch in [l − a_l, u + a_u]).
func (e *ES) genotypeInto(dst, x []float64) {
	if e.s.Config.Bounds == nil {
		copy(dst, x)
		return
	}
	for i, v := range x {
		dst[i] = inverse1(v, e.s.Config.Bounds.Lower[i], e.s.Config.Bounds.Upper[i])
	}
}

// takeInjections replaces the first candidates of the batch just sampled by
// the waiting points (called by sample).
func (e *ES) takeInjections() {
	e.s.BatchInjected = e.s.BatchInjected[:0]
	k := min(len(e.s.Queued), e.p.Lambda)
	if k == 0 {
		return
	}
	for i, in := range e.s.Queued[:k] {
		e.genotypeInto(e.s.Batch.RawRowView(i), in.X)
		if e.pheno != nil {
			copy(e.pheno.RawRowView(i), in.X)
		}
		e.s.BatchInjected = append(e.s.BatchInjected, in)
	}
	e.s.Queued = append([]Injection(nil), e.s.Queued[k:]...)
}

// ClipLength is c_y = √n + 2n/(n + 2): the longest step, in the
// Mahalanobis norm, an injected point with Clip contributes.
func ClipLength(n int) float64 { return clipLength(n) }

// clipLength is c_y = √n + 2n/(n + 2), the longest step, in the Mahalanobis
// norm, that an injected point may contribute (Hansen 2011; pycma's
// repair_genotype).
func clipLength(n int) float64 {
	nf := float64(n)
	return math.Sqrt(nf) + 2*nf/(nf+2)
}

// updatePoints returns the genotypes the update uses: the pending batch
// itself, or, when it holds injected points to clip, a copy in which each
// such point x is replaced by m + σ y', y' = y · min(1, c_y/‖C^{−1/2} y‖),
// y = (x − m)/σ.
func (e *ES) updatePoints() *mat.Dense {
	anyClip := false
	for _, in := range e.s.BatchInjected {
		anyClip = anyClip || in.Clip
	}
	if !anyClip {
		return e.s.Batch
	}
	l, n := e.s.Batch.Dims()
	if e.injX == nil || e.injX.RawMatrix().Rows != l {
		e.injX = mat.NewDense(l, n, nil)
	}
	e.injX.Copy(e.s.Batch)
	for k, in := range e.s.BatchInjected {
		if in.Clip {
			e.clipStep(e.injX.RawRowView(k))
		}
	}
	return e.injX
}

// clipStep replaces the genotype x by m + σ y · min(1, c_y/‖C^{−1/2} y‖)
// with y = (x − m)/σ. The norm is computed on u = (x − m)/max_i |x_i − m_i|
// (then ‖C^{−1/2} y‖ = (a/σ)‖C^{−1/2} u‖ and the clipped y is
// c_y u/‖C^{−1/2} u‖), so that a point however far away gives no overflow.
func (e *ES) clipStep(x []float64) {
	n := e.p.N
	u := e.scratch.vec
	var a float64
	for i := range n {
		u[i] = x[i] - e.s.Mean[i]
		a = math.Max(a, math.Abs(u[i]))
	}
	if a == 0 || math.IsInf(a, 0) {
		return // the mean itself; or a step that overflows, left to the numerical guard
	}
	for i := range n {
		u[i] /= a
	}
	norm := e.mahalanobisNorm(u)
	cy := clipLength(n)
	if !(a/e.s.Sigma*norm > cy) {
		return
	}
	f := cy / norm
	for i := range n {
		x[i] = e.s.Mean[i] + e.s.Sigma*(f*u[i])
	}
}

// mahalanobisNorm returns ‖C^{−1/2} v‖ = ‖D^{−1} Bᵀ v‖.
func (e *ES) mahalanobisNorm(v []float64) float64 {
	n := e.p.N
	bm := e.s.B.RawMatrix()
	var s float64
	for k := range n {
		var t float64
		for i := range n {
			t += bm.Data[i*bm.Stride+k] * v[i]
		}
		t /= e.s.D[k]
		s += t * t
	}
	return math.Sqrt(s)
}
