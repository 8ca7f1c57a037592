package ui

import (
	"bytes"
	"cmp"
	"html"
	"math"
	"slices"

	"github.com/selfcma/selfcma/internal/plotaxis"
)

// End labels right of the plot area.
const (
	// endLabelGap is the least vertical distance between two end labels
	// (their font is 10 units high).
	endLabelGap = 11
	// maxEndLabels is the most lines labelled: the top few.
	maxEndLabels = 10
	// maxLabelShift is how far below its line's end a label may sit.
	maxLabelShift = endLabelGap
)

// lineEnd is where a line ends, and where its label goes.
type lineEnd struct {
	l       *line
	y, at   float64 // height of the line's end and of its label, in pixels
	labeled bool
}

// placeEndLabels returns the ends of the lines that have an EndLabel, from
// the top down, and labels the top few: each as near the height of its
// line's end as the label above it allows, at most maxLabelShift below
// it, and no closer than endLabelGap to the label above. The others are
// left to their title, on hover.
func placeEndLabels(lines []line, y plotaxis.Axis, top float64) []lineEnd {
	var ends []lineEnd
	for i := range lines {
		l := &lines[i]
		if l.EndLabel == "" || len(l.Xs) == 0 {
			continue
		}
		py := math.Min(math.Max(y.At(l.Ys[len(l.Ys)-1]), top), plotBottom)
		ends = append(ends, lineEnd{l: l, y: py})
	}
	slices.SortStableFunc(ends, func(a, b lineEnd) int { return cmp.Compare(a.y, b.y) })
	next, n := math.Inf(-1), 0
	for i := range ends {
		e := &ends[i]
		at := math.Max(e.y, next)
		if n == maxEndLabels || at-e.y > maxLabelShift {
			continue
		}
		e.at, e.labeled = at, true
		next, n = at+endLabelGap, n+1
	}
	return ends
}

// writeEndLabels writes, right of the plot area (which ends at right),
// each labelled line's EndLabel with a thin leader from the frame at the
// height of its end, and a short tick at the end of each other line,
// whose title shows on hover.
func writeEndLabels(b *bytes.Buffer, lines []line, y plotaxis.Axis, right, top float64) {
	b.WriteString(`<g class="end-labels" font-size="10">`)
	for _, e := range placeEndLabels(lines, y, top) {
		l := e.l
		if !e.labeled {
			b.WriteString(`<g class="end-tick" data-series="` + l.Name + `"><title>` + html.EscapeString(l.Title) +
				`</title><line x1="` + fmtPx(right+1) + `" x2="` + fmtPx(right+7) + `" y1="` + fmtPx(e.y) + `" y2="` + fmtPx(e.y) +
				`" stroke-width="2" stroke="` + l.Color + `"/></g>`)
			continue
		}
		b.WriteString(`<g data-series="` + l.Name + `"><polyline fill="none" stroke-width="0.7" stroke-opacity="0.6" stroke="` + l.Color +
			`" points="` + fmtPx(right+1) + `,` + fmtPx(e.y) + ` ` + fmtPx(right+4) + `,` + fmtPx(e.y) + ` ` + fmtPx(right+11) + `,` +
			fmtPx(e.at) + `"/>`)
		b.WriteString(`<text class="end-label" x="` + fmtPx(right+13) + `" y="` + fmtPx(e.at+3.5) + `" fill="` + l.Color + `">` +
			html.EscapeString(l.EndLabel) + `</text><title>` + html.EscapeString(l.Title) + `</title></g>`)
	}
	b.WriteString(`</g>`)
}
