package ui

import (
	"bytes"
	"html"
	"strconv"
)

// Legend rows above the plot area.
const (
	legendY    = 40 // baseline of the first row
	legendRowH = 16 // from one row's baseline to the next
	// legendGap is from the last row's baseline to the plot area, with
	// room for the restarts' labels.
	legendGap = 18
)

// legendEntry is an entry of a chart's legend.
type legendEntry struct {
	Name, Label, Color string
	Dashed, Marker     bool
}

// placedEntry is a legend entry at its place: X is the left of its
// swatch, Y its text's baseline.
type placedEntry struct {
	legendEntry
	X, Y float64
}

// placeLegend places the entries in rows from plotLeft, wrapping where an
// entry would pass plotRight, and returns the top of the plot area below
// them.
func placeLegend(entries []legendEntry) (placed []placedEntry, top float64) {
	x, y := float64(plotLeft), float64(legendY)
	for _, e := range entries {
		w := 28 + charWidth*float64(len([]rune(e.Label)))
		if x > plotLeft && x+w > plotRight {
			x, y = plotLeft, y+legendRowH
		}
		placed = append(placed, placedEntry{legendEntry: e, X: x, Y: y})
		x += w + 22
	}
	return placed, y + legendGap
}

// writeLegend writes the placed entries: a swatch of the line (or of the
// restart marker) and the label.
func writeLegend(b *bytes.Buffer, entries []placedEntry) {
	b.WriteString(`<g class="legend">`)
	for _, e := range entries {
		b.WriteString(`<g class="legend-entry" data-series="` + e.Name + `">`)
		if e.Marker {
			b.WriteString(`<line x1="` + fmtPx(e.X+10) + `" x2="` + fmtPx(e.X+10) + `" y1="` + fmtPx(e.Y-11) + `" y2="` +
				fmtPx(e.Y+3) + `" stroke="#888" stroke-width="1.2" stroke-dasharray="2 3"/>`)
		} else {
			b.WriteString(`<line x1="` + fmtPx(e.X) + `" x2="` + fmtPx(e.X+22) + `" y1="` + fmtPx(e.Y-4) + `" y2="` +
				fmtPx(e.Y-4) + `" stroke="` + e.Color + `" stroke-width="2"`)
			if e.Dashed {
				b.WriteString(` stroke-dasharray="6 3"`)
			}
			b.WriteString(`/>`)
		}
		b.WriteString(`<text x="` + strconv.FormatFloat(e.X+28, 'f', 1, 64) + `" y="` + fmtPx(e.Y) + `" fill="#222">` +
			html.EscapeString(e.Label) + `</text></g>`)
	}
	b.WriteString(`</g>`)
}
