package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/selfcma/selfcma/internal/bbob"
)

// summary describes the runs of one algorithm on one function and dimension.
type summary struct {
	Function, Dimension int
	Algorithm           string
	Label               string // the runs' label
	Runs, Successes     int
	// Median, Min and Max evaluations to the target over the successful
	// runs; NaN without a success.
	Median, Min, Max float64
	// ERT is the expected running time: the evaluations of all runs
	// (Cost) divided by the successes; +Inf without a success.
	ERT float64
}

// summarize computes the summary of runs (of one algorithm, function and
// dimension).
func summarize(runs []runResult) summary {
	s := summary{Runs: len(runs), Median: math.NaN(), Min: math.NaN(), Max: math.NaN(), ERT: math.Inf(1)}
	if len(runs) > 0 {
		s.Function, s.Dimension, s.Algorithm, s.Label = runs[0].Function, runs[0].Dimension, runs[0].Algorithm, runs[0].Label
	}
	var evals []float64
	total := 0
	for _, r := range runs {
		total += r.Cost()
		if r.Success() {
			evals = append(evals, float64(r.EvalsToTarget))
		}
	}
	s.Successes = len(evals)
	if s.Successes > 0 {
		s.Median, s.Min, s.Max = median(evals), slices.Min(evals), slices.Max(evals)
		s.ERT = float64(total) / float64(s.Successes)
	}
	return s
}

// median returns the median of v (the mean of the two middle values for an
// even length), NaN for none. It does not modify v.
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// summarizeAll groups sorted results by function, dimension and algorithm.
func summarizeAll(results []runResult) []summary {
	var out []summary
	for start := 0; start < len(results); {
		end := start + 1
		for end < len(results) && sameGroup(results[start], results[end]) {
			end++
		}
		out = append(out, summarize(results[start:end]))
		start = end
	}
	return out
}

func sameGroup(a, b runResult) bool {
	return a.Function == b.Function && a.Dimension == b.Dimension && a.Algorithm == b.Algorithm
}

// formatCount prints an evaluation count: an integer, or with one decimal
// for the median of an even number of runs.
func formatCount(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case math.IsInf(v, 1):
		return "∞"
	case v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// formatRatio prints a/b with two decimals, or — if either is missing.
func formatRatio(a, b float64) string {
	r := a / b
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "—"
	}
	return strconv.FormatFloat(r, 'f', 2, 64)
}

// functionName is the function as in the tables and plot titles, like
// "f8 Rosenbrock".
func functionName(f int) string {
	name := bbob.Name(f)
	num, rest, ok := strings.Cut(name, " ")
	if !ok || rest == "" {
		return name
	}
	return num + " " + strings.ToUpper(rest[:1]) + rest[1:]
}

// writeTable prints the summaries as a Markdown table: one row per function
// and dimension, for each algorithm the successes, the median [min–max]
// evaluations to the target and the ERT, then the ratios CMA-ES /
// self-CMA-ES of the medians and ERTs when both ran.
func writeTable(w io.Writer, o options, sums []summary) error {
	header := []string{"function", "n"}
	for _, a := range o.algorithms {
		d := displayName(a)
		header = append(header, d+" succ", d+" median [min–max]", d+" ERT")
	}
	ratios := slices.Contains(o.algorithms, algCMA) && slices.Contains(o.algorithms, algSelf)
	if ratios {
		header = append(header, "CMA/self median", "CMA/self ERT")
	}
	rows := [][]string{header}
	for _, f := range o.functions {
		for _, n := range o.dims {
			row := []string{functionName(f), strconv.Itoa(n)}
			byAlg := map[string]summary{}
			for _, s := range sums {
				if s.Function == f && s.Dimension == n {
					byAlg[s.Algorithm] = s
				}
			}
			for _, a := range o.algorithms {
				s := byAlg[a]
				spread := formatCount(s.Median)
				if s.Successes > 0 {
					spread += " [" + formatCount(s.Min) + "–" + formatCount(s.Max) + "]"
				}
				row = append(row, fmt.Sprintf("%d/%d", s.Successes, s.Runs), spread, formatCount(math.Round(s.ERT)))
			}
			if ratios {
				c, s := byAlg[algCMA], byAlg[algSelf]
				row = append(row, formatRatio(c.Median, s.Median), formatRatio(c.ERT, s.ERT))
			}
			rows = append(rows, row)
		}
	}
	return writeMarkdown(w, rows)
}

// writeMarkdown writes rows (the first is the header) as a Markdown table
// with padded columns; numeric columns are right-aligned.
func writeMarkdown(w io.Writer, rows [][]string) error {
	width := make([]int, len(rows[0]))
	for i := range width {
		width[i] = 2 // the rule of a right-aligned column needs a "-" before its ":"
	}
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	pad := func(s string, n int, right bool) string {
		fill := strings.Repeat(" ", n-len([]rune(s)))
		if right {
			return fill + s
		}
		return s + fill
	}
	var b strings.Builder
	for k, r := range rows {
		b.WriteString("|")
		for i, c := range r {
			b.WriteString(" " + pad(c, width[i], k > 0 && i > 0) + " |")
		}
		b.WriteString("\n")
		if k == 0 {
			b.WriteString("|")
			for i := range r {
				dash := strings.Repeat("-", width[i])
				if i > 0 {
					dash = dash[1:] + ":"
				}
				b.WriteString(" " + dash + " |")
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// jsonRun is the JSON object of one run. Its fields function, dimension,
// instance, algorithm, evals_to_target, evaluations and final_delta_f are
// those of pycma_bbob.py's lines, which -summary reads alike; algorithm is
// the label (options.label), config the settings it stands for.
type jsonRun struct {
	Kind          string       `json:"kind"` // "run"
	Function      int          `json:"function"`
	Dimension     int          `json:"dimension"`
	Algorithm     string       `json:"algorithm"`
	Config        algConfig    `json:"config"`
	Run           int          `json:"run"`
	Instance      int          `json:"instance"`
	Lambda        int          `json:"lambda"`
	EvalsToTarget *int         `json:"evals_to_target"` // null: target not reached
	Evaluations   int          `json:"evaluations"`
	FinalDeltaF   float64      `json:"final_delta_f"` // best f − f_opt
	Generations   int          `json:"generations"`
	Restarts      int          `json:"restarts"`
	Stop          []string     `json:"stop"`
	Runs          []restartRun `json:"per_run,omitempty"` // -per-run
}

// jsonSummary is the JSON object of one summary; null for what is missing
// without a success. The ratios are CMA-ES / self-CMA-ES, on self-CMA-ES's
// summaries when both ran; algorithm is the label.
type jsonSummary struct {
	Kind        string   `json:"kind"` // "summary"
	Function    int      `json:"function"`
	Dimension   int      `json:"dimension"`
	Algorithm   string   `json:"algorithm"`
	Runs        int      `json:"runs"`
	Successes   int      `json:"successes"`
	Median      *float64 `json:"median_evals"`
	Min         *float64 `json:"min_evals"`
	Max         *float64 `json:"max_evals"`
	ERT         *float64 `json:"ert"`
	RatioMedian *float64 `json:"cma_over_self_median,omitempty"`
	RatioERT    *float64 `json:"cma_over_self_ert,omitempty"`
}

// finite returns &v, or nil for NaN and ±Inf.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// writeJSON writes one JSON object per line: the runs, then the summaries.
func writeJSON(w io.Writer, results []runResult, sums []summary) error {
	enc := json.NewEncoder(w)
	for _, r := range results {
		jr := jsonRun{
			Kind: "run", Function: r.Function, Dimension: r.Dimension, Algorithm: r.Label, Config: r.Config,
			Run: r.Run, Instance: r.Instance, Lambda: r.Lambda, Evaluations: r.Evaluations,
			FinalDeltaF: r.FinalDeltaF, Generations: r.Generations, Restarts: r.Restarts, Stop: r.Stop, Runs: r.Runs,
		}
		if r.Success() {
			e := r.EvalsToTarget
			jr.EvalsToTarget = &e
		}
		if err := enc.Encode(jr); err != nil {
			return err
		}
	}
	for _, s := range sums {
		js := jsonSummary{
			Kind: "summary", Function: s.Function, Dimension: s.Dimension, Algorithm: s.Label,
			Runs: s.Runs, Successes: s.Successes,
			Median: finite(s.Median), Min: finite(s.Min), Max: finite(s.Max), ERT: finite(s.ERT),
		}
		if s.Algorithm == algSelf {
			for _, c := range sums {
				if c.Algorithm == algCMA && c.Function == s.Function && c.Dimension == s.Dimension {
					js.RatioMedian, js.RatioERT = finite(c.Median/s.Median), finite(c.ERT/s.ERT)
				}
			}
		}
		if err := enc.Encode(js); err != nil {
			return err
		}
	}
	return nil
}
