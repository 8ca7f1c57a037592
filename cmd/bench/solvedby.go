package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// -summary -solved-by: which run of a restarting ES reached the target,
// from the per-run records of cmd/bench -json -per-run (docs/algorithm.md
// §5, "Which runs solve"). Per function, dimension and algorithm: the
// successes by the regime and λ of the run that reached the target, then
// every kind of run with its count and mean evaluations (a kind that
// costs more leaves the later runs less of the budget). With
// -split-sigma0 X the small runs are two kinds, σ0 < X and σ0 ≥ X, and with
// -split-lambda L two kinds λ ≤ L and λ > L (four with both).

// runKind is a regime with its λ; BIPOP's small runs, whose λ is drawn,
// are one kind, or split by their σ0 and λ.
type runKind struct {
	regime string
	lambda int    // 0 for the small runs
	side   string // the small runs' side of the splits, "" without them
	order  int    // of the sides: below σ0's split first, then λ's
}

// smallSplit is where -split-sigma0 and -split-lambda split the small
// runs (0: no split).
type smallSplit struct {
	sigma0 float64
	lambda int
}

// kindOf is r's kind under the small runs' split sp.
func kindOf(r restartRun, sp smallSplit) runKind {
	if r.Regime != "small" {
		return runKind{regime: r.Regime, lambda: r.Lambda}
	}
	k := runKind{regime: r.Regime}
	var sides []string
	if sp.sigma0 > 0 {
		x := strconv.FormatFloat(sp.sigma0, 'g', -1, 64)
		if r.Sigma0 < sp.sigma0 {
			sides = append(sides, "σ0 < "+x)
		} else {
			sides = append(sides, "σ0 ≥ "+x)
			k.order += 2
		}
	}
	if sp.lambda > 0 {
		l := strconv.Itoa(sp.lambda)
		if r.Lambda <= sp.lambda {
			sides = append(sides, "λ ≤ "+l)
		} else {
			sides = append(sides, "λ > "+l)
			k.order++
		}
	}
	k.side = strings.Join(sides, ", ")
	return k
}

func (k runKind) String() string {
	switch {
	case k.side != "":
		return k.regime + " " + k.side
	case k.lambda == 0:
		return k.regime
	}
	return k.regime + " λ " + strconv.Itoa(k.lambda)
}

// compareKinds orders the first run, then the large runs by λ, then the
// small ones.
func compareKinds(a, b runKind) int {
	rank := func(k runKind) int {
		switch k.regime {
		case "default":
			return 0
		case "large":
			return 1
		}
		return 2
	}
	return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a.lambda, b.lambda), strings.Compare(a.regime, b.regime), cmp.Compare(a.order, b.order))
}

// kindStats is what -solved-by reports of one kind of run in a cell.
type kindStats struct {
	solved, runs, evaluations int
	lambdaMin, lambdaMax      int // of all its runs
	solvedMin, solvedMax      int // of those that reached the target
}

// writeSolvedBy prints, per cell and algorithm, which runs reached the
// target, the small runs split by sp. Runs without per-run records
// (pycma_bbob.py's, or cmd/bench's without -per-run) are an error: they
// cannot say.
func writeSolvedBy(w io.Writer, runs []runResult, sp smallSplit) error {
	type cellAlg struct {
		cellKey
		alg string
	}
	stats := map[cellAlg]map[runKind]*kindStats{}
	sessions := map[cellAlg][2]int{} // solved, runs
	for _, r := range runs {
		if len(r.Runs) == 0 {
			return fmt.Errorf("%s f%d %d-D instance %d: no per-run records (make the runs with cmd/bench -json -per-run)", r.Algorithm, r.Function, r.Dimension, r.Instance)
		}
		k := cellAlg{cellKey{r.Dimension, r.Function}, r.Algorithm}
		if stats[k] == nil {
			stats[k] = map[runKind]*kindStats{}
		}
		s := sessions[k]
		s[1]++
		if r.Success() {
			s[0]++
		}
		sessions[k] = s
		for _, x := range r.Runs {
			kd := kindOf(x, sp)
			ks := stats[k][kd]
			if ks == nil {
				ks = &kindStats{lambdaMin: x.Lambda, lambdaMax: x.Lambda, solvedMin: math.MaxInt}
				stats[k][kd] = ks
			}
			ks.runs++
			ks.evaluations += x.Evaluations
			ks.lambdaMin, ks.lambdaMax = min(ks.lambdaMin, x.Lambda), max(ks.lambdaMax, x.Lambda)
			if x.Target {
				ks.solved++
				ks.solvedMin, ks.solvedMax = min(ks.solvedMin, x.Lambda), max(ks.solvedMax, x.Lambda)
			}
		}
	}
	keys := make([]cellAlg, 0, len(stats))
	for k := range stats {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b cellAlg) int {
		return cmp.Or(cmp.Compare(a.n, b.n), cmp.Compare(a.fn, b.fn), strings.Compare(a.alg, b.alg))
	})
	var b strings.Builder
	for _, k := range keys {
		kinds := make([]runKind, 0, len(stats[k]))
		for kd := range stats[k] {
			kinds = append(kinds, kd)
		}
		slices.SortFunc(kinds, compareKinds)
		var solved, all []string
		for _, kd := range kinds {
			ks := stats[k][kd]
			name := kd.String()
			if kd.lambda == 0 {
				name += fmt.Sprintf(" (λ %d–%d)", ks.lambdaMin, ks.lambdaMax)
			}
			if ks.solved > 0 && kd.lambda == 0 {
				solved = append(solved, fmt.Sprintf("%s (λ %d–%d): %d", kd, ks.solvedMin, ks.solvedMax, ks.solved))
			} else if ks.solved > 0 {
				solved = append(solved, fmt.Sprintf("%s: %d", name, ks.solved))
			}
			all = append(all, fmt.Sprintf("%s: %d, %.0f", name, ks.runs, float64(ks.evaluations)/float64(ks.runs)))
		}
		s := sessions[k]
		fmt.Fprintf(&b, "%s %d-D %s: %d of %d reached the target\n", functionName(k.fn), k.n, k.alg, s[0], s[1])
		if len(solved) > 0 {
			fmt.Fprintf(&b, "  by the run: %s\n", strings.Join(solved, ", "))
		}
		fmt.Fprintf(&b, "  runs, mean evaluations: %s\n", strings.Join(all, "; "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
