package ui

import (
	"bytes"
	"cmp"
	"html"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/selfcma/selfcma/internal/plotaxis"
)

// Geometry of a plot, in SVG user units (the SVG scales to the page width).
const (
	plotW      = 960
	plotH      = 330
	plotLeft   = 74  // left edge of the plot area
	plotRight  = 944 // right edge
	plotTop    = 58  // top edge
	plotBottom = 280 // bottom edge
	legendY    = 40  // baseline of the legend row
	charWidth  = 6.8 // rough width of a character of the legend's font

	// endLabelRoom is the room right of the plot area that a chart with
	// EndLabels keeps for them.
	endLabelRoom = 40
	// endLabelGap is the least vertical distance between two end labels;
	// maxEndLabels of them fit the plot area's height.
	endLabelGap  = 9
	maxEndLabels = (plotBottom - plotTop + 16) / endLabelGap
)

// line is a series of a chart.
type line struct {
	Name   string // data-series: a stable name for tests and scripts
	Label  string // legend text
	Color  string
	Width  float64
	Dashed bool
	Xs, Ys []float64
	// Log maps a value of Ys to the y axis (log10 of it, or of a shifted
	// value); it is increasing on (Floor, ∞), and values ≤ Floor are not
	// drawn.
	Log   func(float64) float64
	Floor float64
	// EndLabel, when not empty, is written right of the plot area at the
	// height where the line ends (with EndLabels).
	EndLabel string
}

// segment is a horizontal piece of a stepped line: Y (log10) over [X0, X1].
type segment struct{ X0, X1, Y float64 }

// steps is a dashed stepped line: a default rate, one segment per run.
type steps struct {
	Name  string
	Color string
	Segs  []segment
}

// marker is a vertical line at X: a restart.
type marker struct {
	X     float64
	Run   int // the run that starts here
	Label string
}

// legendEntry is an entry of a chart's legend.
type legendEntry struct {
	Name, Label, Color string
	Dashed, Marker     bool
}

// chart is one plot: lines over a linear x axis from 0 and a log10 y axis
// (or a linear one).
type chart struct {
	ID      string // "fitness", "axes", "stds", "mean", "rates"
	Title   string
	XLabel  string
	YLabel  string
	Lines   []line
	Steps   []steps
	Markers []marker
	XMax    float64 // largest x of the data
	Legend  []legendEntry
	Columns int // downsampling columns; 0 = DefaultColumns
	// Linear makes the y axis linear: Log is then the identity and Floor
	// −∞.
	Linear bool
	// EndLabels keeps room right of the plot area for the lines' EndLabel
	// (if any), spread apart where the lines end close together, as pycma
	// does.
	EndLabels bool
	// Empty is the text shown when no line has a point; "" = "no
	// generations told yet".
	Empty string
}

// decadeStep returns the step between labelled decades: 1, 2, 3, 5, 10, ...
// decades, so that [lo, hi] has at most about 7 ticks.
func decadeStep(span float64) float64 {
	for _, s := range []float64{1, 2, 3, 5, 10, 20, 50, 100} {
		if span/s <= 7 {
			return s
		}
	}
	return 100
}

// maxDecades bounds the y range of a plot; lower values are clipped.
const maxDecades = 40

// render writes c as an inline SVG element. The lines are downsampled to
// c.Columns columns of the x range.
func (c *chart) render(b *bytes.Buffer) {
	cols := c.Columns
	if cols <= 0 {
		cols = DefaultColumns
	}
	right := float64(plotRight) // right edge of the plot area
	if c.EndLabels {
		right -= endLabelRoom
	}
	// x axis: from 0 to a multiple of a nice step.
	xMax := c.XMax
	if !(xMax > 0) {
		xMax = 1
	}
	xStep := plotaxis.NiceStep(xMax, 8)
	xHi := math.Ceil(xMax/xStep-1e-9) * xStep
	x := plotaxis.Axis{Lo: 0, Hi: xHi, P0: plotLeft, P1: right}

	// Downsample, then find the y range (min/max decimation keeps it).
	lines := make([]line, len(c.Lines))
	yLo, yHi := math.Inf(1), math.Inf(-1)
	for i, l := range c.Lines {
		// Downsample first: the transform is monotone, so the least and
		// greatest value of a column stay so, and only the few points
		// kept are transformed.
		l.Xs, l.Ys = downsample(l.Xs, l.Ys, l.Floor, 0, xHi, cols)
		for j, v := range l.Ys {
			v = l.Log(v)
			l.Ys[j] = v
			yLo, yHi = math.Min(yLo, v), math.Max(yHi, v)
		}
		lines[i] = l
	}
	for _, s := range c.Steps {
		for _, g := range s.Segs {
			if isFinite(g.Y) {
				yLo, yHi = math.Min(yLo, g.Y), math.Max(yHi, g.Y)
			}
		}
	}
	empty := math.IsInf(yLo, 0)
	if empty {
		yLo, yHi = -1, 1
	}
	var lo, hi, yStep float64
	if c.Linear {
		lo, hi = yLo, yHi
		if hi <= lo {
			pad := math.Max(math.Abs(lo)/10, 1e-300)
			lo, hi = lo-pad, hi+pad
		}
		yStep = plotaxis.NiceStep(hi-lo, 6)
		lo, hi = math.Floor(lo/yStep)*yStep, math.Ceil(hi/yStep)*yStep
	} else {
		lo, hi = math.Floor(yLo), math.Ceil(yHi)
		if hi <= lo {
			hi = lo + 1
		}
		if hi-lo > maxDecades {
			lo = hi - maxDecades
		}
		yStep = decadeStep(hi - lo)
		lo, hi = math.Floor(lo/yStep)*yStep, math.Ceil(hi/yStep)*yStep
	}
	y := plotaxis.Axis{Lo: lo, Hi: hi, P0: plotBottom, P1: plotTop}
	px0, px1 := fmtPx(plotLeft), fmtPx(right)
	width := fmtPx(right - plotLeft)

	id := "plot-" + c.ID
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" class="plot" id="`)
	b.WriteString(id)
	b.WriteString(`" data-plot="`)
	b.WriteString(c.ID)
	b.WriteString(`" viewBox="0 0 960 330" role="img" aria-labelledby="`)
	b.WriteString(id)
	b.WriteString(`-title" font-family="system-ui, sans-serif" font-size="12">`)
	b.WriteString(`<title id="` + id + `-title">`)
	b.WriteString(html.EscapeString(c.Title))
	b.WriteString(`</title>`)
	b.WriteString(`<rect width="960" height="330" fill="#fff"/>`)
	b.WriteString(`<text x="8" y="20" font-size="15" font-weight="600" fill="#222">`)
	b.WriteString(html.EscapeString(c.Title))
	b.WriteString(`</text>`)

	// Grid and ticks.
	b.WriteString(`<g class="grid" stroke="#e4e4e4" stroke-width="1">`)
	nx, ny := int(math.Round(xHi/xStep)), int(math.Round((hi-lo)/yStep))
	for i := 0; i <= ny; i++ {
		py := fmtPx(y.At(lo + float64(i)*yStep))
		b.WriteString(`<line x1="` + px0 + `" x2="` + px1 + `" y1="` + py + `" y2="` + py + `"/>`)
	}
	for i := 0; i <= nx; i++ {
		px := fmtPx(x.At(float64(i) * xStep))
		b.WriteString(`<line y1="58" y2="280" x1="` + px + `" x2="` + px + `"/>`)
	}
	b.WriteString(`</g>`)
	b.WriteString(`<rect class="frame" x="74" y="58" width="` + width + `" height="222" fill="none" stroke="#555"/>`)
	b.WriteString(`<g class="yticks" text-anchor="end" fill="#333">`)
	for i := 0; i <= ny; i++ {
		v := lo + float64(i)*yStep
		py := y.At(v)
		b.WriteString(`<line x1="68" x2="74" stroke="#555" y1="` + fmtPx(py) + `" y2="` + fmtPx(py) + `"/>`)
		b.WriteString(`<text x="64" y="` + fmtPx(py+4) + `">`)
		if c.Linear {
			b.WriteString(linearLabel(v, yStep))
		} else {
			b.WriteString(decadeLabel(v))
		}
		b.WriteString(`</text>`)
	}
	b.WriteString(`</g><g class="xticks" text-anchor="middle" fill="#333">`)
	for i := 0; i <= nx; i++ {
		v := float64(i) * xStep
		px := x.At(v)
		b.WriteString(`<line y1="280" y2="286" stroke="#555" x1="` + fmtPx(px) + `" x2="` + fmtPx(px) + `"/>`)
		b.WriteString(`<text y="300" x="` + fmtPx(px) + `">` + fmtCount(v, xHi) + `</text>`)
	}
	b.WriteString(`</g>`)
	b.WriteString(`<text class="xlabel" x="` + fmtPx((plotLeft+right)/2) + `" y="322" text-anchor="middle" fill="#222">`)
	b.WriteString(html.EscapeString(c.XLabel))
	b.WriteString(`</text>`)
	b.WriteString(`<text class="ylabel" transform="translate(16 169) rotate(-90)" text-anchor="middle" fill="#222">`)
	b.WriteString(html.EscapeString(c.YLabel))
	b.WriteString(`</text>`)

	// Data, clipped to the plot area.
	b.WriteString(`<clipPath id="` + id + `-clip"><rect x="74" y="58" width="` + width + `" height="222"/></clipPath>`)
	b.WriteString(`<g clip-path="url(#` + id + `-clip)" fill="none" stroke-linejoin="round">`)
	for _, m := range c.Markers {
		px := fmtPx(x.At(m.X))
		b.WriteString(`<line class="restart" data-run="` + strconv.Itoa(m.Run) + `" x1="` + px + `" x2="` + px +
			`" y1="58" y2="280" stroke="#888" stroke-width="1.2" stroke-dasharray="2 3"/>`)
	}
	for _, s := range c.Steps {
		b.WriteString(`<path class="default" data-series="` + s.Name + `" data-points="` + strconv.Itoa(2*len(s.Segs)) +
			`" stroke="` + s.Color + `" stroke-width="1.5" stroke-dasharray="7 4" d="`)
		for i, g := range s.Segs {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteByte('M')
			b.WriteString(fmtPx(x.At(g.X0)))
			b.WriteByte(' ')
			b.WriteString(fmtPx(y.At(g.Y)))
			b.WriteString(" H")
			b.WriteString(fmtPx(x.At(g.X1)))
		}
		b.WriteString(`"/>`)
	}
	var num []byte
	yClamp := lo - 1 // values below a log axis's range (maxDecades) drawn just below it
	if c.Linear {
		yClamp = math.Inf(-1)
	}
	for _, l := range lines {
		w := l.Width
		if w == 0 {
			w = 1.5
		}
		b.WriteString(`<polyline data-series="` + l.Name + `" data-points="` + strconv.Itoa(len(l.Xs)) +
			`" stroke="` + l.Color + `" stroke-width="` + strconv.FormatFloat(w, 'f', -1, 64) + `"`)
		if l.Dashed {
			b.WriteString(` stroke-dasharray="7 4"`)
		}
		b.WriteString(` points="`)
		for i := range l.Xs {
			if i > 0 {
				b.WriteByte(' ')
			}
			num = strconv.AppendFloat(num[:0], x.At(l.Xs[i]), 'f', 1, 64)
			b.Write(num)
			b.WriteByte(',')
			num = strconv.AppendFloat(num[:0], y.At(math.Max(l.Ys[i], yClamp)), 'f', 1, 64)
			b.Write(num)
		}
		b.WriteString(`"/>`)
	}
	b.WriteString(`</g>`)
	if c.EndLabels {
		writeEndLabels(b, lines, y, right)
	}
	// Restart labels above the plot area, where no data can hide them;
	// one that would overlap the previous is left out.
	labelEnd := math.Inf(-1)
	for _, m := range c.Markers {
		px := x.At(m.X)
		if m.Label == "" || px < labelEnd {
			continue
		}
		labelEnd = px + 4 + 5.6*float64(len([]rune(m.Label))) + 8
		b.WriteString(`<line class="restart-tick" x1="` + fmtPx(px) + `" x2="` + fmtPx(px) + `" y1="48" y2="58" stroke="#888" stroke-width="1.2"/>`)
		b.WriteString(`<text class="restart-label" x="` + fmtPx(px+3) + `" y="55" font-size="10" fill="#555">`)
		b.WriteString(html.EscapeString(m.Label))
		b.WriteString(`</text>`)
	}
	if empty {
		text := c.Empty
		if text == "" {
			text = "no generations told yet"
		}
		b.WriteString(`<text class="empty" x="` + fmtPx((plotLeft+right)/2) + `" y="174" text-anchor="middle" fill="#777">`)
		b.WriteString(html.EscapeString(text))
		b.WriteString(`</text>`)
	}

	// Legend, one row above the plot area.
	b.WriteString(`<g class="legend">`)
	lx := float64(plotLeft)
	for _, e := range c.Legend {
		b.WriteString(`<g class="legend-entry" data-series="` + e.Name + `">`)
		switch {
		case e.Marker:
			b.WriteString(`<line x1="` + fmtPx(lx+10) + `" x2="` + fmtPx(lx+10) + `" y1="` + strconv.Itoa(legendY-11) + `" y2="` +
				strconv.Itoa(legendY+3) + `" stroke="#888" stroke-width="1.2" stroke-dasharray="2 3"/>`)
		default:
			b.WriteString(`<line x1="` + fmtPx(lx) + `" x2="` + fmtPx(lx+22) + `" y1="` + strconv.Itoa(legendY-4) + `" y2="` +
				strconv.Itoa(legendY-4) + `" stroke="` + e.Color + `" stroke-width="2"`)
			if e.Dashed {
				b.WriteString(` stroke-dasharray="6 3"`)
			}
			b.WriteString(`/>`)
		}
		b.WriteString(`<text x="` + fmtPx(lx+28) + `" y="` + strconv.Itoa(legendY) + `" fill="#222">`)
		b.WriteString(html.EscapeString(e.Label))
		b.WriteString(`</text></g>`)
		lx += 28 + charWidth*float64(len([]rune(e.Label))) + 22
	}
	b.WriteString(`</g></svg>`)
}

// writeEndLabels writes the EndLabel of each line right of the plot area
// (which ends at right), in the order the lines end from top to bottom,
// each as near the height of its line's end as endLabelGap allows, with a
// thin leader from the frame at that height. Of more than maxEndLabels lines, maxEndLabels
// evenly spread in that order (the top and bottom one among them) are
// labelled.
func writeEndLabels(b *bytes.Buffer, lines []line, y plotaxis.Axis, right float64) {
	type end struct {
		l     *line
		y, at float64 // height of the line's end and of its label, in pixels
	}
	var ends []end
	for i := range lines {
		l := &lines[i]
		if l.EndLabel == "" || len(l.Xs) == 0 {
			continue
		}
		k := len(l.Xs) - 1
		py := math.Min(math.Max(y.At(l.Ys[k]), plotTop), plotBottom)
		ends = append(ends, end{l: l, y: py})
	}
	slices.SortStableFunc(ends, func(a, b end) int { return cmp.Compare(a.y, b.y) })
	if m := len(ends); m > maxEndLabels {
		keep := make([]end, maxEndLabels)
		for i := range keep {
			keep[i] = ends[int(math.Round(float64(i)*float64(m-1)/float64(maxEndLabels-1)))]
		}
		ends = keep
	}
	placeEndLabels(ends, func(i int) float64 { return ends[i].y }, func(i int, at float64) { ends[i].at = at },
		plotTop-6, plotBottom+6)
	b.WriteString(`<g class="end-labels" font-size="10">`)
	for _, e := range ends {
		b.WriteString(`<g data-series="` + e.l.Name + `"><polyline fill="none" stroke-width="0.7" stroke-opacity="0.6" stroke="` + e.l.Color + `" points="` +
			fmtPx(right+1) + `,` + fmtPx(e.y) + ` ` + fmtPx(right+4) + `,` + fmtPx(e.y) + ` ` + fmtPx(right+11) + `,` + fmtPx(e.at) + `"/>`)
		b.WriteString(`<text class="end-label" x="` + fmtPx(right+13) + `" y="` + fmtPx(e.at+3.5) + `" fill="` + e.l.Color + `">`)
		b.WriteString(html.EscapeString(e.l.EndLabel))
		b.WriteString(`</text></g>`)
	}
	b.WriteString(`</g>`)
}

// placeEndLabels sets the heights of m labels, wanted at want(0) ≤ … ≤
// want(m−1), at least endLabelGap apart within [top, bottom] (as far as
// they fit) and each run of labels pushed together centred on where its
// labels want to be: the least squares placement, found by merging
// overlapping runs from the top down.
func placeEndLabels[T any](labels []T, want func(int) float64, set func(int, float64), top, bottom float64) {
	type run struct {
		first, n int
		sum      float64 // Σ (want of its k-th label − k·endLabelGap)
		at       float64 // height of its first label
	}
	var runs []run
	place := func(r *run) {
		r.at = r.sum / float64(r.n)
		r.at = math.Max(math.Min(r.at, bottom-float64(r.n-1)*endLabelGap), top)
	}
	for i := range labels {
		cur := run{first: i, n: 1, sum: want(i)}
		place(&cur)
		for len(runs) > 0 {
			prev := &runs[len(runs)-1]
			if prev.at+float64(prev.n)*endLabelGap <= cur.at {
				break
			}
			prev.sum += cur.sum - float64(prev.n*cur.n)*endLabelGap
			prev.n += cur.n
			place(prev)
			cur = *prev
			runs = runs[:len(runs)-1]
		}
		runs = append(runs, cur)
	}
	for _, r := range runs {
		for k := range r.n {
			set(r.first+k, r.at+float64(k)*endLabelGap)
		}
	}
}

// renderHTML returns the SVG of c for a template.
func (c *chart) renderHTML() template.HTML {
	var b bytes.Buffer
	b.Grow(64 << 10)
	c.render(&b)
	return template.HTML(b.String())
}

func fmtPx(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// decadeLabel is the SVG text of the tick at log10 value k: 10 with k as a
// superscript.
func decadeLabel(k float64) string {
	e := strconv.FormatFloat(math.Abs(k), 'f', -1, 64)
	if k < 0 {
		e = "−" + e
	}
	return `10<tspan dy="-6" font-size="9">` + e + `</tspan>`
}

// linearLabel is the SVG text of the tick at v of a linear axis whose ticks
// are step apart.
func linearLabel(v, step float64) string {
	v = math.Round(v/step) * step
	if math.Abs(v) < step/2 {
		return "0"
	}
	return strings.Replace(strconv.FormatFloat(v, 'g', 6, 64), "-", "−", 1)
}

// fmtCount formats a tick value of an axis that ends at hi, in the unit
// that suits hi: 12 500 as "12.5k" when hi ≥ 10 000, 3 000 000 as "3M".
func fmtCount(v, hi float64) string {
	switch a := math.Abs(hi); {
	case v == 0:
		return "0"
	case a >= 1e10:
		return strconv.FormatFloat(v/1e9, 'g', 10, 64) + "G"
	case a >= 1e7:
		return strconv.FormatFloat(v/1e6, 'g', 10, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'g', 10, 64) + "k"
	default:
		return strconv.FormatFloat(v, 'g', 10, 64)
	}
}
