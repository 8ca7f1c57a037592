package ui

// DefaultColumns is the number of columns a plot's x range is cut into for
// downsampling: about one per pixel of the plot area.
const DefaultColumns = 600

// downsample keeps, of the points (xs[i], ys[i]) with finite coordinates
// and ys[i] > floor, in each of cols equal columns of [x0, x1], the point of
// least and the point of greatest y, in their original order: at most 2·cols
// points, and a line through them covers the same pixels as a line through
// all the points (min/max decimation), also after a monotone transform of
// y such as a logarithm. Series of at most 2·cols such points are kept
// whole. xs must be nondecreasing.
func downsample(xs, ys []float64, floor, x0, x1 float64, cols int) (ox, oy []float64) {
	ok := func(i int) bool { return ys[i] > floor && isFinite(ys[i]) && isFinite(xs[i]) }
	finite := 0
	for i := range xs {
		if ok(i) {
			finite++
		}
	}
	if finite <= 2*cols || !(x1 > x0) {
		ox, oy = make([]float64, 0, finite), make([]float64, 0, finite)
		for i := range xs {
			if ok(i) {
				ox, oy = append(ox, xs[i]), append(oy, ys[i])
			}
		}
		if finite <= 2*cols {
			return ox, oy
		}
		// A degenerate x range is one column.
		xs, ys, cols = ox, oy, 1
		x0, x1 = ox[0], ox[0]+1
	}
	ox, oy = make([]float64, 0, 2*cols), make([]float64, 0, 2*cols)
	scale := float64(cols) / (x1 - x0)
	col, lo, hi := -1, -1, -1
	flush := func() {
		if lo < 0 {
			return
		}
		a, b := lo, hi
		if a > b {
			a, b = b, a
		}
		ox, oy = append(ox, xs[a]), append(oy, ys[a])
		if b != a {
			ox, oy = append(ox, xs[b]), append(oy, ys[b])
		}
	}
	for i, x := range xs {
		y := ys[i]
		if !ok(i) {
			continue
		}
		c := min(max(int((x-x0)*scale), 0), cols-1)
		if c != col {
			flush()
			col, lo, hi = c, i, i
			continue
		}
		if y < ys[lo] {
			lo = i
		}
		if y > ys[hi] {
			hi = i
		}
	}
	flush()
	return ox, oy
}

// isFinite reports whether v is neither NaN nor infinite.
func isFinite(v float64) bool { return v-v == 0 }
