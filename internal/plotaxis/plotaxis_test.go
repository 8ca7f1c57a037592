package plotaxis

import (
	"math"
	"testing"
)

func TestNiceStep(t *testing.T) {
	for _, c := range []struct {
		span float64
		n    int
		want float64
	}{
		{10, 5, 2}, {10, 10, 1}, {7, 3, 5}, {100, 8, 20}, {0.3, 3, 0.1}, {1e5, 8, 2e4}, {0, 5, 1}, {-1, 5, 1}, {3, 1, 5}, {11, 1, 20},
	} {
		if got := NiceStep(c.span, c.n); math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("NiceStep(%g, %d) = %g, want %g", c.span, c.n, got, c.want)
		}
	}
}

func TestAt(t *testing.T) {
	a := Axis{Lo: -1, Hi: 3, P0: 100, P1: 20} // pixels grow downwards, as for a y axis
	for v, want := range map[float64]float64{-1: 100, 3: 20, 1: 60} {
		if got := a.At(v); got != want {
			t.Errorf("At(%g) = %g, want %g", v, got, want)
		}
	}
}

func TestTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi, step float64
		want         []float64
	}{
		{0, 19200, 5000, []float64{0, 5000, 10000, 15000}},
		{0, 1, 0.2, []float64{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1}}, // 1 = 5·0.2 up to rounding
		{-0.3, 0.25, 0.1, []float64{-0.30000000000000004, -0.2, -0.1, 0, 0.1, 0.2}},
		{0, 10, 0, nil}, {1, 0, 1, nil},
	} {
		got := Ticks(c.lo, c.hi, c.step)
		if len(got) != len(c.want) {
			t.Errorf("Ticks(%g, %g, %g) = %v, want %v", c.lo, c.hi, c.step, got, c.want)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-12 {
				t.Errorf("Ticks(%g, %g, %g) = %v, want %v", c.lo, c.hi, c.step, got, c.want)
				break
			}
		}
	}
}
