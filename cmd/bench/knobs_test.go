package main

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"io"
	"math"
	"slices"
	"testing"
)

// knobJob runs one job of args and returns its result.
func knobJob(t *testing.T, alg string, args ...string) runResult {
	t.Helper()
	o, err := parseOptions(append([]string{"-functions", "10", "-dims", "5", "-instances", "1", "-budget", "3000"}, args...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range o.jobs() {
		if j.Algorithm != alg {
			continue
		}
		r, err := runJob(o, j)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	t.Fatalf("no %s job", alg)
	return runResult{}
}

// TestRateScale: -rate-scale k updates with k times the default c_1 and c_μ
// (c_c unchanged), in every run or, with -rate-scale-first, the first only.
func TestRateScale(t *testing.T) {
	r := knobJob(t, algCMA, "-algorithms", "cma-es", "-rate-scale", "2", "-restarts", "ipop", "-max-restarts", "2")
	if r.Label != "cma-es+ipop+max-restarts=2+rate-scale=2" {
		t.Errorf("label %q", r.Label)
	}
	for g, tp := range r.Trace[:5] {
		if tp.Hyper.C1 != 2*r.Defaults.C1 || tp.Hyper.CMu != 2*r.Defaults.CMu || tp.Hyper.Cc != r.Defaults.Cc {
			t.Fatalf("generation %d: θ %+v, want 2 × c_1, c_μ of %+v", g, tp.Hyper, r.Defaults)
		}
	}
	first := knobJob(t, algCMA, "-algorithms", "cma-es", "-rate-scale", "2", "-rate-scale-first", "-restarts", "ipop", "-max-restarts", "2", "-functions", "15")
	if first.Restarts == 0 {
		t.Fatal("no restart in the budget; the test needs one")
	}
	last := first.Trace[len(first.Trace)-1].Hyper
	if last.C1 == 2*first.Defaults.C1 || math.Abs(last.C1/first.Defaults.C1-2) < 0.5 {
		t.Errorf("the last run's c_1 %v is still scaled (first run's default %v)", last.C1, first.Defaults.C1)
	}
	if _, err := parseOptions([]string{"-rate-scale", "-1"}, io.Discard); err == nil {
		t.Error("-rate-scale -1 accepted")
	}
}

// TestSNRFlag: the default self-CMA-ES runs the signal-to-noise rule at
// its default λ (c_μ at η ∈ [1, 3] times its default, c_1 and c_c at
// theirs, η moving from its start 2); -snr-rates both scales c_1 too;
// -snr false and -paper keep the defaults.
func TestSNRFlag(t *testing.T) {
	r := knobJob(t, algSelf, "-algorithms", "self-cma-es")
	if r.Label != "self-cma-es" || !r.Config.SNR {
		t.Fatalf("label %q, snr %v; want self-cma-es, true", r.Label, r.Config.SNR)
	}
	moved := false
	for g, tp := range r.Trace {
		eta := tp.Hyper.CMu / r.Defaults.CMu
		if eta < 1 || eta > 3.0001 || tp.Hyper.C1 != r.Defaults.C1 || tp.Hyper.Cc != r.Defaults.Cc {
			t.Fatalf("generation %d: θ %+v, want η ∈ [1, 3] times c_μ of %+v, c_1 and c_c kept", g, tp.Hyper, r.Defaults)
		}
		moved = moved || math.Abs(eta-2) > 1e-9
	}
	if !moved {
		t.Error("η never left its start 2")
	}
	both := knobJob(t, algSelf, "-algorithms", "self-cma-es", "-snr-rates", "both")
	if both.Label != "self-cma-es+snr-rates=both" || both.Config.SNRRates != "both" {
		t.Fatalf("-snr-rates both: label %q, config %q", both.Label, both.Config.SNRRates)
	}
	for g, tp := range both.Trace {
		eta := tp.Hyper.C1 / both.Defaults.C1
		if eta < 1 || eta > 3.0001 || math.Abs(tp.Hyper.CMu/both.Defaults.CMu-eta) > 1e-9 || tp.Hyper.Cc != both.Defaults.Cc {
			t.Fatalf("-snr-rates both, generation %d: θ %+v, want η ∈ [1, 3] times c_1, c_μ of %+v", g, tp.Hyper, both.Defaults)
		}
	}
	if _, err := parseOptions([]string{"-snr-rates", "c1"}, io.Discard); err == nil {
		t.Error("-snr-rates c1 accepted")
	}
	off := knobJob(t, algSelf, "-algorithms", "self-cma-es", "-snr", "false")
	if off.Label != "self-cma-es+no-snr" {
		t.Errorf("label %q", off.Label)
	}
	paper, err := parseOptions([]string{"-paper"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if paper.config(algSelf).SNR {
		t.Error("-paper runs the rule")
	}
	if _, err := parseOptions([]string{"-snr", "yes"}, io.Discard); err == nil {
		t.Error("-snr yes accepted")
	}
}

// TestMinLambda: -min-lambda 1 -adapt-restarts self-adapts at the default
// λ (θ leaves the defaults), without it (and without the rule, -snr false)
// self-CMA-ES keeps the defaults.
func TestMinLambda(t *testing.T) {
	gated := knobJob(t, algSelf, "-algorithms", "self-cma-es", "-snr", "false")
	for g, tp := range gated.Trace {
		if tp.Hyper != gated.Defaults {
			t.Fatalf("default gate, generation %d: θ %+v, want the defaults %+v", g, tp.Hyper, gated.Defaults)
		}
	}
	every := knobJob(t, algSelf, "-algorithms", "self-cma-es", "-min-lambda", "1", "-adapt-restarts")
	if every.Label != "self-cma-es+min-lambda=1+adapt-restarts" {
		t.Errorf("label %q", every.Label)
	}
	moved := false
	for _, tp := range every.Trace {
		moved = moved || tp.Hyper != every.Defaults
	}
	if !moved {
		t.Error("-min-lambda 1: θ never left the defaults")
	}
	if _, err := parseOptions([]string{"-min-lambda", "-3"}, io.Discard); err == nil {
		t.Error("-min-lambda -3 accepted")
	}
}

// TestRateSNR: -rate-snr updates the first run with one factor η of both
// default c_1 and c_μ (c_c unchanged), η moving with the rule, and the
// restarts with the defaults.
func TestRateSNR(t *testing.T) {
	r := knobJob(t, algCMA, "-algorithms", "cma-es", "-rate-snr", "-restarts", "ipop", "-max-restarts", "2", "-functions", "15")
	if r.Label != "cma-es+ipop+max-restarts=2+rate-snr" {
		t.Errorf("label %q", r.Label)
	}
	if r.Restarts == 0 {
		t.Fatal("no restart in the budget; the test needs one")
	}
	moved := false
	for g, tp := range r.Trace {
		if tp.Hyper.Cc != r.Defaults.Cc && g < 10 {
			t.Fatalf("generation %d: c_c %v, want the default %v", g, tp.Hyper.Cc, r.Defaults.Cc)
		}
		if g < 10 && math.Abs(tp.Hyper.C1/r.Defaults.C1-tp.Hyper.CMu/r.Defaults.CMu) > 1e-12 {
			t.Fatalf("generation %d: c_1 and c_μ scaled apart: %+v against %+v", g, tp.Hyper, r.Defaults)
		}
		moved = moved || tp.Hyper.C1 != r.Defaults.C1
	}
	if !moved {
		t.Error("η never left 1")
	}
	if _, err := parseOptions([]string{"-rate-snr", "-rate-scale", "2"}, io.Discard); err == nil {
		t.Error("-rate-snr with -rate-scale accepted")
	}
}

// TestSNRRuleNoise: on updates of pure noise (no drift) η falls; on a
// steady drift it rises to its bound.
func TestSNRRuleNoise(t *testing.T) {
	const n = 4
	id := mat.NewDense(n, n, nil)
	d := make([]float64, n)
	for i := range n {
		id.Set(i, i, 1)
		d[i] = 1
	}
	c0 := mat.NewSymDense(n, nil)
	for i := range n {
		c0.SetSym(i, i, 1)
	}
	noise, drift := newSNRRule(n, 0, snrEtaMax), newSNRRule(n, 0, snrEtaMax)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		c1 := mat.NewSymDense(n, nil)
		c2 := mat.NewSymDense(n, nil)
		for i := range n {
			for j := i; j < n; j++ {
				c1.SetSym(i, j, c0.At(i, j)+0.01*rng.NormFloat64())
				c2.SetSym(i, j, c0.At(i, j)+0.01*drift.eta*(1+0.1*rng.NormFloat64()))
			}
		}
		noise.observe(c0, c1, id, d)
		drift.observe(c0, c2, id, d)
	}
	if !(noise.eta < 0.5) {
		t.Errorf("pure noise: η = %v, want it fallen below 0.5", noise.eta)
	}
	if drift.eta != snrEtaMax {
		t.Errorf("steady drift: η = %v, want its bound %v", drift.eta, snrEtaMax)
	}
}

// TestSNRParamsKnobs: -snr-alpha, -snr-beta, -snr-eta-max, -snr-eta0,
// -snr-restarts and -snr-small-restarts reach self-CMA-ES (its label and
// config), change its run where they differ from the defaults, and bad
// values are refused; the default's parameters given as flags are the
// default's run.
func TestSNRParamsKnobs(t *testing.T) {
	base := knobJob(t, algSelf, "-algorithms", "self-cma-es")
	same := knobJob(t, algSelf, "-algorithms", "self-cma-es", "-snr-alpha", "0.01", "-snr-eta0", "2", "-snr-rates", "cmu")
	if same.EvalsToTarget != base.EvalsToTarget || same.FinalDeltaF != base.FinalDeltaF {
		t.Errorf("-snr-alpha 0.01 -snr-eta0 2 -snr-rates cmu (the default): %d evaluations, f − f_opt %g; the default's %d, %g", same.EvalsToTarget, same.FinalDeltaF, base.EvalsToTarget, base.FinalDeltaF)
	}
	r := knobJob(t, algSelf, "-algorithms", "self-cma-es", "-snr-alpha", "0.02", "-snr-beta", "0.05", "-snr-eta-max", "2",
		"-snr-eta0", "1.5", "-snr-restarts", "2", "-snr-small-restarts")
	if want := "self-cma-es+snr-alpha=0.02+snr-beta=0.05+snr-eta-max=2+snr-restarts=2+snr-eta0=1.5+snr-small-restarts"; r.Label != want {
		t.Errorf("label %q, want %q", r.Label, want)
	}
	if c := r.Config; c.SNRAlpha != 0.02 || c.SNRBeta != 0.05 || c.SNREtaMax != 2 || c.SNREta0 != 1.5 || c.SNRRestarts != 2 || !c.SNRSmall {
		t.Errorf("config %+v", c)
	}
	if g := r.Trace[0].Hyper.CMu / r.Defaults.CMu; math.Abs(g-1.5) > 1e-12 {
		t.Errorf("first generation: c_μ %v times the default, want η0 = 1.5", g)
	}
	for _, bad := range [][]string{{"-snr-alpha", "-1"}, {"-snr-beta", "1"}, {"-snr-eta-max", "0.5"}, {"-snr-restarts", "-1"}, {"-snr-eta0", "0.5"}} {
		if _, err := parseOptions(bad, io.Discard); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestTolKnobs: -tolfun and -tolx set the run's TolFun and (absolute)
// TolX, label the run, and end it on that criterion when set loose; the
// defaults reach the target instead.
func TestTolKnobs(t *testing.T) {
	def := knobJob(t, algCMA, "-algorithms", "cma-es", "-restarts", "none")
	if def.EvalsToTarget == 0 {
		t.Fatalf("the default run missed the target (stop %v); the test needs it", def.Stop)
	}
	for _, c := range []struct{ flag, value, stop, label string }{
		{"-tolfun", "1e-3", "tol_fun", "cma-es+no-restarts+tolfun=0.001"},
		{"-tolx", "1e-2", "tol_x", "cma-es+no-restarts+tolx=0.01"},
	} {
		r := knobJob(t, algCMA, "-algorithms", "cma-es", "-restarts", "none", c.flag, c.value)
		if r.Label != c.label {
			t.Errorf("%s: label %q, want %q", c.flag, r.Label, c.label)
		}
		if r.EvalsToTarget != 0 || !slices.Contains(r.Stop, c.stop) {
			t.Errorf("%s %s: stop %v, f − f_opt %g; want %s before the target", c.flag, c.value, r.Stop, r.FinalDeltaF, c.stop)
		}
	}
	for _, bad := range [][]string{{"-tolfun", "-1"}, {"-tolx", "NaN"}, {"-tolfun", "1e-11", "-local-stops=false"}} {
		if _, err := parseOptions(bad, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestSNRCMuMaxKnob: at n = 5, λ = 40 (c_μ 0.32) -snr-cmu-max 0.5 is the
// default's bound, run for run; -snr-eta-max 3 lifts it (the rule before
// table 15) and -snr-cmu-max 0.4 lowers it, each another run; a negative
// bound is refused.
func TestSNRCMuMaxKnob(t *testing.T) {
	run := func(args ...string) runResult {
		return knobJob(t, algSelf, append([]string{"-algorithms", "self-cma-es", "-functions", "12", "-lambda", "40"}, args...)...)
	}
	base := run()
	same := run("-snr-cmu-max", "0.5")
	if same.Label != "self-cma-es+lambda=40+snr-cmu-max=0.5" || same.Config.SNRCMuMax != 0.5 {
		t.Errorf("label %q, config %v", same.Label, same.Config.SNRCMuMax)
	}
	if same.Evaluations != base.Evaluations || same.FinalDeltaF != base.FinalDeltaF {
		t.Errorf("-snr-cmu-max 0.5 (the default): %d evaluations, f − f_opt %g; the default's %d, %g", same.Evaluations, same.FinalDeltaF, base.Evaluations, base.FinalDeltaF)
	}
	for _, args := range [][]string{{"-snr-eta-max", "3"}, {"-snr-cmu-max", "0.4"}} {
		if r := run(args...); r.Evaluations == base.Evaluations && r.FinalDeltaF == base.FinalDeltaF {
			t.Errorf("%v: the default's run (%d evaluations, f − f_opt %g)", args, r.Evaluations, r.FinalDeltaF)
		}
	}
	if _, err := parseOptions([]string{"-snr-cmu-max", "-1"}, io.Discard); err == nil {
		t.Error("-snr-cmu-max -1 accepted")
	}
}

// TestTolWorseKnob: the default ends restarts on tol_worse (Rastrigin,
// per run), -tol-worse 0 never does and labels the run, -tol-worse 0.3
// (the default's ε) is the default's run, -tol-worse-delta 1 spares every
// restart; bad values are refused, and so are the flags with
// -local-stops=false.
func TestTolWorseKnob(t *testing.T) {
	run := func(args ...string) runResult {
		return knobJob(t, algCMA, append([]string{"-algorithms", "cma-es", "-functions", "15", "-budget", "5000", "-per-run"}, args...)...)
	}
	ended := func(r runResult) bool {
		for _, x := range r.Runs {
			if slices.Contains(x.Stop, "tol_worse") {
				return true
			}
		}
		return false
	}
	def, off, same := run(), run("-tol-worse", "0"), run("-tol-worse", "0.3")
	if !ended(def) || ended(off) {
		t.Errorf("restarts ended on tol_worse: %t with the default, %t with -tol-worse 0; want true, false", ended(def), ended(off))
	}
	// δ = 1 spares every run whose values lie below where it began.
	if spared := run("-tol-worse-delta", "1"); ended(spared) || spared.Label != "cma-es+tol-worse-delta=1" {
		t.Errorf("-tol-worse-delta 1: ended on tol_worse %t, label %q; want false, cma-es+tol-worse-delta=1", ended(spared), spared.Label)
	}
	if off.Label != "cma-es+tol-worse=0" || same.Label != "cma-es" {
		t.Errorf("labels %q, %q; want cma-es+tol-worse=0, cma-es", off.Label, same.Label)
	}
	if same.Evaluations != def.Evaluations || same.FinalDeltaF != def.FinalDeltaF {
		t.Errorf("-tol-worse 0.3 (the default): %d evaluations, f − f_opt %g; the default's %d, %g", same.Evaluations, same.FinalDeltaF, def.Evaluations, def.FinalDeltaF)
	}
	for _, bad := range [][]string{{"-tol-worse", "-1"}, {"-tol-worse", "x"}, {"-tol-worse", "Inf"}, {"-tol-worse", "0.3", "-local-stops=false"},
		{"-tol-worse-delta", "NaN"}, {"-tol-worse-delta", "Inf"}, {"-tol-worse-delta", "0.1", "-local-stops=false"}} {
		if _, err := parseOptions(bad, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
