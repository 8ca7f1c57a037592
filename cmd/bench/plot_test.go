package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// svgCounts decodes an SVG with encoding/xml and counts its polylines and
// legend entries.
func svgCounts(tb testing.TB, svg []byte) (polylines, legend int, title string) {
	tb.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	inTitle := false
	root := true
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			tb.Fatalf("invalid XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if root && (el.Name.Local != "svg" || el.Name.Space != "http://www.w3.org/2000/svg") {
				tb.Fatalf("root element %v, want svg in the SVG namespace", el.Name)
			}
			root = false
			if el.Name.Local == "polyline" {
				polylines++
			}
			for _, a := range el.Attr {
				if a.Name.Local == "class" && a.Value == "legend-entry" {
					legend++
				}
				if a.Name.Local == "class" && a.Value == "title" {
					inTitle = true
				}
			}
		case xml.CharData:
			if inTitle {
				title += string(el)
			}
		case xml.EndElement:
			inTitle = false
		}
	}
	return polylines, legend, title
}

// trace makes a run whose generation g has the rates (g+1)·h and
// f − f_opt = 10^−g.
func trace(alg string, gens int, h cmaes.Hyper) runResult {
	r := runResult{job: job{Algorithm: alg, Function: 8, Dimension: 10}, Lambda: 100, Defaults: h}
	for g := range gens {
		k := float64(g + 1)
		r.Trace = append(r.Trace, tracePoint{Hyper: cmaes.Hyper{C1: k * h.C1, CMu: k * h.CMu, Cc: k * h.Cc}, DeltaF: math.Pow(10, -float64(g))})
	}
	return r
}

func TestMedianTrace(t *testing.T) {
	h := cmaes.Hyper{C1: 0.01, CMu: 0.02, Cc: 0.03}
	// Lengths 2, 3, 5: at generations 1–2 three runs, at 3 two, at 4–5 one.
	runs := []runResult{trace(algCMA, 2, h), trace(algCMA, 5, h), trace(algCMA, 3, h)}
	runs[1].Trace[0].Hyper.C1 = 1 // the median ignores one outlier
	got := medianTrace(runs, 100)
	if len(got) != 5 {
		t.Fatalf("%d points, want 5", len(got))
	}
	wantRuns := []int{3, 3, 2, 1, 1}
	for g, m := range got {
		k := float64(g + 1)
		if m.Gen != g+1 || m.Runs != wantRuns[g] {
			t.Errorf("point %d: generation %d over %d runs, want %d over %d", g, m.Gen, m.Runs, g+1, wantRuns[g])
		}
		if !sameFloat(m.Hyper.C1, k*h.C1) || !sameFloat(m.Hyper.Cc, k*h.Cc) || !sameFloat(m.LogDF, -float64(g)) {
			t.Errorf("point %d: %+v, want c1 %v, cc %v, log10 Δf %v", g, m, k*h.C1, k*h.Cc, -float64(g))
		}
	}

	// Downsampled: 1000 generations to 300 points, first and last kept.
	long := medianTrace([]runResult{trace(algCMA, 1000, h)}, 300)
	if len(long) != 300 || long[0].Gen != 1 || long[299].Gen != 1000 {
		t.Errorf("downsampled to %d points from generation %d to %d, want 300 from 1 to 1000", len(long), long[0].Gen, long[len(long)-1].Gen)
	}
}

func TestSampleIndices(t *testing.T) {
	for _, tc := range []struct {
		n, k int
		want []int
	}{{3, 5, []int{0, 1, 2}}, {5, 5, []int{0, 1, 2, 3, 4}}, {9, 3, []int{0, 4, 8}}, {10, 4, []int{0, 3, 6, 9}}, {0, 4, []int{}}} {
		if got := sampleIndices(tc.n, tc.k); !slices.Equal(got, tc.want) {
			t.Errorf("sampleIndices(%d, %d) = %v, want %v", tc.n, tc.k, got, tc.want)
		}
	}
}

func TestWriteSVG(t *testing.T) {
	h := cmaes.Hyper{C1: 0.004, CMu: 0.05, Cc: 0.16}
	cma := []runResult{trace(algCMA, 40, h), trace(algCMA, 50, h)}
	self := []runResult{trace(algSelf, 30, h)}
	tests := []struct {
		name   string
		panels []panel
	}{
		{"one panel", []panel{{Title: "CMA-ES", Defaults: h, Points: medianTrace(cma, 300)}}},
		{"two panels", []panel{
			{Title: "CMA-ES", Defaults: h, Points: medianTrace(cma, 300)},
			{Title: "self-CMA-ES <&>", Defaults: h, Points: medianTrace(self, 300)},
		}},
		{"one generation", []panel{{Title: "x", Defaults: h, Points: medianTrace([]runResult{trace(algCMA, 1, h)}, 300)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			title := "f8 Rosenbrock, 10-D, λ = 100 (median of 15 runs) & <more>"
			if err := writeSVG(&b, figure{Title: title, Panels: tc.panels}); err != nil {
				t.Fatal(err)
			}
			poly, legend, gotTitle := svgCounts(t, b.Bytes())
			// Per panel: c1, cμ, cc, their three defaults and log10(f − f_opt).
			if want := 7 * len(tc.panels); poly != want {
				t.Errorf("%d polylines, want %d", poly, want)
			}
			if legend != 5 {
				t.Errorf("%d legend entries, want 5", legend)
			}
			if gotTitle != title {
				t.Errorf("title %q, want %q", gotTitle, title)
			}
			if strings.Contains(b.String(), "NaN") || strings.Contains(b.String(), "Inf") {
				t.Error("SVG holds a non-finite coordinate")
			}
		})
	}
	if err := writeSVG(io.Discard, figure{Title: "empty"}); err == nil {
		t.Error("writeSVG of a figure without panels succeeded")
	}
}

func TestTickStep(t *testing.T) {
	for _, tc := range []struct {
		span float64
		n    int
		want float64
	}{{82, 8, 20}, {225, 8, 50}, {603, 8, 100}, {1, 8, 0.2}, {5000, 8, 1000}, {4000, 8, 500}} {
		got := tickStep(tc.span, tc.n)
		if !sameFloat(got, tc.want) {
			t.Errorf("tickStep(%v, %d) = %v, want %v", tc.span, tc.n, got, tc.want)
		}
		if math.Ceil(tc.span/got) > float64(tc.n) {
			t.Errorf("tickStep(%v, %d) = %v: more than %d intervals", tc.span, tc.n, got, tc.n)
		}
	}
}
