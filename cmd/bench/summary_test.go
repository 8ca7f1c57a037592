package main

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
)

// runs builds results of one algorithm: a positive value is a success after
// that many evaluations, a negative one a failure after −value evaluations.
func runs(alg string, evals ...int) []runResult {
	var rs []runResult
	for i, e := range evals {
		r := runResult{job: job{Algorithm: alg, Function: 8, Dimension: 10, Run: i + 1}}
		if e > 0 {
			r.EvalsToTarget, r.Evaluations = e, e
		} else {
			r.Evaluations = -e
		}
		rs = append(rs, r)
	}
	return rs
}

func sameFloat(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b)) || math.Abs(a-b) <= 1e-9*math.Abs(b)
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name                string
		evals               []int
		succ                int
		median, lo, hi, ert float64
	}{
		{"one success", []int{500}, 1, 500, 500, 500, 500},
		{"odd, all succeed", []int{300, 100, 200}, 3, 200, 100, 300, 200},
		{"even: mean of the middle two", []int{400, 100, 300, 200}, 4, 250, 100, 400, 250},
		// (100 + 200 + 400 + 1000) / 3
		{"a failure counts in the ERT only", []int{100, 200, 400, -1000}, 3, 200, 100, 400, 1700.0 / 3},
		// (700 + 5000 + 5000) / 1
		{"mostly failures", []int{-5000, 700, -5000}, 1, 700, 700, 700, 10700},
		{"no success", []int{-100, -200}, 0, math.NaN(), math.NaN(), math.NaN(), math.Inf(1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := summarize(runs(algSelf, tc.evals...))
			if s.Runs != len(tc.evals) || s.Successes != tc.succ {
				t.Errorf("successes %d/%d, want %d/%d", s.Successes, s.Runs, tc.succ, len(tc.evals))
			}
			for _, c := range []struct {
				what      string
				got, want float64
			}{{"median", s.Median, tc.median}, {"min", s.Min, tc.lo}, {"max", s.Max, tc.hi}, {"ERT", s.ERT, tc.ert}} {
				if !sameFloat(c.got, c.want) {
					t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
				}
			}
			if s.Function != 8 || s.Dimension != 10 || s.Algorithm != algSelf {
				t.Errorf("group = f%d %d-D %s, want f8 10-D %s", s.Function, s.Dimension, s.Algorithm, algSelf)
			}
		})
	}
}

func TestSummarizeAllGroups(t *testing.T) {
	rs := append(runs(algCMA, 100, 300), runs(algSelf, 50, -60, 70)...)
	sums := summarizeAll(rs)
	if len(sums) != 2 {
		t.Fatalf("%d summaries, want 2", len(sums))
	}
	if got := sums[0]; got.Algorithm != algCMA || got.Runs != 2 || got.Median != 200 {
		t.Errorf("first summary %+v, want cma-es, 2 runs, median 200", got)
	}
	// (50 + 60 + 70) / 2
	if got := sums[1]; got.Algorithm != algSelf || got.Runs != 3 || got.Median != 60 || got.ERT != 90 {
		t.Errorf("second summary %+v, want self-cma-es, 3 runs, median 60, ERT 90", got)
	}
}

// cells splits a Markdown table row into its trimmed cells.
func cells(row string) []string {
	parts := strings.Split(strings.Trim(row, "| "), "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

func TestWriteTable(t *testing.T) {
	sums := summarizeAll(append(runs(algCMA, 100, 300), runs(algSelf, 50, -60, 70)...))
	tests := []struct {
		name   string
		algs   []string
		sums   []summary
		header []string
		row    []string
	}{
		{"both, with ratios", []string{algCMA, algSelf}, sums,
			[]string{"function", "n", "CMA-ES succ", "CMA-ES median [min–max]", "CMA-ES ERT",
				"self-CMA-ES succ", "self-CMA-ES median [min–max]", "self-CMA-ES ERT", "CMA/self median", "CMA/self ERT"},
			// 200/60 and 200/90
			[]string{"f8 Rosenbrock", "10", "2/2", "200 [100–300]", "200", "2/3", "60 [50–70]", "90", "3.33", "2.22"}},
		{"one, no ratios", []string{algSelf}, sums[1:],
			[]string{"function", "n", "self-CMA-ES succ", "self-CMA-ES median [min–max]", "self-CMA-ES ERT"},
			[]string{"f8 Rosenbrock", "10", "2/3", "60 [50–70]", "90"}},
		{"no success", []string{algSelf}, []summary{summarize(runs(algSelf, -10))},
			[]string{"function", "n", "self-CMA-ES succ", "self-CMA-ES median [min–max]", "self-CMA-ES ERT"},
			[]string{"f8 Rosenbrock", "10", "0/1", "—", "∞"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := options{algorithms: tc.algs, functions: []int{8}, dims: []int{10}}
			var b bytes.Buffer
			if err := writeTable(&b, o, tc.sums); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			if len(lines) != 3 {
				t.Fatalf("%d lines, want 3 (header, rule, one row):\n%s", len(lines), b.String())
			}
			if got := cells(lines[0]); !slices.Equal(got, tc.header) {
				t.Errorf("header %q, want %q", got, tc.header)
			}
			if got := cells(lines[2]); !slices.Equal(got, tc.row) {
				t.Errorf("row %q, want %q", got, tc.row)
			}
			if w := len([]rune(lines[0])); len([]rune(lines[1])) != w || len([]rune(lines[2])) != w {
				t.Errorf("lines of different widths:\n%s", b.String())
			}
		})
	}
}

func TestFormatCount(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{7876, "7876"}, {7876.5, "7876.5"}, {math.NaN(), "—"}, {math.Inf(1), "∞"}} {
		if got := formatCount(tc.v); got != tc.want {
			t.Errorf("formatCount(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestWriteMarkdownRule(t *testing.T) {
	// A one-character column still gets a "-" in its rule: ":" alone is
	// not a table in GitHub's Markdown.
	var b bytes.Buffer
	if err := writeMarkdown(&b, [][]string{{"f", "n"}, {"f8", "3"}}); err != nil {
		t.Fatal(err)
	}
	want := "| f  | n  |\n| -- | -: |\n| f8 |  3 |\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
