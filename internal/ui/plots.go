package ui

import (
	"html/template"
	"math"
	"strconv"
)

// Colors of the series.
const (
	colorBestSoFar = "#111111"
	colorBest      = "#1f77b4"
	colorMedian    = "#ff7f0e"
	colorStep      = "#2ca02c"
	colorAxisRatio = "#d62728"
	colorC1        = "#1f77b4"
	colorCMu       = "#d62728"
	colorCc        = "#2ca02c"
	colorDefault   = "#666666"
)

// coordinateColors are the colors of the coordinates' lines, by index
// (matplotlib's, as pycma's plots have them), repeated past the tenth.
var coordinateColors = [...]string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

// plotSet is the plots of a session page: pycma's four panels (fitness
// with the overall step and the axis ratio, the principal axis lengths,
// the standard deviations and the mean) and the learning rates.
type plotSet struct {
	Fitness, Axes, Stds, Mean, Rates template.HTML
	// Constraints, of a constrained session only (else empty): the
	// violation beside the best feasible f (constraintsPanel).
	Constraints template.HTML
	// FitnessNote explains the fitness axis when it is shifted (some f ≤ 0).
	FitnessNote string
	// DistributionNote says where the history lacks what the panels of the
	// distribution show (a history written before it was kept).
	DistributionNote string
	// AxesNote explains jumps of the axis lengths where the scale moved
	// between σ and C.
	AxesNote string
	Restarts int // restart markers in each plot
}

// coordinateColumns is the number of downsampling columns of each line of
// a panel with n lines: fewer with more lines, so that the panel stays
// about as light as 4·cols points whatever n (at least 30 columns).
func coordinateColumns(cols, n int) int {
	if cols <= 0 {
		cols = DefaultColumns
	}
	return min(cols, max(30, 4*cols/max(n, 1)))
}

// fitnessScale chooses the y transform of the fitness plot. When every
// finite f is positive, it is log10 f. Otherwise log10(f − f_min + δ), with
// f_min the least f told and δ a tenth of the smallest positive f − f_min
// (so that the curve of the best so far, which ends at f_min, ends one
// decade below its last step rather than at −∞); note says so.
// Values at or below floor cannot be drawn.
func fitnessScale(pts []Point) (tf func(float64) float64, floor float64, label, note string) {
	fmin := math.Inf(1)
	each := func(fn func(float64)) {
		for i := range pts {
			for _, v := range [3]float64{pts[i].Best, pts[i].Median, pts[i].BestSoFar} {
				if isFinite(v) {
					fn(v)
				}
			}
		}
	}
	each(func(v float64) { fmin = math.Min(fmin, v) })
	if math.IsInf(fmin, 1) || fmin > 0 {
		return math.Log10, 0, "f (log scale)", ""
	}
	gap := math.Inf(1)
	each(func(v float64) {
		if d := v - fmin; d > 0 && d < gap {
			gap = d
		}
	})
	delta := gap / 10
	if math.IsInf(gap, 1) {
		delta = 1e-12 * math.Max(1, math.Abs(fmin))
	}
	tf = func(v float64) float64 { return math.Log10(v - fmin + delta) }
	note = "Some f ≤ 0, so the fitness plot shows f − f_min + δ on a log scale, with f_min = " + fmtFloat(fmin) +
		" the least f told and δ = " + fmtFloat(delta) + " a tenth of the smallest positive f − f_min: the best so far ends at δ."
	return tf, fmin - delta, "f − f_min + δ (log scale)", note
}

// buildPlots renders the plots of a session: pycma's four panels over
// evaluations (f with the overall step σ·√λ_max(C) and the axis ratio; the
// principal axis lengths √λ_i(C); the standard deviations σ·√C_ii; the
// mean) and the learning rates over generations (the paper's Figures 1–2),
// each with its restarts marked. σ alone is not drawn: where a
// safeguard moves scale between σ and C it jumps by decades while the
// distribution does not change.
func buildPlots(d Detail, pts []Point, cols int) plotSet {
	n := len(pts)
	evals := make([]float64, n)
	gens := make([]float64, n)
	var maxEval, maxGen float64
	for i, p := range pts {
		evals[i], gens[i] = float64(p.Evaluations), float64(p.Generation)
		maxEval, maxGen = math.Max(maxEval, evals[i]), math.Max(maxGen, gens[i])
	}
	// Restarts: where the run changes.
	var evalMarks, genMarks []marker
	for i := 1; i < n; i++ {
		if pts[i].Run != pts[i-1].Run {
			label := "restart " + strconv.Itoa(pts[i].Run) + ", λ = " + strconv.Itoa(pts[i].Lambda)
			evalMarks = append(evalMarks, marker{X: evals[i-1], Run: pts[i].Run, Label: label})
			genMarks = append(genMarks, marker{X: (gens[i-1] + gens[i]) / 2, Run: pts[i].Run, Label: label})
		}
	}
	series := func(get func(*Point) float64) []float64 {
		out := make([]float64, n)
		for i := range pts {
			out[i] = get(&pts[i])
		}
		return out
	}
	restartEntry := func(legend []legendEntry) []legendEntry {
		if len(evalMarks) > 0 {
			legend = append(legend, legendEntry{Name: "restart", Label: "restart", Marker: true})
		}
		return legend
	}

	// (a) f, the overall step and the axis ratio on one log axis, as pycma
	// draws them.
	tf, floor, fLabel, note := fitnessScale(pts)
	fit := chart{
		ID: "fitness", Title: "Fitness, overall step σ·√λ_max(C) and axis ratio", XLabel: "evaluations",
		YLabel: fLabel + ", σ·√λ_max(C), axis ratio", XMax: maxEval, Columns: cols,
		Lines: []line{
			{Name: "axis-ratio", Label: "axis ratio", Color: colorAxisRatio, Width: 1.2, Xs: evals, Ys: series(func(p *Point) float64 { return p.AxisRatio }), Log: math.Log10},
			{Name: "overall-step", Label: "σ·√λ_max(C)", Color: colorStep, Width: 1.2, Xs: evals, Ys: series(func(p *Point) float64 { return p.OverallStep }), Log: math.Log10},
			{Name: "median", Label: "median of generation", Color: colorMedian, Width: 1.2, Xs: evals, Ys: series(func(p *Point) float64 { return p.Median }), Log: tf, Floor: floor},
			{Name: "best", Label: "best of generation", Color: colorBest, Width: 1.2, Xs: evals, Ys: series(func(p *Point) float64 { return p.Best }), Log: tf, Floor: floor},
			{Name: "best-so-far", Label: "best so far", Color: colorBestSoFar, Width: 2, Xs: evals, Ys: series(func(p *Point) float64 { return p.BestSoFar }), Log: tf, Floor: floor},
		},
		Markers: evalMarks,
		// The room of the end labels of the panels below, so that their x
		// axes line up.
		EndLabels: true,
	}
	fit.Legend = restartEntry([]legendEntry{
		{Name: "best-so-far", Label: "best so far", Color: colorBestSoFar},
		{Name: "best", Label: "best of generation", Color: colorBest},
		{Name: "median", Label: "median", Color: colorMedian},
		{Name: "overall-step", Label: "σ·√λ_max(C)", Color: colorStep},
		{Name: "axis-ratio", Label: "axis ratio √(λ_max/λ_min)", Color: colorAxisRatio},
	})

	// (b)–(d): one line per coordinate, from the points that keep them.
	axes, stds, mean, distNote := coordinatePanels(d, pts, evals, maxEval, cols, evalMarks, restartEntry)

	rates := chart{
		ID: "rates", Title: "Learning rates (dashed: defaults for the run's λ)", XLabel: "generation", YLabel: "rate (log scale)",
		XMax: maxGen, Columns: cols,
		Lines: []line{
			{Name: "c1", Label: "c1", Color: colorC1, Xs: gens, Ys: series(func(p *Point) float64 { return p.C1 }), Log: math.Log10},
			{Name: "cmu", Label: "cμ", Color: colorCMu, Xs: gens, Ys: series(func(p *Point) float64 { return p.CMu }), Log: math.Log10},
			{Name: "cc", Label: "cc", Color: colorCc, Xs: gens, Ys: series(func(p *Point) float64 { return p.Cc }), Log: math.Log10},
		},
		Markers: genMarks,
	}
	// The defaults: one horizontal segment per run, between its restarts.
	type span struct {
		run    int
		x0, x1 float64
	}
	var spans []span
	if n == 0 {
		spans = []span{{run: 0, x0: 0, x1: 1}}
		if d.Restarts > 0 {
			spans[0].run = d.Restarts
		}
	} else {
		start := gens[0]
		for i := 1; i <= n; i++ {
			if i == n || pts[i].Run != pts[i-1].Run {
				end := gens[i-1]
				if i < n {
					end = (gens[i-1] + gens[i]) / 2
				}
				spans = append(spans, span{run: pts[i-1].Run, x0: start, x1: end})
				start = end
			}
		}
	}
	get := []func(Hyper) float64{
		func(h Hyper) float64 { return h.C1 },
		func(h Hyper) float64 { return h.CMu },
		func(h Hyper) float64 { return h.Cc },
	}
	for k, name := range []string{"c1", "cmu", "cc"} {
		s := steps{Name: name + "-default", Color: rates.Lines[k].Color}
		for _, sp := range spans {
			h := d.Defaults
			if sp.run >= 0 && sp.run < len(d.RunDefaults) {
				h = d.RunDefaults[sp.run]
			}
			if v := get[k](h); v > 0 {
				s.Segs = append(s.Segs, segment{X0: sp.x0, X1: sp.x1, Y: math.Log10(v)})
			}
		}
		rates.Steps = append(rates.Steps, s)
	}
	rates.Legend = restartEntry([]legendEntry{
		{Name: "c1", Label: "c1", Color: colorC1},
		{Name: "cmu", Label: "cμ", Color: colorCMu},
		{Name: "cc", Label: "cc", Color: colorCc},
		{Name: "defaults", Label: "defaults", Color: colorDefault, Dashed: true},
	})

	return plotSet{
		Fitness: fit.renderHTML(), Axes: axes.renderHTML(), Stds: stds.renderHTML(), Mean: mean.renderHTML(),
		Rates: rates.renderHTML(), FitnessNote: note, DistributionNote: distNote, AxesNote: scaleJumps(pts),
		Constraints: constraintsPanel(pts, evals, maxEval, cols, tf, floor, fLabel, evalMarks, restartEntry),
		Restarts:    len(evalMarks),
	}
}

// scaleJumps returns a note on the generations where the longest axis of
// C changes by more than 100 times in one generation of a run while the
// overall step σ·√λ_max(C) changes by less than 10 times: there the scale
// moved between σ and C (the safeguard that bounds σ/√λ_max(C)), and the
// axis lengths, which exclude σ, jump while the distribution does not.
func scaleJumps(pts []Point) string {
	first, more := -1, 0
	for k := 1; k < len(pts); k++ {
		a, b := &pts[k-1], &pts[k]
		if a.Run != b.Run || len(a.AxisLengths) == 0 || len(b.AxisLengths) == 0 {
			continue
		}
		dAxis := math.Abs(math.Log10(b.AxisLengths[len(b.AxisLengths)-1] / a.AxisLengths[len(a.AxisLengths)-1]))
		dStep := math.Abs(math.Log10(b.OverallStep / a.OverallStep))
		if dAxis > 2 && dStep < 1 {
			if first < 0 {
				first = b.Generation
			} else {
				more++
			}
		}
	}
	if first < 0 {
		return ""
	}
	at := "at generation " + strconv.Itoa(first)
	if more > 0 {
		at += " and " + strconv.Itoa(more) + " more"
	}
	return "The axis lengths jump " + at + ": there the scale moved between σ and C (a safeguard bounds σ/√λ_max(C)), " +
		"so √λ_i(C) jumps while σ·√λ_i(C), the distribution, does not (see σ·√λ_max(C) in the first panel)."
}

// coordinatePanels returns pycma's panels (b)–(d): the principal axis
// lengths √λ_i(C), ascending; the standard deviations σ·√C_ii, labelled by
// coordinate at their right end; the mean's coordinates on a linear axis,
// labelled alike. Their lines are drawn through the points whose history
// entry keeps the coordinates. note says where the history lacks them.
func coordinatePanels(d Detail, pts []Point, evals []float64, maxEval float64, cols int, marks []marker,
	restartEntry func([]legendEntry) []legendEntry) (axes, stds, mean chart, note string) {
	firstStep, firstCoord, n := -1, -1, 0
	for i := range pts {
		if firstStep < 0 && isFinite(pts[i].OverallStep) {
			firstStep = i
		}
		if pts[i].Mean != nil {
			firstCoord, n = i, len(pts[i].Mean)
			break
		}
	}
	var xs []float64
	var ds, ss, ms [][]float64 // per coordinate
	ds, ss, ms = make([][]float64, n), make([][]float64, n), make([][]float64, n)
	if firstCoord >= 0 {
		for k := firstCoord; k < len(pts); k++ {
			p := &pts[k]
			if len(p.Mean) != n || len(p.AxisLengths) != n || len(p.Stds) != n {
				continue
			}
			xs = append(xs, evals[k])
			for i := range n {
				ds[i], ss[i], ms[i] = append(ds[i], p.AxisLengths[i]), append(ss[i], p.Stds[i]), append(ms[i], p.Mean[i])
			}
		}
	}
	empty := ""
	switch {
	case len(pts) == 0:
	case d.CoordinateLimit > 0 && d.Dimension > d.CoordinateLimit:
		empty = "the history keeps these only for sessions of at most " + strconv.Itoa(d.CoordinateLimit) + " coordinates"
	case firstStep < 0:
		empty = "not in the history written before the server's upgrade: they start with the next generation told"
	case firstCoord < 0:
		empty = "no generation told since the server's upgrade keeps these yet"
	}
	switch {
	case len(pts) > 0 && firstStep < 0:
		note = "This session's history was written before the server kept σ·√λ_max(C), the principal axes, the standard deviations and the mean: " +
			"they start with the next generation told. The fitness and the axis ratio cover the whole run."
	case firstStep > 0:
		note = "σ·√λ_max(C) and the panels of the distribution start at generation " + strconv.Itoa(pts[firstStep].Generation) +
			", the first told after the server's upgrade: the history before it does not hold them."
	}
	cc := coordinateColumns(cols, n)
	mk := func(id, title, ylabel string) chart {
		return chart{ID: id, Title: title, XLabel: "evaluations", YLabel: ylabel, XMax: maxEval, Columns: cc,
			Markers: marks, Legend: restartEntry(nil), Empty: empty}
	}
	axes = mk("axes", "Principal axis lengths √λ_i(C), ascending (without σ)", "√λ_i(C) (log scale)")
	stds = mk("stds", "Standard deviations σ·√C_ii of the coordinates", "σ·√C_ii (log scale)")
	mean = mk("mean", "Mean m (object variables)", "m_i")
	axes.EndLabels, stds.EndLabels, mean.EndLabels, mean.Linear = true, true, true, true // the axes are not labelled, as in pycma
	for i := range n {
		color, idx := coordinateColors[i%len(coordinateColors)], strconv.Itoa(i)
		axes.Lines = append(axes.Lines, line{Name: "axis-" + idx, Color: color, Width: 1.2, Xs: xs, Ys: ds[i], Log: math.Log10,
			Title: "√λ_i(C), i = " + idx + " (ascending)"})
		stds.Lines = append(stds.Lines, line{Name: "std-" + idx, Color: color, Width: 1.2, Xs: xs, Ys: ss[i], Log: math.Log10,
			EndLabel: idx, Title: "coordinate " + idx + " (σ·√C_ii)"})
		mean.Lines = append(mean.Lines, line{Name: "mean-" + idx, Color: color, Width: 1.2, Xs: xs, Ys: ms[i],
			Log: func(v float64) float64 { return v }, Floor: math.Inf(-1), EndLabel: idx, Title: "coordinate " + idx + " (m_i)"})
	}
	return axes, stds, mean, note
}
