package ui

import (
	"bytes"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"

	"github.com/selfcma/selfcma/internal/plotaxis"
)

// Geometry of a plot, in SVG user units (the SVG scales to its column's
// width: two columns on a wide screen, one on a narrow one).
const (
	plotW      = 720
	plotH      = 400
	plotLeft   = 66  // left edge of the plot area
	plotRight  = 704 // right edge
	plotBottom = 350 // bottom edge; the top depends on the legend's rows
	titleY     = 20  // baseline of the title
	charWidth  = 6.8 // rough width of a character of the legend's font

	// endLabelRoom is the room right of the plot area that a chart with
	// EndLabels keeps for them.
	endLabelRoom = 40
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
	// height where the line ends (with EndLabels), where there is room for
	// it.
	EndLabel string
	// Title, when not empty, is shown on hover over the line (and over the
	// tick at its end, with EndLabels).
	Title string
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

// chart is one plot: lines over a linear x axis from 0 to the last x of
// the data, and a log10 y axis (or a linear one).
type chart struct {
	ID      string // "fitness", "axes", "stds", "mean", "rates"
	Title   string
	XLabel  string
	YLabel  string
	Lines   []line
	Steps   []steps
	Markers []marker
	XMax    float64 // largest x of the data: the x axis ends there
	Legend  []legendEntry
	Columns int // downsampling columns; 0 = DefaultColumns
	// Linear makes the y axis linear: Log is then the identity and Floor
	// −∞.
	Linear bool
	// EndLabels keeps room right of the plot area for the lines' EndLabel
	// (if any), as pycma labels its coordinates.
	EndLabels bool
	// Empty is the text shown when no line has a point; "" = "no
	// generations told yet".
	Empty string
}

// frame is a chart laid out: its plot area, its axes with their ticks,
// its lines downsampled and transformed to the y axis, its legend.
type frame struct {
	top, right   float64 // the plot area is [plotLeft, right] × [top, plotBottom]
	x, y         plotaxis.Axis
	xStep, yStep float64
	nx, ny       int // the last tick's index: ticks at Lo + k·step, k = 0..n
	lines        []line
	empty        bool // no line has a point
	legend       []placedEntry
}

// layout lays c out.
func (c *chart) layout() frame {
	var f frame
	f.legend, f.top = placeLegend(c.Legend)
	f.right = plotRight
	if c.EndLabels {
		f.right -= endLabelRoom
	}
	f.x, f.xStep, f.nx = fittedXAxis(c.XMax, f.right)
	cols := c.Columns
	if cols <= 0 {
		cols = DefaultColumns
	}
	var yLo, yHi float64
	f.lines, yLo, yHi = downsampleLines(c.Lines, f.x.Hi, cols)
	for _, s := range c.Steps {
		for _, g := range s.Segs {
			if isFinite(g.Y) {
				yLo, yHi = math.Min(yLo, g.Y), math.Max(yHi, g.Y)
			}
		}
	}
	f.empty = math.IsInf(yLo, 0)
	if f.empty {
		yLo, yHi = -1, 1
	}
	var lo, hi float64
	if c.Linear {
		lo, hi, f.yStep = linearRange(yLo, yHi)
	} else {
		lo, hi, f.yStep = decadeRange(yLo, yHi)
	}
	f.y = plotaxis.Axis{Lo: lo, Hi: hi, P0: plotBottom, P1: f.top}
	f.ny = int(math.Round((hi - lo) / f.yStep))
	return f
}

// render writes c as an inline SVG element. The lines are downsampled to
// c.Columns columns of the x range.
func (c *chart) render(b *bytes.Buffer) {
	f := c.layout()
	c.writeHead(b)
	f.writeGrid(b)
	c.writeTicks(b, &f)
	c.writeAxisLabels(b, &f)
	c.writeData(b, &f)
	if c.EndLabels {
		writeEndLabels(b, f.lines, f.y, f.right, f.top)
	}
	c.writeRestartLabels(b, &f)
	if f.empty {
		c.writeEmpty(b, &f)
	}
	writeLegend(b, f.legend)
	b.WriteString(`</svg>`)
}

// writeHead opens the SVG element: its title and background.
func (c *chart) writeHead(b *bytes.Buffer) {
	id := "plot-" + c.ID
	w, h := strconv.Itoa(plotW), strconv.Itoa(plotH)
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" class="plot" id="` + id + `" data-plot="` + c.ID +
		`" viewBox="0 0 ` + w + ` ` + h + `" role="img" aria-labelledby="` + id +
		`-title" font-family="system-ui, sans-serif" font-size="12">`)
	b.WriteString(`<title id="` + id + `-title">` + html.EscapeString(c.Title) + `</title>`)
	b.WriteString(`<rect width="` + w + `" height="` + h + `" fill="#fff"/>`)
	b.WriteString(`<text x="8" y="` + strconv.Itoa(titleY) + `" font-size="15" font-weight="600" fill="#222">` +
		html.EscapeString(c.Title) + `</text>`)
}

// writeEmpty writes the text of a chart without data in its middle.
func (c *chart) writeEmpty(b *bytes.Buffer, f *frame) {
	text := c.Empty
	if text == "" {
		text = "no generations told yet"
	}
	b.WriteString(`<text class="empty" x="` + fmtPx((plotLeft+f.right)/2) + `" y="` + fmtPx((f.top+plotBottom)/2+4) +
		`" text-anchor="middle" fill="#777">` + html.EscapeString(text) + `</text>`)
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
