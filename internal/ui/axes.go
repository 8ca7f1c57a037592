package ui

import (
	"bytes"
	"html"
	"math"

	"github.com/selfcma/selfcma/internal/plotaxis"
)

// maxDecades bounds the y range of a plot; lower values are clipped.
const maxDecades = 40

// xTicks is about the most ticks of an x axis.
const xTicks = 6

// fittedXAxis returns the x axis of a plot area that ends at right: from 0
// to xMax, the last x of the data, so that the lines end at the right edge
// where their labels are; ticks at the multiples of step up to xMax.
func fittedXAxis(xMax, right float64) (x plotaxis.Axis, step float64, n int) {
	if !(xMax > 0) {
		xMax = 1
	}
	step = plotaxis.NiceStep(xMax, xTicks)
	return plotaxis.Axis{Lo: 0, Hi: xMax, P0: plotLeft, P1: right}, step, len(plotaxis.Ticks(0, xMax, step)) - 1
}

// downsampleLines returns the lines downsampled to cols columns of [0, xHi]
// and mapped to the y axis (their Log), with the least and greatest value
// drawn (+∞ and −∞ without any). Downsampling comes first: the transform
// is monotone, so the least and greatest value of a column stay so, and
// only the few points kept are transformed.
func downsampleLines(in []line, xHi float64, cols int) (out []line, lo, hi float64) {
	out = make([]line, len(in))
	lo, hi = math.Inf(1), math.Inf(-1)
	for i, l := range in {
		l.Xs, l.Ys = downsample(l.Xs, l.Ys, l.Floor, 0, xHi, cols)
		for j, v := range l.Ys {
			v = l.Log(v)
			l.Ys[j] = v
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		out[i] = l
	}
	return out, lo, hi
}

// linearRange returns a linear y axis over [yLo, yHi]: its ends, multiples
// of its tick step.
func linearRange(yLo, yHi float64) (lo, hi, step float64) {
	lo, hi = yLo, yHi
	if hi <= lo {
		pad := math.Max(math.Abs(lo)/10, 1e-300)
		lo, hi = lo-pad, hi+pad
	}
	step = plotaxis.NiceStep(hi-lo, 6)
	return math.Floor(lo/step) * step, math.Ceil(hi/step) * step, step
}

// decadeRange returns a log10 y axis over [yLo, yHi] (in decades): whole
// decades, at most maxDecades of them, and the step between labelled
// decades.
func decadeRange(yLo, yHi float64) (lo, hi, step float64) {
	lo, hi = math.Floor(yLo), math.Ceil(yHi)
	if hi <= lo {
		hi = lo + 1
	}
	if hi-lo > maxDecades {
		lo = hi - maxDecades
	}
	step = decadeStep(hi - lo)
	return math.Floor(lo/step) * step, math.Ceil(hi/step) * step, step
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

// writeGrid writes the grid lines at the ticks and the frame of the plot
// area.
func (f *frame) writeGrid(b *bytes.Buffer) {
	px0, px1 := fmtPx(plotLeft), fmtPx(f.right)
	top, bottom := fmtPx(f.top), fmtPx(plotBottom)
	b.WriteString(`<g class="grid" stroke="#e4e4e4" stroke-width="1">`)
	for i := 0; i <= f.ny; i++ {
		py := fmtPx(f.y.At(f.y.Lo + float64(i)*f.yStep))
		b.WriteString(`<line x1="` + px0 + `" x2="` + px1 + `" y1="` + py + `" y2="` + py + `"/>`)
	}
	for i := 0; i <= f.nx; i++ {
		px := fmtPx(f.x.At(float64(i) * f.xStep))
		b.WriteString(`<line y1="` + top + `" y2="` + bottom + `" x1="` + px + `" x2="` + px + `"/>`)
	}
	b.WriteString(`</g>`)
	b.WriteString(`<rect class="frame" x="` + px0 + `" y="` + top + `" width="` + fmtPx(f.right-plotLeft) +
		`" height="` + fmtPx(plotBottom-f.top) + `" fill="none" stroke="#555"/>`)
}

// writeTicks writes the ticks of both axes and their labels.
func (c *chart) writeTicks(b *bytes.Buffer, f *frame) {
	b.WriteString(`<g class="yticks" text-anchor="end" fill="#333">`)
	for i := 0; i <= f.ny; i++ {
		v := f.y.Lo + float64(i)*f.yStep
		py := f.y.At(v)
		b.WriteString(`<line x1="` + fmtPx(plotLeft-6) + `" x2="` + fmtPx(plotLeft) + `" stroke="#555" y1="` + fmtPx(py) +
			`" y2="` + fmtPx(py) + `"/>`)
		b.WriteString(`<text x="` + fmtPx(plotLeft-10) + `" y="` + fmtPx(py+4) + `">`)
		if c.Linear {
			b.WriteString(linearLabel(v, f.yStep))
		} else {
			b.WriteString(decadeLabel(v))
		}
		b.WriteString(`</text>`)
	}
	b.WriteString(`</g><g class="xticks" text-anchor="middle" fill="#333">`)
	for i := 0; i <= f.nx; i++ {
		v := float64(i) * f.xStep
		px := fmtPx(f.x.At(v))
		b.WriteString(`<line y1="` + fmtPx(plotBottom) + `" y2="` + fmtPx(plotBottom+6) + `" stroke="#555" x1="` + px +
			`" x2="` + px + `"/>`)
		b.WriteString(`<text y="` + fmtPx(plotBottom+20) + `" x="` + px + `">` + fmtCount(v, f.x.Hi) + `</text>`)
	}
	b.WriteString(`</g>`)
}

// writeAxisLabels writes the names of the axes.
func (c *chart) writeAxisLabels(b *bytes.Buffer, f *frame) {
	b.WriteString(`<text class="xlabel" x="` + fmtPx((plotLeft+f.right)/2) + `" y="` + fmtPx(plotH-8) +
		`" text-anchor="middle" fill="#222">` + html.EscapeString(c.XLabel) + `</text>`)
	b.WriteString(`<text class="ylabel" transform="translate(16 ` + fmtPx((f.top+plotBottom)/2) +
		`) rotate(-90)" text-anchor="middle" fill="#222">` + html.EscapeString(c.YLabel) + `</text>`)
}
