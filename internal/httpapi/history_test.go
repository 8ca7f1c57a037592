package httpapi

import (
	"encoding/csv"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The history answers the distribution after each generation, in JSON and
// in CSV: the overall step always, the axis lengths, standard deviations
// and mean per coordinate up to 100 coordinates.
func TestHistoryDistribution(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	type record struct {
		Generation  int       `json:"generation"`
		Sigma       float64   `json:"sigma"`
		AxisRatio   float64   `json:"axis_ratio"`
		OverallStep *float64  `json:"overall_step"`
		AxisLengths []float64 `json:"axis_lengths"`
		Stds        []float64 `json:"stds"`
		Mean        []float64 `json:"mean"`
	}
	for _, n := range []int{3, 101} {
		x0 := make([]float64, n)
		for i := range x0 {
			x0[i] = float64(i%5) - 2
		}
		s := ts.create(t, map[string]any{"x0": x0, "sigma0": 0.5, "algorithm": "cma-es", "seed": 9})
		for range 3 {
			ts.tell(t, s.ID, sphereTell(ts.ask(t, s.ID)))
		}
		h := decode[struct {
			Records []record `json:"records"`
		}](t, ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/history"}))
		if len(h.Records) != 3 {
			t.Fatalf("n=%d: %d records", n, len(h.Records))
		}
		for _, r := range h.Records {
			if r.OverallStep == nil || !(*r.OverallStep > 0) {
				t.Fatalf("n=%d, generation %d: overall step %v", n, r.Generation, r.OverallStep)
			}
			if n > 100 {
				if r.AxisLengths != nil || r.Stds != nil || r.Mean != nil {
					t.Errorf("n=%d: per-coordinate values answered", n)
				}
				continue
			}
			if len(r.AxisLengths) != n || len(r.Stds) != n || len(r.Mean) != n || !slices.IsSorted(r.AxisLengths) {
				t.Fatalf("n=%d, generation %d: axis lengths %v, stds %v, mean %v", n, r.Generation, r.AxisLengths, r.Stds, r.Mean)
			}
			if d := r.AxisLengths; math.Abs(*r.OverallStep-r.Sigma*d[n-1]) > 1e-15**r.OverallStep || math.Abs(r.AxisRatio-d[n-1]/d[0]) > 1e-12*r.AxisRatio {
				t.Errorf("generation %d: overall step %v, axis ratio %v; σ = %v, axis lengths %v", r.Generation, *r.OverallStep, r.AxisRatio, r.Sigma, d)
			}
		}

		c := ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/history?format=csv"})
		rows, err := csv.NewReader(strings.NewReader(string(c.body))).ReadAll()
		if err != nil || len(rows) != 4 {
			t.Fatalf("n=%d: csv of %d rows, %v", n, len(rows), err)
		}
		col := map[string]int{}
		for i, name := range rows[0] {
			col[name] = i
		}
		wantCols := len(csvHeader)
		if n <= 100 {
			wantCols += 3 * n
		}
		if len(rows[0]) != wantCols || rows[0][len(csvHeader)-2] != "overall_step" || rows[0][len(csvHeader)-1] != "injected" {
			t.Fatalf("n=%d: csv header %v", n, rows[0])
		}
		for k, r := range h.Records {
			row := rows[k+1]
			check := func(name string, want float64) {
				t.Helper()
				got, err := strconv.ParseFloat(row[col[name]], 64)
				if err != nil || got != want {
					t.Errorf("n=%d, generation %d: csv %s = %q, json %v", n, r.Generation, name, row[col[name]], want)
				}
			}
			check("overall_step", *r.OverallStep)
			if n <= 100 {
				check("axis_length_0", r.AxisLengths[0])
				check("std_"+strconv.Itoa(n-1), r.Stds[n-1])
				check("mean_1", r.Mean[1])
			}
		}
	}
}
