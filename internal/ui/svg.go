package ui

import (
	"bytes"
	"github.com/selfcma/selfcma/internal/plotaxis"
	"html"
	"html/template"
	"math"
	"strconv"
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
}

// segment is a horizontal piece of a stepped line: Y (log10) over [X0, X1].
type segment struct{ X0, X1, Y float64 }

// steps is a dashed stepped line: a default rate, one segment per run.
type steps struct {
	Name  string
	Color string
	Segs  []segment
}

// marker is a vertical line at X: an IPOP restart.
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

// chart is one plot: lines over a linear x axis from 0 and a log10 y axis.
type chart struct {
	ID      string // "fitness", "sigma", "rates"
	Title   string
	XLabel  string
	YLabel  string
	Lines   []line
	Steps   []steps
	Markers []marker
	XMax    float64 // largest x of the data
	Legend  []legendEntry
	Columns int // downsampling columns; 0 = DefaultColumns
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
	// x axis: from 0 to a multiple of a nice step.
	xMax := c.XMax
	if !(xMax > 0) {
		xMax = 1
	}
	xStep := plotaxis.NiceStep(xMax, 8)
	xHi := math.Ceil(xMax/xStep-1e-9) * xStep
	x := plotaxis.Axis{Lo: 0, Hi: xHi, P0: plotLeft, P1: plotRight}

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
	lo, hi := math.Floor(yLo), math.Ceil(yHi)
	if hi <= lo {
		hi = lo + 1
	}
	if hi-lo > maxDecades {
		lo = hi - maxDecades
	}
	yStep := decadeStep(hi - lo)
	lo, hi = math.Floor(lo/yStep)*yStep, math.Ceil(hi/yStep)*yStep
	y := plotaxis.Axis{Lo: lo, Hi: hi, P0: plotBottom, P1: plotTop}

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
		b.WriteString(`<line x1="74" x2="944" y1="` + py + `" y2="` + py + `"/>`)
	}
	for i := 0; i <= nx; i++ {
		px := fmtPx(x.At(float64(i) * xStep))
		b.WriteString(`<line y1="58" y2="280" x1="` + px + `" x2="` + px + `"/>`)
	}
	b.WriteString(`</g>`)
	b.WriteString(`<rect class="frame" x="74" y="58" width="870" height="222" fill="none" stroke="#555"/>`)
	b.WriteString(`<g class="yticks" text-anchor="end" fill="#333">`)
	for i := 0; i <= ny; i++ {
		v := lo + float64(i)*yStep
		py := y.At(v)
		b.WriteString(`<line x1="68" x2="74" stroke="#555" y1="` + fmtPx(py) + `" y2="` + fmtPx(py) + `"/>`)
		b.WriteString(`<text x="64" y="` + fmtPx(py+4) + `">`)
		b.WriteString(decadeLabel(v))
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
	b.WriteString(`<text class="xlabel" x="509" y="322" text-anchor="middle" fill="#222">`)
	b.WriteString(html.EscapeString(c.XLabel))
	b.WriteString(`</text>`)
	b.WriteString(`<text class="ylabel" transform="translate(16 169) rotate(-90)" text-anchor="middle" fill="#222">`)
	b.WriteString(html.EscapeString(c.YLabel))
	b.WriteString(`</text>`)

	// Data, clipped to the plot area.
	b.WriteString(`<clipPath id="` + id + `-clip"><rect x="74" y="58" width="870" height="222"/></clipPath>`)
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
			num = strconv.AppendFloat(num[:0], y.At(math.Max(l.Ys[i], lo-1)), 'f', 1, 64)
			b.Write(num)
		}
		b.WriteString(`"/>`)
	}
	b.WriteString(`</g>`)
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
		b.WriteString(`<text x="509" y="174" text-anchor="middle" fill="#777">no generations told yet</text>`)
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
