package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// The rules of the comparison (-summary).
const (
	// tieERT: an ERT within ±15 % of the reference's, ERT/ERT_ref in
	// [1 − tieERT, 1 + tieERT], is a tie; so is failing on every run when
	// the reference does too.
	tieERT = 0.15
	// withinDeltaF: a median f − f_opt at most withinDeltaF times the
	// reference's (or at most the target) counts as "within".
	withinDeltaF = 2.0
)

// fileRun is one line of a -json file of cmd/bench or of pycma_bbob.py.
// Lines of another kind than "run" (cmd/bench's summaries) are skipped.
type fileRun struct {
	Kind          string   `json:"kind"`
	Function      int      `json:"function"`
	Dimension     int      `json:"dimension"`
	Instance      int      `json:"instance"`
	Algorithm     string   `json:"algorithm"`
	EvalsToTarget *float64 `json:"evals_to_target"`
	Evaluations   *float64 `json:"evaluations"`
	FinalDeltaF   *float64 `json:"final_delta_f"`
	// Config is cmd/bench's algConfig; pycma_bbob.py has none.
	Config json.RawMessage `json:"config"`
	// PerRun is cmd/bench -per-run's record of each run (-solved-by).
	PerRun []restartRun `json:"per_run"`
}

// readRuns reads the runs of one file; name is for the errors.
func readRuns(r io.Reader, name string) ([]runResult, error) {
	var out []runResult
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var fr fileRun
		if err := json.Unmarshal([]byte(text), &fr); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if fr.Kind != "" && fr.Kind != "run" {
			continue
		}
		switch {
		case fr.Function < 1 || fr.Dimension < 1 || fr.Instance < 1 || fr.Algorithm == "":
			return nil, fmt.Errorf("%s:%d: want function, dimension, instance and algorithm", name, line)
		case fr.Evaluations == nil || fr.FinalDeltaF == nil:
			return nil, fmt.Errorf("%s:%d: want evaluations and final_delta_f", name, line)
		}
		r := runResult{
			job:         job{Algorithm: fr.Algorithm, Function: fr.Function, Dimension: fr.Dimension, Instance: fr.Instance},
			Label:       fr.Algorithm,
			configJSON:  string(fr.Config),
			Evaluations: int(*fr.Evaluations),
			FinalDeltaF: *fr.FinalDeltaF,
			Runs:        fr.PerRun,
		}
		if fr.EvalsToTarget != nil {
			if *fr.EvalsToTarget < 1 {
				return nil, fmt.Errorf("%s:%d: evals_to_target %v, want null or at least 1", name, line, *fr.EvalsToTarget)
			}
			r.EvalsToTarget = int(*fr.EvalsToTarget)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// readFiles reads the runs of all files. A run of the same algorithm,
// function, dimension and instance in two places is an error.
func readFiles(files []string) ([]runResult, error) {
	type key struct {
		alg         string
		fn, n, inst int
	}
	seen := map[key]string{}
	configs := map[string]string{} // label -> the config of its first run
	where := map[string]string{}   // label -> the file of that run
	var all []runResult
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		rs, err := readRuns(f, name)
		f.Close()
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			k := key{r.Algorithm, r.Function, r.Dimension, r.Instance}
			if prev, ok := seen[k]; ok {
				return nil, fmt.Errorf("%s f%d %d-D instance %d: in %s and in %s (compare such files in separate summaries; cmd/bench -tag labels runs apart)",
					r.Algorithm, r.Function, r.Dimension, r.Instance, prev, name)
			}
			seen[k] = name
			if prev, ok := configs[r.Algorithm]; !ok {
				configs[r.Algorithm], where[r.Algorithm] = r.configJSON, name
			} else if prev != r.configJSON {
				return nil, fmt.Errorf("%s: runs of two configurations, in %s and %s (budget, target, seed, ...: compare such files in separate summaries; cmd/bench -tag labels runs apart)",
					r.Algorithm, where[r.Algorithm], name)
			}
		}
		all = append(all, rs...)
	}
	return all, nil
}

// cellKey is a function in a dimension.
type cellKey struct{ n, fn int }

// comparison is the comparison of the algorithms on one function and
// dimension, over the instances that all of them ran.
type comparison struct {
	cellKey
	instances []int
	algs      map[string]cellStats
	note      string // which runs were left out, if any: "compared on ..."
}

// cellStats is one algorithm on one cell.
type cellStats struct {
	summary
	medianDeltaF float64
}

// verdict of an algorithm against the reference on one cell.
type verdict int

const (
	noVerdict verdict = iota // the reference did not run here
	better
	tie
	worse
	within // -metric delta-f: within withinDeltaF of the reference, or better
)

func (v verdict) String() string {
	return [...]string{"", "better", "tie", "worse", "within"}[v]
}

// compareERT judges ERT a against the reference's ERT ref.
func compareERT(a, ref float64) verdict {
	switch {
	case math.IsInf(a, 1) && math.IsInf(ref, 1):
		return tie
	case math.IsInf(a, 1):
		return worse
	case math.IsInf(ref, 1):
		return better
	}
	switch r := a / ref; {
	case r < 1-tieERT:
		return better
	case r > 1+tieERT:
		return worse
	}
	return tie
}

// compareDeltaF judges the median f − f_opt a against the reference's ref:
// within when a ≤ withinDeltaF·ref or a ≤ target.
func compareDeltaF(a, ref, target float64) verdict {
	if a <= withinDeltaF*ref || a <= target {
		return within
	}
	return worse
}

// labels returns the labels of runs, ref first, then in order of first
// appearance.
func labels(runs []runResult, ref string) []string {
	out := []string{ref}
	for _, r := range runs {
		if !slices.Contains(out, r.Algorithm) {
			out = append(out, r.Algorithm)
		}
	}
	return out
}

// compareRuns groups runs by dimension and function and summarizes each
// algorithm on the instances that every algorithm of the cell ran.
func compareRuns(runs []runResult) []comparison {
	cells := map[cellKey]map[string][]runResult{}
	for _, r := range runs {
		k := cellKey{r.Dimension, r.Function}
		if cells[k] == nil {
			cells[k] = map[string][]runResult{}
		}
		cells[k][r.Algorithm] = append(cells[k][r.Algorithm], r)
	}
	keys := make([]cellKey, 0, len(cells))
	for k := range cells {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b cellKey) int {
		if a.n != b.n {
			return a.n - b.n
		}
		return a.fn - b.fn
	})

	var out []comparison
	for _, k := range keys {
		byAlg := cells[k]
		algs := make([]string, 0, len(byAlg))
		for a := range byAlg {
			algs = append(algs, a)
		}
		slices.Sort(algs)
		var common []int
		for i, a := range algs {
			insts := instancesOf(byAlg[a])
			if i == 0 {
				common = insts
				continue
			}
			common = slices.DeleteFunc(common, func(v int) bool { return !slices.Contains(insts, v) })
		}
		c := comparison{cellKey: k, instances: common, algs: map[string]cellStats{}}
		var dropped []string
		for _, a := range algs {
			var kept []runResult
			var left []int
			for _, r := range byAlg[a] {
				if slices.Contains(common, r.Instance) {
					kept = append(kept, r)
				} else {
					left = append(left, r.Instance)
				}
			}
			if len(left) > 0 {
				slices.Sort(left)
				dropped = append(dropped, fmt.Sprintf("%s's %s", a, formatInstances(left)))
			}
			c.algs[a] = stats(kept)
		}
		if len(dropped) > 0 {
			c.note = fmt.Sprintf("compared on instances %s, the ones all algorithms ran; left out %s",
				formatInstances(common), strings.Join(dropped, ", "))
			if len(common) == 0 {
				c.note = "no instance that all algorithms ran; left out " + strings.Join(dropped, ", ")
			}
		}
		out = append(out, c)
	}
	return out
}

// budgetNotes compares, per dimension, the most evaluations of a failed
// run between the algorithms (a failed run that did not stop early used the
// budget): a note for each dimension where they differ by more than 1.5×.
func budgetNotes(runs []runResult) []string {
	most := map[int]map[string]int{}
	for _, r := range runs {
		if r.Success() {
			continue
		}
		if most[r.Dimension] == nil {
			most[r.Dimension] = map[string]int{}
		}
		most[r.Dimension][r.Algorithm] = max(most[r.Dimension][r.Algorithm], r.Evaluations)
	}
	var out []string
	for _, n := range slices.Sorted(maps.Keys(most)) {
		algs := slices.Sorted(maps.Keys(most[n]))
		lo, hi := math.MaxInt, 0
		var parts []string
		for _, a := range algs {
			lo, hi = min(lo, most[n][a]), max(hi, most[n][a])
			parts = append(parts, fmt.Sprintf("%d (%s)", most[n][a], a))
		}
		if float64(hi) > 1.5*float64(lo) {
			out = append(out, fmt.Sprintf("%d-D: different budgets? the failed runs used at most %s evaluations", n, strings.Join(parts, ", ")))
		}
	}
	return out
}

// instancesOf returns the sorted instances of runs.
func instancesOf(runs []runResult) []int {
	var out []int
	for _, r := range runs {
		out = append(out, r.Instance)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// stats summarizes the runs of one algorithm on one cell.
func stats(runs []runResult) cellStats {
	s := cellStats{summary: summarize(runs), medianDeltaF: math.NaN()}
	var d []float64
	for _, r := range runs {
		d = append(d, r.FinalDeltaF)
	}
	s.medianDeltaF = median(d)
	return s
}

// judge returns the verdict of alg against ref on c.
func (o options) judge(c comparison, alg string) verdict {
	a, okA := c.algs[alg]
	r, okR := c.algs[o.ref]
	if !okA || !okR || a.Runs == 0 || r.Runs == 0 {
		return noVerdict
	}
	if o.metric == metricDeltaF {
		return compareDeltaF(a.medianDeltaF, r.medianDeltaF, o.target)
	}
	return compareERT(a.ERT, r.ERT)
}

// formatERTRatio prints ERT a / ERT ref.
func formatERTRatio(a, ref float64) string {
	switch {
	case math.IsInf(a, 1) && math.IsInf(ref, 1):
		return "—"
	case math.IsInf(a, 1):
		return "∞"
	}
	return strconv.FormatFloat(a/ref, 'f', 2, 64)
}

// formatDeltaF prints a median f − f_opt.
func formatDeltaF(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return strconv.FormatFloat(v, 'e', 2, 64)
}

// writeComparison prints the comparison of runs against the reference
// o.ref: one row per dimension and function, then the totals per algorithm
// and dimension, then the notes on runs left out.
func writeComparison(w io.Writer, o options, runs []runResult) error {
	algs := labels(runs, o.ref)
	if len(algs) > 0 && !slices.ContainsFunc(runs, func(r runResult) bool { return r.Algorithm == o.ref }) {
		return fmt.Errorf("-ref %s: no such algorithm in the files (they hold %s)", o.ref, strings.Join(algs[1:], ", "))
	}
	table := writeText
	if o.md {
		table = writeMarkdown
	}
	rows := [][]string{comparisonHeader(o, algs)}
	tot := verdictTotals{}
	var dimsSeen []int
	var notes noteList
	for _, c := range compareRuns(runs) {
		if len(c.algs) < 2 {
			names := slices.Collect(maps.Keys(c.algs))
			notes.add(c.cellKey, "only "+strings.Join(names, ", ")+" ran")
			continue
		}
		if c.note != "" {
			notes.add(c.cellKey, c.note)
		}
		if !slices.Contains(dimsSeen, c.n) {
			dimsSeen = append(dimsSeen, c.n)
		}
		rows = append(rows, o.comparisonRow(c, algs, tot))
	}

	rule := fmt.Sprintf("ERT in evaluations (all evaluations of all runs, a success counted to the end of its generation, divided by the successes); a tie is an ERT within ±%g %% of %s's, or both failing every run; where the successes differ, p is Fisher's exact two-sided p-value of the two counts (the chance of a difference at least as unlikely at one success rate)", tieERT*100, o.ref)
	if o.metric == metricDeltaF {
		rule = fmt.Sprintf("Median f − f_opt after the budget; \"within\" is at most %g times %s's, or at most the target %g", withinDeltaF, o.ref, o.target)
	}
	fmt.Fprintf(w, "Reference %s. %s.\n\n", o.ref, rule)
	if err := table(w, rows); err != nil {
		return err
	}
	if trows := o.totalRows(algs, dimsSeen, tot); len(trows) > 1 {
		fmt.Fprintln(w)
		if err := table(w, trows); err != nil {
			return err
		}
	}
	lines := notes.lines()
	if o.metric == metricDeltaF {
		lines = append(lines, budgetNotes(runs)...)
	}
	if len(lines) > 0 {
		fmt.Fprintln(w)
		for _, n := range lines {
			prefix := "note: "
			if o.md {
				prefix = "- "
			}
			fmt.Fprintln(w, prefix+n)
		}
	}
	return nil
}

// verdictTotals counts the verdicts per algorithm and dimension.
type verdictTotals map[string]map[int]*[5]int

// comparisonHeader is the header row of the comparison of algs (the
// reference first).
func comparisonHeader(o options, algs []string) []string {
	header := []string{"function", "n"}
	for _, a := range algs {
		if o.metric == metricDeltaF {
			header = append(header, a+" median Δf", a+" runs")
		} else {
			header = append(header, a+" ERT", a+" succ")
		}
	}
	for _, a := range algs[1:] {
		header = append(header, a+" / "+o.ref)
	}
	return header
}

// comparisonRow is the row of one function and dimension, whose verdicts
// it adds to tot.
func (o options) comparisonRow(c comparison, algs []string, tot verdictTotals) []string {
	row := []string{functionName(c.fn), strconv.Itoa(c.n)}
	for _, a := range algs {
		s, ok := c.algs[a]
		switch {
		case !ok || s.Runs == 0:
			row = append(row, "", "")
		case o.metric == metricDeltaF:
			row = append(row, formatDeltaF(s.medianDeltaF), strconv.Itoa(s.Runs))
		default:
			row = append(row, formatCount(math.Round(s.ERT)), fmt.Sprintf("%d/%d", s.Successes, s.Runs))
		}
	}
	ref := c.algs[o.ref]
	for _, a := range algs[1:] {
		v := o.judge(c, a)
		if v == noVerdict {
			row = append(row, "")
			continue
		}
		if tot[a] == nil {
			tot[a] = map[int]*[5]int{}
		}
		if tot[a][c.n] == nil {
			tot[a][c.n] = &[5]int{}
		}
		tot[a][c.n][v]++
		s := c.algs[a]
		cell := formatERTRatio(s.ERT, ref.ERT) + " " + v.String()
		if o.metric == metricDeltaF {
			cell = formatRatio(s.medianDeltaF, ref.medianDeltaF) + " " + v.String()
		} else if s.Successes != ref.Successes {
			cell += ", p " + formatP(fisherExact(s.Successes, s.Runs, ref.Successes, ref.Runs))
		}
		row = append(row, cell)
	}
	return row
}

// totalRows is the table of the verdicts' totals per algorithm and
// dimension, its header first.
func (o options) totalRows(algs []string, dims []int, tot verdictTotals) [][]string {
	trows := [][]string{{"algorithm", "n", "better/tie/worse", "functions"}}
	if o.metric == metricDeltaF {
		trows = [][]string{{"algorithm", "n", "within " + strconv.FormatFloat(withinDeltaF, 'g', -1, 64) + "×", "functions"}}
	}
	for _, a := range algs[1:] {
		for _, n := range dims {
			t := tot[a][n]
			if t == nil {
				continue
			}
			sum := t[better] + t[tie] + t[worse] + t[within]
			cell := fmt.Sprintf("%d/%d/%d", t[better], t[tie], t[worse])
			if o.metric == metricDeltaF {
				cell = strconv.Itoa(t[within])
			}
			trows = append(trows, []string{a, strconv.Itoa(n), cell, strconv.Itoa(sum)})
		}
	}
	return trows
}

// noteList collects notes on cells, each note once with the cells it is
// about.
type noteList struct {
	text  []string // in order of first appearance
	cells map[string][]cellKey
}

func (l *noteList) add(k cellKey, text string) {
	if l.cells == nil {
		l.cells = map[string][]cellKey{}
	}
	if _, ok := l.cells[text]; !ok {
		l.text = append(l.text, text)
	}
	l.cells[text] = append(l.cells[text], k)
}

// lines returns the notes as "f1–f3, f8 10-D; f1 20-D: text".
func (l *noteList) lines() []string {
	var out []string
	for _, text := range l.text {
		var groups []string
		cells := l.cells[text]
		for i := 0; i < len(cells); {
			j := i
			var fns []int
			for ; j < len(cells) && cells[j].n == cells[i].n; j++ {
				fns = append(fns, cells[j].fn)
			}
			groups = append(groups, fmt.Sprintf("%s %d-D", formatFunctions(fns), cells[i].n))
			i = j
		}
		out = append(out, strings.Join(groups, "; ")+": "+text)
	}
	return out
}

// formatFunctions describes sorted function numbers, as "f1–f5, f8".
func formatFunctions(fns []int) string {
	parts := strings.Split(formatInstances(fns), ", ")
	for i, p := range parts {
		a, b, isRange := strings.Cut(p, "–")
		parts[i] = "f" + a
		if isRange {
			parts[i] += "–f" + b
		}
	}
	return strings.Join(parts, ", ")
}

// writeText writes rows (the first is the header) as plain columns, two
// blanks apart; numeric-looking columns after the first are right-aligned.
func writeText(w io.Writer, rows [][]string) error {
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		var line []string
		for i, c := range r {
			fill := strings.Repeat(" ", width[i]-len([]rune(c)))
			if i == 0 {
				line = append(line, c+fill)
			} else {
				line = append(line, fill+c)
			}
		}
		b.WriteString(strings.TrimRight(strings.Join(line, "  "), " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// summarizeFiles is -summary: read the files and compare their runs.
func summarizeFiles(w io.Writer, o options) error {
	runs, err := readFiles(o.files)
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		return fmt.Errorf("no runs in %s", strings.Join(o.files, ", "))
	}
	if o.solvedBy {
		return writeSolvedBy(w, runs, smallSplit{o.splitSigma0, o.splitLambda})
	}
	return writeComparison(w, o, runs)
}
