package ui

import (
	"bytes"
	"html"
	"math"
	"strconv"
)

// writeData writes the restarts, the stepped lines and the lines, clipped
// to the plot area.
func (c *chart) writeData(b *bytes.Buffer, f *frame) {
	id := "plot-" + c.ID
	area := `x="` + fmtPx(plotLeft) + `" y="` + fmtPx(f.top) + `" width="` + fmtPx(f.right-plotLeft) + `" height="` +
		fmtPx(plotBottom-f.top) + `"`
	b.WriteString(`<clipPath id="` + id + `-clip"><rect ` + area + `/></clipPath>`)
	b.WriteString(`<g clip-path="url(#` + id + `-clip)" fill="none" stroke-linejoin="round">`)
	for _, m := range c.Markers {
		px := fmtPx(f.x.At(m.X))
		b.WriteString(`<line class="restart" data-run="` + strconv.Itoa(m.Run) + `" x1="` + px + `" x2="` + px +
			`" y1="` + fmtPx(f.top) + `" y2="` + fmtPx(plotBottom) + `" stroke="#888" stroke-width="1.2" stroke-dasharray="2 3"/>`)
	}
	for _, s := range c.Steps {
		writeSteps(b, s, f)
	}
	yClamp := f.y.Lo - 1 // values below a log axis's range (maxDecades) drawn just below it
	if c.Linear {
		yClamp = math.Inf(-1)
	}
	for _, l := range f.lines {
		writeLine(b, l, f, yClamp)
	}
	b.WriteString(`</g>`)
}

// writeSteps writes a stepped line as a dashed path.
func writeSteps(b *bytes.Buffer, s steps, f *frame) {
	b.WriteString(`<path class="default" data-series="` + s.Name + `" data-points="` + strconv.Itoa(2*len(s.Segs)) +
		`" stroke="` + s.Color + `" stroke-width="1.5" stroke-dasharray="7 4" d="`)
	for i, g := range s.Segs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("M" + fmtPx(f.x.At(g.X0)) + " " + fmtPx(f.y.At(g.Y)) + " H" + fmtPx(f.x.At(g.X1)))
	}
	b.WriteString(`"/>`)
}

// writeLine writes a line as a polyline, its values below yClamp at
// yClamp, with its Title if any.
func writeLine(b *bytes.Buffer, l line, f *frame, yClamp float64) {
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
	var num []byte
	for i := range l.Xs {
		if i > 0 {
			b.WriteByte(' ')
		}
		num = strconv.AppendFloat(num[:0], f.x.At(l.Xs[i]), 'f', 1, 64)
		b.Write(num)
		b.WriteByte(',')
		num = strconv.AppendFloat(num[:0], f.y.At(math.Max(l.Ys[i], yClamp)), 'f', 1, 64)
		b.Write(num)
	}
	if l.Title == "" {
		b.WriteString(`"/>`)
		return
	}
	b.WriteString(`"><title>` + html.EscapeString(l.Title) + `</title></polyline>`)
}

// writeRestartLabels writes the restarts' labels above the plot area,
// where no data can hide them; one that would overlap the previous is left
// out.
func (c *chart) writeRestartLabels(b *bytes.Buffer, f *frame) {
	labelEnd := math.Inf(-1)
	for _, m := range c.Markers {
		px := f.x.At(m.X)
		if m.Label == "" || px < labelEnd {
			continue
		}
		labelEnd = px + 4 + 5.6*float64(len([]rune(m.Label))) + 8
		b.WriteString(`<line class="restart-tick" x1="` + fmtPx(px) + `" x2="` + fmtPx(px) + `" y1="` + fmtPx(f.top-10) +
			`" y2="` + fmtPx(f.top) + `" stroke="#888" stroke-width="1.2"/>`)
		b.WriteString(`<text class="restart-label" x="` + fmtPx(px+3) + `" y="` + fmtPx(f.top-3) + `" font-size="10" fill="#555">` +
			html.EscapeString(m.Label) + `</text>`)
	}
}
