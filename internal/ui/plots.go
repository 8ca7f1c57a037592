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
	colorSigma     = "#2ca02c"
	colorAxisRatio = "#9467bd"
	colorC1        = "#1f77b4"
	colorCMu       = "#d62728"
	colorCc        = "#2ca02c"
	colorDefault   = "#666666"
)

// plotSet is the three plots of a session page.
type plotSet struct {
	Fitness, Sigma, Rates template.HTML
	// FitnessNote explains the fitness axis when it is shifted (some f ≤ 0).
	FitnessNote string
	Restarts    int // restart markers in each plot
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

// buildPlots renders the three plots of a session: fitness and σ with the
// axis ratio over evaluations, the learning rates over generations (the
// paper's Figures 1–2), each with its IPOP restarts marked.
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
			legend = append(legend, legendEntry{Name: "restart", Label: "IPOP restart", Marker: true})
		}
		return legend
	}

	tf, floor, fLabel, note := fitnessScale(pts)
	fit := chart{
		ID: "fitness", Title: "Fitness", XLabel: "evaluations", YLabel: fLabel, XMax: maxEval, Columns: cols,
		Lines: []line{
			{Name: "median", Label: "median of generation", Color: colorMedian, Width: 1.2, Xs: evals, Ys: series(func(p *Point) float64 { return p.Median }), Log: tf, Floor: floor},
			{Name: "best", Label: "best of generation", Color: colorBest, Width: 1.2, Xs: evals, Ys: series(func(p *Point) float64 { return p.Best }), Log: tf, Floor: floor},
			{Name: "best-so-far", Label: "best so far", Color: colorBestSoFar, Width: 2, Xs: evals, Ys: series(func(p *Point) float64 { return p.BestSoFar }), Log: tf, Floor: floor},
		},
		Markers: evalMarks,
	}
	fit.Legend = restartEntry([]legendEntry{
		{Name: "best-so-far", Label: "best so far", Color: colorBestSoFar},
		{Name: "best", Label: "best of generation", Color: colorBest},
		{Name: "median", Label: "median of generation", Color: colorMedian},
	})

	sig := chart{
		ID: "sigma", Title: "Step size and axis ratio", XLabel: "evaluations", YLabel: "σ and axis ratio (log scale)", XMax: maxEval, Columns: cols,
		Lines: []line{
			{Name: "sigma", Label: "σ", Color: colorSigma, Xs: evals, Ys: series(func(p *Point) float64 { return p.Sigma }), Log: math.Log10},
			{Name: "axis-ratio", Label: "axis ratio of C", Color: colorAxisRatio, Xs: evals, Ys: series(func(p *Point) float64 { return p.AxisRatio }), Log: math.Log10},
		},
		Markers: evalMarks,
	}
	sig.Legend = restartEntry([]legendEntry{
		{Name: "sigma", Label: "σ", Color: colorSigma},
		{Name: "axis-ratio", Label: "axis ratio of C (√ of max/min eigenvalue)", Color: colorAxisRatio},
	})

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
		Fitness: fit.renderHTML(), Sigma: sig.renderHTML(), Rates: rates.renderHTML(),
		FitnessNote: note, Restarts: len(evalMarks),
	}
}
