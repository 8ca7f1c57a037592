// Package plotaxis is the axis arithmetic that the hand-written SVG plots
// share (cmd/bench's figures, internal/ui's pages): a linear map from data
// to pixels and the 1-2-5 tick step.
package plotaxis

import "math"

// Axis maps values in [Lo, Hi] to pixels [P0, P1].
type Axis struct{ Lo, Hi, P0, P1 float64 }

// At returns the pixel of v.
func (a Axis) At(v float64) float64 { return a.P0 + (v-a.Lo)/(a.Hi-a.Lo)*(a.P1-a.P0) }

// NiceStep returns 1, 2 or 5 times a power of ten, at least span/n (up to
// rounding): a tick step that cuts span into at most about n intervals.
func NiceStep(span float64, n int) float64 {
	if !(span > 0) {
		return 1
	}
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// Ticks returns the multiples of step in [lo, hi], ascending; one that
// lies within a billionth of a step beyond an end counts as inside.
func Ticks(lo, hi, step float64) []float64 {
	if !(step > 0) || !(hi >= lo) {
		return nil
	}
	k0, k1 := math.Ceil(lo/step-1e-9), math.Floor(hi/step+1e-9)
	out := make([]float64, 0, int(k1-k0)+1)
	for k := k0; k <= k1; k++ {
		out = append(out, k*step)
	}
	return out
}
