package main

import (
	"bytes"
	"fmt"
	"github.com/selfcma/selfcma/internal/plotaxis"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/defaults"
	"github.com/selfcma/selfcma/internal/selfcma"
)

// maxPlotPoints bounds the points of a line; longer traces are downsampled.
const maxPlotPoints = 300

// minLogDeltaF floors log10(f − f_opt): the values include f_opt, so
// differences below about 1e-14 are rounding.
const minLogDeltaF = -15

// medianPoint is, at one generation, the median over the runs that were
// still running of the rates the update used and of log10(f − f_opt) of the
// best point so far.
type medianPoint struct {
	Gen   int // generations told, from 1
	Hyper cmaes.Hyper
	LogDF float64
	Runs  int // runs still running
}

// medianTrace returns the median of the runs' traces at every generation
// (the median over the runs still running there, each coordinate on its
// own), downsampled to at most maxPoints evenly spaced generations, the
// first and the last kept.
func medianTrace(runs []runResult, maxPoints int) []medianPoint {
	gens := 0
	for _, r := range runs {
		gens = max(gens, len(r.Trace))
	}
	var out []medianPoint
	for _, g := range sampleIndices(gens, maxPoints) {
		var c1, cmu, cc, ldf []float64
		for _, r := range runs {
			if g >= len(r.Trace) {
				continue
			}
			t := r.Trace[g]
			c1 = append(c1, t.Hyper.C1)
			cmu = append(cmu, t.Hyper.CMu)
			cc = append(cc, t.Hyper.Cc)
			ldf = append(ldf, math.Max(minLogDeltaF, math.Log10(t.DeltaF)))
		}
		out = append(out, medianPoint{
			Gen:   g + 1,
			Hyper: cmaes.Hyper{C1: median(c1), CMu: median(cmu), Cc: median(cc)},
			LogDF: median(ldf),
			Runs:  len(c1),
		})
	}
	return out
}

// sampleIndices returns at most k evenly spaced indices of 0..n−1, the
// first and the last included (all of them if n ≤ k).
func sampleIndices(n, k int) []int {
	if n <= k || k < 2 {
		idx := make([]int, 0, n)
		for i := range n {
			idx = append(idx, i)
		}
		return idx
	}
	idx := make([]int, k)
	for i := range k {
		idx[i] = int(math.Round(float64(i) * float64(n-1) / float64(k-1)))
	}
	return idx
}

// panel is one algorithm's plot.
type panel struct {
	Title    string
	Defaults cmaes.Hyper
	Points   []medianPoint
}

// figure is one SVG: a title and the panels side by side, sharing their
// scales.
type figure struct {
	Title  string
	Panels []panel
}

// Geometry of the SVG, in pixels.
const (
	panelW      = 480
	figH        = 410
	plotLeft    = 64 // from the panel's left edge
	plotRight   = 58 // from the panel's right edge
	plotTop     = 62
	plotBottom  = 322
	legendY     = 386
	markerEvery = 10 // about this many markers per rate line
)

// series are the learning rates, in legend order.
var series = []struct {
	label, class, color string
	get                 func(cmaes.Hyper) float64
}{
	{"c1", "c1", "#1f77b4", func(h cmaes.Hyper) float64 { return h.C1 }},
	{"cμ", "cmu", "#d62728", func(h cmaes.Hyper) float64 { return h.CMu }},
	{"cc", "cc", "#2ca02c", func(h cmaes.Hyper) float64 { return h.Cc }},
}

// tickStep returns the smallest step of 1, 2 or 5 times a power of ten
// that covers [0, span] with at most n intervals.
func tickStep(span float64, n int) float64 {
	step := plotaxis.NiceStep(span, n)
	if smaller := plotaxis.NiceStep(span/2, n); math.Ceil(span/smaller) <= float64(n) {
		step = smaller
	}
	return step
}

// writeSVG writes fig as a standalone SVG: per panel, the median rates on a
// log scale (left axis; lines with markers, the defaults dashed) and the
// median log10(f − f_opt) (plain black line, right axis), over generations.
func writeSVG(w io.Writer, fig figure) error {
	if len(fig.Panels) == 0 {
		return fmt.Errorf("plot %q: no panels", fig.Title)
	}
	// Shared scales.
	maxGen := 1
	rateLo, dfLo, dfHi := 0.0, math.Inf(1), math.Inf(-1)
	for _, p := range fig.Panels {
		for _, s := range series {
			rateLo = math.Min(rateLo, math.Floor(math.Log10(s.get(p.Defaults))))
		}
		for _, m := range p.Points {
			maxGen = max(maxGen, m.Gen)
			for _, s := range series {
				if v := s.get(m.Hyper); v > 0 {
					rateLo = math.Min(rateLo, math.Floor(math.Log10(v)))
				}
			}
			dfLo, dfHi = math.Min(dfLo, math.Floor(m.LogDF)), math.Max(dfHi, math.Ceil(m.LogDF))
		}
	}
	rateLo = math.Max(rateLo, -8)
	if math.IsInf(dfLo, 0) {
		dfLo, dfHi = -1, 1
	}
	if dfHi <= dfLo {
		dfHi = dfLo + 1
	}
	dfStep := math.Max(1, plotaxis.NiceStep(dfHi-dfLo, 8))
	dfLo, dfHi = math.Floor(dfLo/dfStep)*dfStep, math.Ceil(dfHi/dfStep)*dfStep
	xStep := tickStep(float64(maxGen), 8)
	xMax := math.Ceil(float64(maxGen)/xStep) * xStep
	left := plotaxis.Axis{Lo: rateLo, Hi: 0, P0: plotBottom, P1: plotTop}
	right := plotaxis.Axis{Lo: dfLo, Hi: dfHi, P0: plotBottom, P1: plotTop}

	width := panelW * len(fig.Panels)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		width, figH, width, figH)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, figH)
	fmt.Fprintf(&b, `<text class="title" x="%d" y="22" text-anchor="middle" font-size="15">%s</text>`+"\n", width/2, esc(fig.Title))

	for k, p := range fig.Panels {
		ox := float64(k * panelW)
		x := plotaxis.Axis{Lo: 0, Hi: xMax, P0: ox + plotLeft, P1: ox + panelW - plotRight}
		fmt.Fprintf(&b, `<g class="panel">`+"\n")
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" font-size="13">%s</text>`+"\n", (x.P0+x.P1)/2, plotTop-14, esc(p.Title))

		// Grid, ticks and labels.
		for g := 0.0; g <= xMax+xStep/2; g += xStep {
			px := x.At(g)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#999"/>`, px, plotBottom, px, plotBottom+5)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", px, plotBottom+18, strconv.FormatFloat(g, 'f', -1, 64))
		}
		decStep := math.Max(1, math.Ceil(-rateLo/7))
		for d := rateLo; d <= 0; d += decStep {
			py := left.At(d)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/>`, x.P0, py, x.P1, py)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", x.P0-6, py+4, decade(d))
		}
		for v := dfLo; v <= dfHi+dfStep/2; v += dfStep {
			py := right.At(v)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999"/>`, x.P1, py, x.P1+5, py)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", x.P1+8, py+4, strconv.FormatFloat(v, 'f', -1, 64))
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="none" stroke="#333"/>`+"\n", x.P0, plotTop, x.P1-x.P0, plotBottom-plotTop)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">generation</text>`+"\n", (x.P0+x.P1)/2, plotBottom+36)
		cy := (plotTop + plotBottom) / 2
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" transform="rotate(-90 %.1f %d)">learning rate</text>`+"\n", ox+16, cy, ox+16, cy)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" transform="rotate(90 %.1f %d)">log10(f − f_opt)</text>`+"\n", x.P1+44, cy, x.P1+44, cy)

		// Lines: the defaults dashed, the median rates with markers, then
		// log10(f − f_opt) on top.
		for _, s := range series {
			py := left.At(math.Log10(s.get(p.Defaults)))
			fmt.Fprintf(&b, `<polyline class="default %s" points="%.1f,%.1f %.1f,%.1f" fill="none" stroke="%s" stroke-width="1" stroke-dasharray="6 4"/>`+"\n",
				s.class, x.P0, py, x.P1, py, s.color)
		}
		for i, s := range series {
			var pts []string
			for _, m := range p.Points {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x.At(float64(m.Gen)), left.At(math.Max(rateLo, math.Log10(s.get(m.Hyper))))))
			}
			fmt.Fprintf(&b, `<polyline class="rate %s" points="%s" fill="none" stroke="%s" stroke-width="1.5"/>`+"\n", s.class, strings.Join(pts, " "), s.color)
			every := max(1, len(p.Points)/markerEvery)
			for j := (every * i / len(series)); j < len(p.Points); j += every {
				m := p.Points[j]
				b.WriteString(marker(i, x.At(float64(m.Gen)), left.At(math.Max(rateLo, math.Log10(s.get(m.Hyper)))), s.color))
			}
			b.WriteString("\n")
		}
		var pts []string
		for _, m := range p.Points {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x.At(float64(m.Gen)), right.At(m.LogDF)))
		}
		fmt.Fprintf(&b, `<polyline class="fitness" points="%s" fill="none" stroke="black" stroke-width="2"/>`+"\n", strings.Join(pts, " "))
		b.WriteString("</g>\n")
	}

	// Legend, one row under the panels.
	entries := []struct {
		label, color, dash, width string
		mark                      int // index of the marker, −1 for none
	}{
		{series[0].label, series[0].color, "", "1.5", 0},
		{series[1].label, series[1].color, "", "1.5", 1},
		{series[2].label, series[2].color, "", "1.5", 2},
		{"default (dashed)", "#555", "6 4", "1", -1},
		{"log10(f − f_opt), best so far (right axis)", "black", "", "2", -1},
	}
	entryW := func(label string) float64 { return 32 + 6.6*float64(len([]rune(label))) + 18 }
	total := 0.0
	for _, e := range entries {
		total += entryW(e.label)
	}
	lx := math.Max(8, (float64(width)-total)/2)
	for _, e := range entries {
		fmt.Fprintf(&b, `<g class="legend-entry"><line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="%s"`, lx, legendY, lx+26, legendY, e.color, e.width)
		if e.dash != "" {
			fmt.Fprintf(&b, ` stroke-dasharray="%s"`, e.dash)
		}
		b.WriteString("/>")
		if e.mark >= 0 {
			b.WriteString(marker(e.mark, lx+13, legendY, e.color))
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text></g>`+"\n", lx+32, legendY+4, esc(e.label))
		lx += entryW(e.label)
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// marker draws marker i (circle, square, triangle) centred at (x, y).
func marker(i int, x, y float64, color string) string {
	switch i {
	case 0:
		return fmt.Sprintf(`<circle cx="%.1f" cy="%.1f" r="3.2" fill="white" stroke="%s"/>`, x, y, color)
	case 1:
		return fmt.Sprintf(`<rect x="%.1f" y="%.1f" width="6" height="6" fill="white" stroke="%s"/>`, x-3, y-3, color)
	}
	return fmt.Sprintf(`<path d="M%.1f %.1fL%.1f %.1fL%.1f %.1fZ" fill="white" stroke="%s"/>`, x, y-3.8, x+3.6, y+2.6, x-3.6, y+2.6, color)
}

// decade labels 10^d.
func decade(d float64) string {
	return strconv.FormatFloat(math.Pow(10, d), 'g', -1, 64)
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func esc(s string) string { return xmlEscaper.Replace(s) }

// plotFile is the file name of the plot of function f in dimension n.
func plotFile(f, n int) string { return fmt.Sprintf("f%02d-d%02d.svg", f, n) }

// writePlots writes one SVG per function and dimension into o.plots and
// returns the files written.
func writePlots(o options, results []runResult) ([]string, error) {
	if err := os.MkdirAll(o.plots, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, f := range o.functions {
		for _, n := range o.dims {
			fig := plotFigure(o, f, n, results)
			var b bytes.Buffer
			if err := writeSVG(&b, fig); err != nil {
				return nil, err
			}
			path := filepath.Join(o.plots, plotFile(f, n))
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				return nil, err
			}
			files = append(files, path)
		}
	}
	return files, nil
}

// plotFigure builds the figure of function f in dimension n: one panel per
// algorithm, in algOrder.
func plotFigure(o options, f, n int, results []runResult) figure {
	var panels []panel
	var lambdas []int
	for _, a := range o.algorithms {
		var runs []runResult
		for _, r := range results {
			if r.Function == f && r.Dimension == n && r.Algorithm == a {
				runs = append(runs, r)
			}
		}
		if len(runs) == 0 {
			continue
		}
		title := displayName(a)
		if a == algSelf && o.init != selfcma.InitDefault {
			title += " (init " + o.init + ")"
		}
		lambdas = append(lambdas, runs[0].Lambda)
		panels = append(panels, panel{Title: title, Defaults: runs[0].Defaults, Points: medianTrace(runs, maxPlotPoints)})
	}
	sameLambda := true
	for _, l := range lambdas {
		sameLambda = sameLambda && l == lambdas[0]
	}
	title := fmt.Sprintf("%s, %d-D", functionName(f), n)
	if sameLambda && len(lambdas) > 0 {
		title += fmt.Sprintf(", λ = %d", lambdas[0])
	} else {
		for i := range panels {
			panels[i].Title += fmt.Sprintf(", λ = %d", lambdas[i])
		}
	}
	restarts := map[string]bool{}
	for _, a := range o.algorithms {
		restarts[o.config(a).Restarts] = true
	}
	for r := range restarts {
		if len(restarts) == 1 && r != defaults.RestartsNone {
			title += ", " + strings.ToUpper(r)
		}
	}
	return figure{Title: title + fmt.Sprintf(" (median of %d runs)", len(o.instances)), Panels: panels}
}
