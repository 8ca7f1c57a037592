package ui

import (
	"github.com/selfcma/selfcma/internal/plotaxis"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestDownsample(t *testing.T) {
	const n, cols = 100_000, DefaultColumns
	rng := rand.New(rand.NewPCG(1, 2))
	xs, ys := make([]float64, n), make([]float64, n)
	x, y := 0.0, 0.0
	for i := range xs {
		x += float64(1 + rng.IntN(300)) // uneven steps, as with IPOP's λ
		y += rng.NormFloat64()
		xs[i], ys[i] = x, y
	}
	ys[n/2] = math.NaN() // a failed generation
	x1 := xs[n-1]
	ox, oy := downsample(xs, ys, math.Inf(-1), 0, x1, cols)
	if len(ox) > 2*cols || len(ox) < cols {
		t.Fatalf("%d points, want between %d and %d", len(ox), cols, 2*cols)
	}
	if !slices.IsSorted(ox) {
		t.Error("points out of order")
	}
	// Every column's least and greatest y are kept, and nothing else.
	type mm struct{ lo, hi float64 }
	want := map[int]mm{}
	col := func(x float64) int { return min(int(x*(float64(cols)/x1)), cols-1) }
	for i := range xs {
		if math.IsNaN(ys[i]) {
			continue
		}
		c := col(xs[i])
		m, ok := want[c]
		if !ok {
			m = mm{ys[i], ys[i]}
		}
		want[c] = mm{math.Min(m.lo, ys[i]), math.Max(m.hi, ys[i])}
	}
	got := map[int]mm{}
	for i := range ox {
		if math.IsNaN(oy[i]) {
			t.Fatal("a NaN kept")
		}
		c := col(ox[i])
		m, ok := got[c]
		if !ok {
			m = mm{oy[i], oy[i]}
		}
		got[c] = mm{math.Min(m.lo, oy[i]), math.Max(m.hi, oy[i])}
	}
	if len(got) != len(want) {
		t.Fatalf("%d columns, want %d", len(got), len(want))
	}
	for c, w := range want {
		if got[c] != w {
			t.Errorf("column %d: min/max %v, want %v", c, got[c], w)
		}
	}
	// Each kept point is one of the input.
	for i := range ox {
		j, ok := slices.BinarySearch(xs, ox[i])
		if !ok || ys[j] != oy[i] {
			t.Fatalf("point (%g, %g) is not an input point", ox[i], oy[i])
		}
	}
}

func TestDownsampleShort(t *testing.T) {
	xs := []float64{0, 1, 2, 3, 4}
	ys := []float64{5, math.NaN(), math.Inf(-1), 2, 1}
	ox, oy := downsample(xs, ys, 1.5, 0, 4, 2)
	if !slices.Equal(ox, []float64{0, 3}) || !slices.Equal(oy, []float64{5, 2}) {
		t.Errorf("got %v %v: want the finite points above the floor, whole", ox, oy)
	}
	// All at one x: the least and the greatest.
	xs = make([]float64, 100)
	ys = make([]float64, 100)
	for i := range ys {
		ys[i] = float64((i * 37) % 100)
	}
	ox, oy = downsample(xs, ys, math.Inf(-1), 0, 0, 10)
	if len(ox) != 2 || slices.Min(oy) != 0 || slices.Max(oy) != 99 {
		t.Errorf("one x: got %v %v", ox, oy)
	}
}

func TestTicks(t *testing.T) {
	for _, c := range []struct {
		span float64
		n    int
		want float64
	}{{10, 8, 2}, {100_000, 8, 20_000}, {7, 8, 1}, {1, 8, 0.2}, {0, 8, 1}} {
		if got := plotaxis.NiceStep(c.span, c.n); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("NiceStep(%g, %d) = %g, want %g", c.span, c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		v, hi float64
		want  string
	}{{5000, 8000, "5000"}, {5000, 30000, "5k"}, {12500, 30000, "12.5k"}, {3e6, 1e7, "3M"}, {0.6000000000000001, 1, "0.6"}} {
		if got := fmtCount(c.v, c.hi); got != c.want {
			t.Errorf("fmtCount(%g, %g) = %q, want %q", c.v, c.hi, got, c.want)
		}
	}
	if got := decadeLabel(-3); got != `10<tspan dy="-6" font-size="9">−3</tspan>` {
		t.Errorf("decadeLabel(-3) = %q", got)
	}
}
