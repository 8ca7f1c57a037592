package sepcma

import (
	"fmt"
	"math"
	"slices"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// Injected points, as cmaes's (internal/cmaes/inject.go; Hansen,
// "Injecting external solutions into CMA-ES", arXiv:1110.4181): a point
// given to Inject waits until the next batch is sampled, which is sampled
// as usual and then has its candidates 0, 1, ... replaced by the waiting
// points (their genotypes with bounds). The point handed out is the point
// given. With clip, its step y = (x − m)/σ enters the update scaled to at
// most c_y = √n + 2n/(n + 2) in the Mahalanobis norm ‖D^{−1} y‖, D of the
// C that sampled the batch.

// Inject queues points to replace candidates of the next batch sampled
// (cmaes.ES.Inject's contract). On an error (wrapping
// cmaes.ErrInvalidInjection) nothing is queued; a stopped ES returns
// ErrStopped.
func (e *ES) Inject(points [][]float64, clip bool) error {
	if len(e.s.Stop) > 0 {
		return ErrStopped
	}
	if err := cmaes.CheckInjection(points, len(e.s.Queued), e.p.Lambda, e.p.N, e.s.Config.Bounds); err != nil {
		return fmt.Errorf("sepcma: inject: %w", err)
	}
	for _, x := range points {
		e.s.Queued = append(e.s.Queued, cmaes.Injection{X: slices.Clone(x), Clip: clip})
	}
	return nil
}

// Injected returns the number of points waiting for the next batch.
func (e *ES) Injected() int { return len(e.s.Queued) }

// InjectedInBatch returns the number of candidates of the pending batch
// that are injected points: candidates 0 to InjectedInBatch() − 1.
func (e *ES) InjectedInBatch() int { return len(e.s.BatchInjected) }

// takeInjections moves the waiting points, at most λ, into the batch
// just drawn (called by sample).
func (e *ES) takeInjections() {
	k := min(len(e.s.Queued), e.p.Lambda)
	e.s.BatchInjected = append(e.s.BatchInjected[:0], e.s.Queued[:k]...)
	e.s.Queued = slices.Clone(e.s.Queued[k:])
	if len(e.s.Queued) == 0 {
		e.s.Queued = nil
	}
	if len(e.s.BatchInjected) == 0 {
		e.s.BatchInjected = nil
	}
}

// placeInjected writes the genotypes of the batch's injected points into
// its first rows.
func (e *ES) placeInjected() {
	n := e.p.N
	for k, in := range e.s.BatchInjected {
		row := e.x[k*n : (k+1)*n]
		if b := e.s.Config.Bounds; b != nil {
			b.GenotypeInto(row, in.X)
		} else {
			copy(row, in.X)
		}
	}
}

// updatePoints returns the genotypes the update uses: the batch itself, or
// a copy in which each injected point to clip has its step clipped (made
// for the update and dropped after it: not held between generations).
func (e *ES) updatePoints() []float64 {
	anyClip := false
	for _, in := range e.s.BatchInjected {
		anyClip = anyClip || in.Clip
	}
	if !anyClip {
		return e.x
	}
	n := e.p.N
	upd := slices.Clone(e.x)
	for k, in := range e.s.BatchInjected {
		if in.Clip {
			e.clipStep(upd[k*n : (k+1)*n])
		}
	}
	return upd
}

// clipStep replaces the genotype x by m + σ y·min(1, c_y/‖D^{−1} y‖), y =
// (x − m)/σ, computing the norm on u = (x − m)/max|x_i − m_i| so that a
// far point gives no overflow (as cmaes's clipStep).
func (e *ES) clipStep(x []float64) {
	m, sigma := e.s.Mean, e.s.Sigma
	var a float64
	for i := range x {
		a = math.Max(a, math.Abs(x[i]-m[i]))
	}
	if a == 0 || math.IsInf(a, 0) {
		return
	}
	var s float64
	for i := range x {
		t := (x[i] - m[i]) / a / e.d[i]
		s += t * t
	}
	norm := math.Sqrt(s)
	cy := cmaes.ClipLength(e.p.N)
	if !(a/sigma*norm > cy) {
		return
	}
	f := cy / norm
	for i := range x {
		x[i] = m[i] + sigma*(f*((x[i]-m[i])/a))
	}
}

func cloneInjections(q []cmaes.Injection) []cmaes.Injection {
	if q == nil {
		return nil
	}
	out := make([]cmaes.Injection, len(q))
	for i, in := range q {
		out[i] = cmaes.Injection{X: slices.Clone(in.X), Clip: in.Clip}
	}
	return out
}
