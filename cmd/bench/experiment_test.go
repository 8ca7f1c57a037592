package main

import (
	"io"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/selfcma/selfcma/internal/bbob"
	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/defaults"
	"github.com/selfcma/selfcma/internal/selfcma"
)

func TestInstance(t *testing.T) {
	// docs/algorithm.md §4: 15 runs on instances 1–5 and 31–40.
	want := []int{1, 2, 3, 4, 5, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42}
	for r := 1; r <= len(want); r++ {
		if got := instance(r); got != want[r-1] {
			t.Errorf("instance(%d) = %d, want %d", r, got, want[r-1])
		}
	}
	for _, tc := range []struct {
		runs int
		want string
	}{{1, "1"}, {3, "1–3"}, {5, "1–5"}, {6, "1–5, 31"}, {15, "1–5, 31–40"}, {17, "1–5, 31–42"}} {
		o, err := parseOptions([]string{"-runs", strconv.Itoa(tc.runs)}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := formatInstances(o.instances); got != tc.want {
			t.Errorf("-runs %d: instances %q, want %q", tc.runs, got, tc.want)
		}
	}
	for r := 1; r <= 50; r++ {
		if k := runKey(instance(r)); k != uint64(r) {
			t.Errorf("runKey(instance(%d)) = %d, want %d: -instances would not repeat the runs of -runs", r, k, r)
		}
	}
	seen := map[uint64]int{}
	for inst := 1; inst <= 100; inst++ {
		k := runKey(inst)
		if prev, ok := seen[k]; ok {
			t.Errorf("instances %d and %d share the key %d", prev, inst, k)
		}
		seen[k] = inst
	}
}

func TestInstancesAsRuns(t *testing.T) {
	// -instances 1-5,31-40 makes the runs of -runs 15: same instances, x0
	// and seeds, in the same order.
	byRuns, err := parseOptions([]string{"-runs", "15", "-functions", "8", "-dims", "5"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	byInst, err := parseOptions([]string{"-instances", "31-40, 1-5", "-functions", "8", "-dims", "5"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a, b := byRuns.jobs(), byInst.jobs()
	if !slices.Equal(a, b) {
		t.Fatalf("jobs differ:\n%v\n%v", a, b)
	}
	for _, j := range a {
		ca := byRuns.esConfig(byRuns.config(j.Algorithm), j, 0)
		cb := byInst.esConfig(byInst.config(j.Algorithm), j, 0)
		if !slices.Equal(ca.X0, cb.X0) || ca.Seed != cb.Seed {
			t.Errorf("%+v: x0 or seed differ", j)
		}
	}
	// A run's x0 and seed depend on its instance, not its position.
	some, err := parseOptions([]string{"-instances", "3,32", "-functions", "8", "-dims", "5"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range some.jobs() {
		want := a[slices.IndexFunc(a, func(k job) bool { return k.Instance == j.Instance && k.Algorithm == j.Algorithm })]
		got := some.esConfig(some.config(j.Algorithm), j, 0)
		ref := byRuns.esConfig(byRuns.config(want.Algorithm), want, 0)
		if !slices.Equal(got.X0, ref.X0) || got.Seed != ref.Seed {
			t.Errorf("instance %d: x0 or seed differ from -runs 15's", j.Instance)
		}
	}
}

func TestInitialMean(t *testing.T) {
	a := initialMean(7, 3, 20)
	if !slices.Equal(a, initialMean(7, 3, 20)) {
		t.Error("x0 differs between two calls with the same seed and run")
	}
	if slices.Equal(a, initialMean(7, 4, 20)) || slices.Equal(a, initialMean(8, 3, 20)) {
		t.Error("x0 does not depend on the seed and the run")
	}
	for i, v := range a {
		if v < -x0Bound || v > x0Bound {
			t.Errorf("x0[%d] = %v, outside [−%v, %v]", i, v, x0Bound, x0Bound)
		}
	}
}

func TestESSeed(t *testing.T) {
	seen := map[uint64]string{}
	for _, tc := range []struct {
		name               string
		seed               uint64
		function, dim, run int
	}{{"base", 1, 8, 10, 1}, {"seed", 2, 8, 10, 1}, {"function", 1, 9, 10, 1}, {"dim", 1, 8, 20, 1}, {"run", 1, 8, 10, 2}} {
		s := esSeed(tc.seed, tc.function, tc.dim, uint64(tc.run))
		if prev, ok := seen[s]; ok {
			t.Errorf("changing the %s gives the seed of %s", tc.name, prev)
		}
		seen[s] = tc.name
	}
}

func TestParseOptions(t *testing.T) {
	o, err := parseOptions([]string{"-algorithms", "self-cma-es, CMA-ES", "-functions", "13,1,8,1", "-dims", "20,10", "-restarts", "ipop"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.algorithms, []string{algCMA, algSelf}) || !slices.Equal(o.functions, []int{1, 8, 13}) ||
		!slices.Equal(o.dims, []int{10, 20}) || o.restarts != defaults.RestartsIPOP || o.maxEvaluations(20) != 200000 || o.noLocalStops ||
		formatInstances(o.instances) != "1–5, 31–40" {
		t.Errorf("parsed %+v", o)
	}
	if d := o.termination(20, 1); d.TolX != 0 || d.NoEffectAxis || d.MaxEvaluations != 200000 || !d.HasTarget {
		t.Errorf("default termination %+v: want the local criteria at their defaults", d)
	}
	o, err = parseOptions([]string{"-local-stops=false"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	off := o.termination(20, 1)
	if !o.noLocalStops || off.TolFun >= 0 || off.TolX >= 0 || off.ConditionCov >= 0 || off.TolUpSigma >= 0 ||
		!off.NoEffectAxis || !off.NoEffectCoord || !off.NoStagnation || !off.NoEqualFunVal || off.MaxEvaluations != 200000 {
		t.Errorf("-local-stops=false: termination %+v", off)
	}
	for _, args := range [][]string{
		{"-algorithms", "bipop"}, {"-functions", "25"}, {"-functions", "x"}, {"-functions", "3-1"}, {"-functions", "0-2"},
		{"-functions", "1-"}, {"-dims", "1"}, {"-lambda", "1"}, {"-runs", "0"}, {"-budget", "0"}, {"-target", "-1"},
		{"-restarts", "lrpop"}, {"-active", "yes"}, {"-restart-point", "mean"}, {"-max-restarts", "-1"},
		{"-incpopsize", "0.5"}, {"-incpopsize", "-2"}, {"-init", "random"}, {"-numerics", "9"}, {"-numerics", "5"}, {"-numerics", "5", "-algorithms", "cma-es"}, {"extra"},
		{"-instances", "0"}, {"-instances", "1-3", "-runs", "3"}, {"-instances", "1,300000"}, {"-instances", ""},
		{"-mean-rate", "all"}, {"-mean-rate-alpha", "-1"}, {"-mean-rate-eta-min", "2"}, {"-tag", "a b"}, {"-summary"}, {"-summary", "-metric", "median", "x.jsonl"}, {"-summary", "-target", "-1", "x.jsonl"},
	} {
		if _, err := parseOptions(args, io.Discard); err == nil {
			t.Errorf("parseOptions(%q) accepted", args)
		}
	}
}

func TestParseInts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"3", []int{3}}, {"1-5,31-35", []int{1, 2, 3, 4, 5, 31, 32, 33, 34, 35}}, {"7, 2-3 ,2", []int{2, 3, 7}},
		{"4-4", []int{4}}, {"31-33,1", []int{1, 31, 32, 33}},
	} {
		got, err := parseInts("-instances", tc.in, 1, 100)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("parseInts(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "a", "1-", "-3", "5-2", "1-2-3", "99-101", "0", "1,,2"} {
		if got, err := parseInts("-instances", in, 1, 100); err == nil {
			t.Errorf("parseInts(%q) = %v, want an error", in, got)
		}
	}
}

func TestSummaryArgs(t *testing.T) {
	// Flags may come before and after the files.
	o, err := parseOptions([]string{"-summary", "a.jsonl", "b.jsonl", "-ref", "cma-es", "-md", "c.jsonl"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !o.summary || !slices.Equal(o.files, []string{"a.jsonl", "b.jsonl", "c.jsonl"}) || o.ref != "cma-es" || !o.md || o.metric != metricERT {
		t.Errorf("parsed %+v", o)
	}
}

func TestConfig(t *testing.T) {
	d := defaults.For(algCMA)
	restarts := map[string]string{defaults.RestartsNone: "no-restarts", defaults.RestartsIPOP: "ipop", defaults.RestartsBIPOP: "bipop"}
	other := defaults.RestartsIPOP
	if d.Restarts == other {
		other = defaults.RestartsBIPOP
	}
	maxR := d.MaxRestarts
	if maxR == 0 {
		maxR = cmaes.DefaultMaxRestarts
	}
	inc := d.IncPopSize
	if inc == 0 {
		inc = cmaes.DefaultIncPopSize
	}
	tests := []struct {
		name  string
		args  []string
		alg   string
		want  algConfig
		label string
	}{
		{"defaults", nil, algCMA,
			algConfig{Active: d.Active, Restarts: d.Restarts, MaxRestarts: maxR, IncPopSize: inc, RestartPoint: defaults.PointUniform},
			algCMA},
		{"default named", []string{"-restarts", "default", "-active", "default", "-restart-point", "default"}, algCMA,
			algConfig{Active: d.Active, Restarts: d.Restarts, MaxRestarts: maxR, IncPopSize: inc, RestartPoint: defaults.PointUniform},
			algCMA},
		{"defaults named by value", []string{"-restarts", d.Restarts, "-active", strconv.FormatBool(d.Active), "-restart-point", "uniform"}, algCMA,
			algConfig{Active: d.Active, Restarts: d.Restarts, MaxRestarts: maxR, IncPopSize: inc, RestartPoint: defaults.PointUniform},
			algCMA},
		{"flags", []string{"-restarts", other, "-active", strconv.FormatBool(!d.Active), "-max-restarts", "4", "-incpopsize", "1.5", "-restart-point", "x0", "-lambda", "30"}, algCMA,
			algConfig{Active: !d.Active, Restarts: other, MaxRestarts: 4, IncPopSize: 1.5, RestartPoint: defaults.PointX0, Lambda: 30},
			algCMA + "+" + other + "+" + map[bool]string{true: "active", false: "passive"}[!d.Active] + "+max-restarts=4+incpopsize=1.5+restart-point=x0+lambda=30"},
		{"paper", []string{"-paper"}, algCMA,
			algConfig{Paper: true, Restarts: defaults.RestartsNone, MaxRestarts: 9, IncPopSize: 2, RestartPoint: defaults.PointX0},
			algCMA + "+paper"},
		{"paper ipop", []string{"-paper", "-restarts", "ipop"}, algCMA,
			algConfig{Paper: true, Restarts: defaults.RestartsIPOP, MaxRestarts: 9, IncPopSize: 2, RestartPoint: defaults.PointX0},
			algCMA + "+paper+ipop"},
		{"paper active bipop", []string{"-paper", "-restarts", "bipop", "-active", "true", "-restart-point", "uniform"}, algCMA,
			algConfig{Paper: true, Active: true, Restarts: defaults.RestartsBIPOP, MaxRestarts: 9, IncPopSize: 2, RestartPoint: defaults.PointUniform},
			algCMA + "+paper+bipop+active+restart-point=uniform"},
		{"self paper", []string{"-paper", "-init", "uniform", "-local-stops=false", "-numerics", "2", "-tag", "old"}, algSelf,
			algConfig{Paper: true, Restarts: defaults.RestartsNone, MaxRestarts: 9, IncPopSize: 2, RestartPoint: defaults.PointX0, Init: "uniform", Numerics: 2},
			algSelf + "+paper+init=uniform+no-local-stops+numerics=2+old"},
		{"equal fun values", []string{"-flat-fitness", strconv.FormatBool(!d.FlatFitness)}, algCMA,
			algConfig{Active: d.Active, Restarts: d.Restarts, MaxRestarts: maxR, IncPopSize: inc, RestartPoint: defaults.PointUniform, FlatFitness: !d.FlatFitness},
			algCMA + map[bool]string{true: "+tolflat", false: "+equalfun"}[!d.FlatFitness]},
		{"tolupsigma unmoved", []string{"-up-sigma-moved", strconv.FormatBool(!d.UpSigmaMoved)}, algCMA,
			algConfig{Active: d.Active, Restarts: d.Restarts, MaxRestarts: maxR, IncPopSize: inc, RestartPoint: defaults.PointUniform, UpSigmaMoved: !d.UpSigmaMoved},
			algCMA + map[bool]string{true: "+upsigma-moved", false: "+upsigma-unmoved"}[!d.UpSigmaMoved]},
		{"mirrored", []string{"-mirrored", strconv.FormatBool(!d.MirroredFirstRun)}, algCMA,
			algConfig{Active: d.Active, Restarts: d.Restarts, MaxRestarts: maxR, IncPopSize: inc, RestartPoint: defaults.PointUniform, Mirrored: !d.MirroredFirstRun},
			algCMA + map[bool]string{true: "+mirrored", false: "+unmirrored"}[!d.MirroredFirstRun]},
		{"mirrored small runs", []string{"-mirrored-small", strconv.FormatBool(!d.MirroredSmallRuns)}, algCMA,
			algConfig{Active: d.Active, Restarts: d.Restarts, MaxRestarts: maxR, IncPopSize: inc, RestartPoint: defaults.PointUniform, MirroredSm: !d.MirroredSmallRuns},
			algCMA + map[bool]string{true: "+mirrored-small", false: "+unmirrored-small"}[!d.MirroredSmallRuns]},
		{"spare best small", []string{"-spare-best-small", strconv.FormatBool(!d.SpareBestSmall)}, algCMA,
			algConfig{Active: d.Active, Restarts: d.Restarts, MaxRestarts: maxR, IncPopSize: inc, RestartPoint: defaults.PointUniform, SpareBest: !d.SpareBestSmall},
			algCMA + map[bool]string{true: "+spare-best-small", false: "+no-spare-best-small"}[!d.SpareBestSmall]},
		{"spare best small without small runs", []string{"-restarts", "ipop", "-spare-best-small", strconv.FormatBool(!d.SpareBestSmall)}, algCMA,
			algConfig{Active: d.Active, Restarts: defaults.RestartsIPOP, MaxRestarts: maxR, IncPopSize: inc, RestartPoint: defaults.PointUniform, SpareBest: !d.SpareBestSmall},
			algCMA + "+ipop"},
		{"tol worse off", []string{"-tol-worse", "0"}, algCMA,
			algConfig{Active: d.Active, Restarts: d.Restarts, MaxRestarts: maxR, IncPopSize: inc, RestartPoint: defaults.PointUniform},
			algCMA + "+tol-worse=0"},
		{"tol worse", []string{"-tol-worse", "0.1"}, algCMA,
			algConfig{Active: d.Active, Restarts: d.Restarts, MaxRestarts: maxR, IncPopSize: inc, RestartPoint: defaults.PointUniform, TolWorse: 0.1},
			algCMA + "+tol-worse=0.1"},
		{"tol worse delta", []string{"-tol-worse-delta", "0.01"}, algCMA,
			algConfig{Active: d.Active, Restarts: d.Restarts, MaxRestarts: maxR, IncPopSize: inc, RestartPoint: defaults.PointUniform, TolWorseDelta: 0.01},
			algCMA + "+tol-worse-delta=0.01"},
		{"tol worse delta without tol worse", []string{"-tol-worse", "0", "-tol-worse-delta", "-1"}, algCMA,
			algConfig{Active: d.Active, Restarts: d.Restarts, MaxRestarts: maxR, IncPopSize: inc, RestartPoint: defaults.PointUniform, TolWorseDelta: -1},
			algCMA + "+tol-worse=0"},
		{"mean rate", []string{"-mean-rate", "both", "-mean-rate-alpha", "0.5", "-mean-rate-eta-min", "0.25"}, algCMA,
			algConfig{Active: d.Active, Restarts: d.Restarts, MaxRestarts: maxR, IncPopSize: inc, RestartPoint: defaults.PointUniform, MeanRate: "both", MeanRateAlpha: 0.5, MeanRateEtaMin: 0.25},
			algCMA + "+mean-rate=both+mean-rate-alpha=0.5+mean-rate-eta-min=0.25"},
		{"nbipop's rules", []string{"-sigma-dec", "1", "-budget-ratio", "1.5"}, algCMA,
			algConfig{Active: d.Active, Restarts: d.Restarts, MaxRestarts: maxR, IncPopSize: inc, RestartPoint: defaults.PointUniform, SigmaDec: 1, BudgetRatio: 1.5},
			algCMA + "+sigma-dec=1+budget-ratio=1.5"},
		{"mean rate none", []string{"-mean-rate", "none"}, algCMA,
			algConfig{Active: d.Active, Restarts: d.Restarts, MaxRestarts: maxR, IncPopSize: inc, RestartPoint: defaults.PointUniform},
			algCMA},
		{"no restarts hides their settings", []string{"-restarts", "none", "-max-restarts", "3"}, algCMA,
			algConfig{Active: d.Active, Restarts: defaults.RestartsNone, MaxRestarts: 3, IncPopSize: inc, RestartPoint: defaults.PointUniform},
			algCMA + map[bool]string{true: "", false: "+" + restarts[defaults.RestartsNone]}[d.Restarts == defaults.RestartsNone]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseOptions(tc.args, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			c := o.config(tc.alg)
			want := tc.want
			want.Algorithm, want.LocalStops, want.Budget, want.Target, want.Seed, want.Tag = tc.alg, !o.noLocalStops, 1e4, 1e-8, 1, o.tag
			if want.Numerics == 0 {
				want.Numerics = cmaes.NumericsLatest
			}
			if !want.Paper && !slices.Contains(tc.args, "-flat-fitness") {
				want.FlatFitness = d.FlatFitness // the paper's is EqualFunValues
			}
			if !want.Paper && !slices.Contains(tc.args, "-up-sigma-moved") {
				want.UpSigmaMoved = d.UpSigmaMoved // the paper's TolUpSigma never fires
			}
			if !want.Paper && !slices.Contains(tc.args, "-tol-worse") {
				want.TolWorse = d.TolWorse // the paper's runs end on its criteria alone
			}
			if !want.Paper && !slices.Contains(tc.args, "-tol-worse-delta") {
				want.TolWorseDelta = d.TolWorseDelta
			}
			if !want.Paper && !slices.Contains(tc.args, "-mirrored") {
				want.Mirrored = d.MirroredFirstRun // the paper draws every point
			}
			if !want.Paper && !slices.Contains(tc.args, "-mirrored-small") {
				want.MirroredSm = d.MirroredSmallRuns
			}
			if !want.Paper && !slices.Contains(tc.args, "-spare-best-small") {
				want.SpareBest = d.SpareBestSmall // the paper's small runs end at their limit
			}
			if tc.alg == algSelf && want.Init == "" {
				want.Init = selfcma.InitDefault
			}
			if c != want {
				t.Errorf("config\n%+v, want\n%+v", c, want)
			}
			if got := o.label(c); got != tc.label {
				t.Errorf("label %q, want %q", got, tc.label)
			}
		})
	}
}

func TestESConfig(t *testing.T) {
	j := job{Algorithm: algSelf, Function: 8, Dimension: 5, Run: 1, Instance: 31}
	for _, tc := range []struct {
		name    string
		args    []string
		check   func(cmaes.Config) bool
		explain string
	}{
		{"paper", []string{"-paper"}, func(c cmaes.Config) bool {
			return !c.Active && c.Restarts == (cmaes.Restarts{}) && c.Lambda == max(selfcma.PaperLambda, cmaes.DefaultLambda(5))
		}, "no active update, no restarts, λ = max(100, default)"},
		{"paper ipop", []string{"-paper", "-restarts", "ipop"}, func(c cmaes.Config) bool {
			return c.Restarts.IPOP && !c.Restarts.BIPOP && c.Restarts.Max == 9 && c.Restarts.IncPopSize == 2 && !c.Restarts.Point.Uniform
		}, "IPOP, 9 restarts, λ × 2, from x0"},
		{"bipop", []string{"-restarts", "bipop", "-active", "true", "-max-restarts", "5", "-incpopsize", "3"}, func(c cmaes.Config) bool {
			p := c.Restarts.Point
			return c.Active && c.Restarts.BIPOP && !c.Restarts.IPOP && c.Restarts.Max == 5 && c.Restarts.IncPopSize == 3 && c.Lambda == 0 &&
				p.Uniform && p.Region != nil && len(p.Region.Lower) == 5 && p.Region.Lower[0] == -4 && p.Region.Upper[4] == 4
		}, "active, BIPOP, 5 restarts, λ × 3 from uniform points of [−4, 4]^5, selfcma's λ"},
		{"nbipop's rules", []string{"-sigma-dec", "1.3", "-budget-ratio", "3"}, func(c cmaes.Config) bool {
			return c.Restarts.BIPOP && c.Restarts.SigmaDec == 1.3 && c.Restarts.Budget == 3
		}, "NBIPOP with ρ_σdec 1.3 and ρ_budget 3"},
		{"ipop from x0", []string{"-restarts", "ipop", "-restart-point", "x0"}, func(c cmaes.Config) bool {
			return c.Restarts.IPOP && !c.Restarts.Point.Uniform
		}, "IPOP from x0"},
		{"none", []string{"-restarts", "none"}, func(c cmaes.Config) bool {
			return c.Restarts == (cmaes.Restarts{})
		}, "no restarts"},
		{"default mean rate", nil, func(c cmaes.Config) bool {
			return c.MeanRateLargeRuns && !c.MeanRateSmallRuns && c.MeanRateAlpha == 0 && c.MeanRateEtaMin == 0
		}, "self-CMA-ES's default: the mean's rate in the large runs, α and η_m's bound resolved by New"},
		{"mean rate small", []string{"-mean-rate", "small", "-mean-rate-alpha", "1.4", "-mean-rate-eta-min", "0.3"}, func(c cmaes.Config) bool {
			return !c.MeanRateLargeRuns && c.MeanRateSmallRuns && c.MeanRateAlpha == 1.4 && c.MeanRateEtaMin == 0.3
		}, "the mean's rate in the small runs, α 1.4, η_m ≥ 0.3"},
		{"mean rate none", []string{"-mean-rate", "none"}, func(c cmaes.Config) bool {
			return !c.MeanRateLargeRuns && !c.MeanRateSmallRuns
		}, "no run adapts the mean's rate"},
		{"paper mean rate", []string{"-paper"}, func(c cmaes.Config) bool {
			return !c.MeanRateLargeRuns && !c.MeanRateSmallRuns
		}, "the paper's: no run adapts the mean's rate"},
		{"default spares the best small run", nil, func(c cmaes.Config) bool {
			return c.Restarts.BIPOP && c.Restarts.SpareBestSmall
		}, "NBIPOP sparing the best small run"},
		{"spare best small off", []string{"-spare-best-small", "false"}, func(c cmaes.Config) bool {
			return c.Restarts.BIPOP && !c.Restarts.SpareBestSmall
		}, "NBIPOP, every small run ending at its limit"},
		{"ipop spares no small run", []string{"-restarts", "ipop", "-spare-best-small", "true"}, func(c cmaes.Config) bool {
			return c.Restarts.IPOP && !c.Restarts.SpareBestSmall
		}, "IPOP, which has no small runs"},
		{"paper bipop", []string{"-paper", "-restarts", "bipop"}, func(c cmaes.Config) bool {
			return c.Restarts.BIPOP && !c.Restarts.SpareBestSmall
		}, "the paper's mode: pycma's BIPOP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseOptions(tc.args, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if c := o.esConfig(o.config(j.Algorithm), j, 0); !tc.check(c) {
				t.Errorf("cmaes.Config %+v; want %s", c, tc.explain)
			}
		})
	}
}

// TestSharpRidgeStallRecovers documents the one failure of docs/performance.md's
// CMA-ES table (f13, n = 20, λ = 100, seed 1, run 12, instance 37): the
// run stops on tol_x while f − f_opt stalls near 8e-5 and σ falls to about
// 1e-11, a stall it recovers from when the local termination criteria are
// off: C then learns the ridge (axis ratio 1e2 -> 1e4), σ grows again and
// the target is reached. (The 16 such failures in 3000 runs, seeds 1-200,
// all recover the same way, at 56600-64900 evaluations.) The table was
// made with numerics version 2, which decides the points of that run.
func TestSharpRidgeStallRecovers(t *testing.T) {
	const seed, fn, n, run = 1, 13, 20, 12
	o := options{paper: true, lambda: 100, budget: 10000, target: 1e-8, seed: seed, numerics: cmaes.NumericsBlocked}
	r, err := runJob(o, job{Algorithm: algCMA, Function: fn, Dimension: n, Run: run, Instance: instance(run)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Success() || !slices.Contains(r.Stop, cmaes.StopTolX) {
		t.Fatalf("with the default criteria: success %v, stop %v; docs/performance.md's table reports a failure on tol_x", r.Success(), r.Stop)
	}

	p, err := bbob.New(fn, n, instance(run))
	if err != nil {
		t.Fatal(err)
	}
	e, err := cmaes.New(cmaes.Config{
		X0: initialMean(seed, run, n), Sigma0: sigma0, Lambda: 100, Seed: esSeed(seed, fn, n, runKey(instance(run))),
		Termination: options{budget: 10000, noLocalStops: true}.termination(n, p.FOpt()+1e-8),
		Numerics:    cmaes.NumericsBlocked,
	})
	if err != nil {
		t.Fatal(err)
	}
	minSigma := math.Inf(1)
	for e.Stopped() == nil {
		X := e.Ask()
		f := make([]float64, len(X))
		for k, x := range X {
			f[k] = p.Eval(x)
		}
		rec, err := e.Tell(f)
		if err != nil {
			t.Fatal(err)
		}
		minSigma = min(minSigma, rec.Sigma)
	}
	if why := e.Stopped(); why[0].Name != cmaes.StopTargetFitness {
		t.Fatalf("without the local criteria the run stops on %v at %d evaluations", why, e.Evaluations())
	}
	if minSigma > 1e-9 {
		t.Errorf("σ fell only to %.2g: the run did not go through the stall", minSigma)
	}
	t.Logf("target reached after %d evaluations; σ fell to %.2g on the way", e.Evaluations(), minSigma)
}
