package cmaes

import (
	"slices"
	"testing"
)

// TestMedian: the median of odd and even lengths, the input unchanged.
func TestMedian(t *testing.T) {
	var buf []float64
	for _, tc := range []struct {
		v    []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{2, 1}, 1.5}, {[]float64{5, 1, 4, 2, 3}, 3}, {[]float64{4, 4, 1, 9, 2, 7}, 4}} {
		in := slices.Clone(tc.v)
		if got := Median(tc.v, &buf); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", in, got, tc.want)
		}
		if !slices.Equal(in, tc.v) {
			t.Errorf("Median changed its input")
		}
	}
}
