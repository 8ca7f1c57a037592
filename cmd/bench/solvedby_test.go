package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// perRunLine is a run line of cmd/bench -json -per-run whose last run,
// given as "regime λ evaluations [σ0]" (σ0 1 when left out), reached the
// target when hit.
func perRunLine(alg string, inst int, hit bool, runs ...string) string {
	var parts []string
	total := 0
	for i, r := range runs {
		var regime string
		var lambda, evals int
		sigma0 := 1.0
		fmt.Sscan(r, &regime, &lambda, &evals, &sigma0)
		total += evals
		target := hit && i == len(runs)-1
		parts = append(parts, fmt.Sprintf(`{"regime":%q,"lambda":%d,"sigma0":%g,"evaluations":%d,"stop":["x"],"best_delta_f":1,"target":%v}`, regime, lambda, sigma0, evals, target))
	}
	e := "null"
	if hit {
		e = fmt.Sprint(total)
	}
	return fmt.Sprintf(`{"kind":"run","function":15,"dimension":10,"algorithm":%q,"config":{"algorithm":"cma-es"},"instance":%d,"evals_to_target":%s,"evaluations":%d,"final_delta_f":1,"per_run":[%s]}`,
		alg, inst, e, total, strings.Join(parts, ","))
}

// -solved-by counts the successes by the run that reached the target and
// every kind of run with its mean evaluations; the small runs are one
// kind, with the range of λ of those that solved and of all.
func TestSolvedBy(t *testing.T) {
	dir := t.TempDir()
	f := writeLines(t, dir, "runs.jsonl",
		perRunLine("cma-es", 1, true, "default 10 100", "large 21 300"),
		perRunLine("cma-es", 2, true, "default 10 200", "large 21 500", "small 12 40", "small 15 60"),
		perRunLine("cma-es", 4, true, "default 10 200", "large 21 500", "small 13 50"),
		perRunLine("cma-es", 3, false, "default 10 300", "small 11 50"),
	)
	wantSolvedBy(t, []string{"-summary", "-solved-by", f},
		"f15 Rastrigin rotated 10-D cma-es: 3 of 4 reached the target\n"+
			"  by the run: large λ 21: 1, small (λ 13–15): 2\n"+
			"  runs, mean evaluations: default λ 10: 4, 200; large λ 21: 3, 433; small (λ 11–15): 4, 50\n")

	var out, errOut bytes.Buffer

	pyc := writeLines(t, dir, "pycma.jsonl", pyLine(15, 10, 1, 0, 1000, 1))
	err := run([]string{"-summary", "-solved-by", pyc}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "no per-run records") {
		t.Errorf("pycma's lines: error %v, want one naming the missing per-run records", err)
	}

	if err := run([]string{"-solved-by", "-functions", "1"}, &out, &errOut); err == nil {
		t.Error("-solved-by without -summary: no error")
	}
}

// -split-sigma0 and -split-lambda report the small runs as two kinds each,
// split at the σ0 given (σ0 equal to it on the upper side) and at the λ
// given (λ equal to it on the lower side), four with both; each is refused
// without -solved-by or below 0.
func TestSolvedBySplit(t *testing.T) {
	dir := t.TempDir()
	f := writeLines(t, dir, "runs.jsonl",
		perRunLine("cma-es", 1, true, "default 10 100", "small 12 40 0.5", "small 14 60 0.05"),
		perRunLine("cma-es", 2, true, "default 10 100", "small 11 30 0.2", "small 15 80 0.2"),
		perRunLine("cma-es", 3, false, "default 10 100", "small 13 50 0.01"),
	)
	wantSolvedBy(t, []string{"-summary", "-solved-by", "-split-sigma0", "0.2", f},
		"f15 Rastrigin rotated 10-D cma-es: 2 of 3 reached the target\n"+
			"  by the run: small σ0 < 0.2 (λ 14–14): 1, small σ0 ≥ 0.2 (λ 15–15): 1\n"+
			"  runs, mean evaluations: default λ 10: 3, 100; small σ0 < 0.2 (λ 13–14): 2, 55; small σ0 ≥ 0.2 (λ 11–15): 3, 50\n")
	wantSolvedBy(t, []string{"-summary", "-solved-by", "-split-lambda", "13", f},
		"f15 Rastrigin rotated 10-D cma-es: 2 of 3 reached the target\n"+
			"  by the run: small λ > 13 (λ 14–15): 2\n"+
			"  runs, mean evaluations: default λ 10: 3, 100; small λ ≤ 13 (λ 11–13): 3, 40; small λ > 13 (λ 14–15): 2, 70\n")
	wantSolvedBy(t, []string{"-summary", "-solved-by", "-split-sigma0", "0.2", "-split-lambda", "13", f},
		"f15 Rastrigin rotated 10-D cma-es: 2 of 3 reached the target\n"+
			"  by the run: small σ0 < 0.2, λ > 13 (λ 14–14): 1, small σ0 ≥ 0.2, λ > 13 (λ 15–15): 1\n"+
			"  runs, mean evaluations: default λ 10: 3, 100; small σ0 < 0.2, λ ≤ 13 (λ 13–13): 1, 50; small σ0 < 0.2, λ > 13 (λ 14–14): 1, 60; "+
			"small σ0 ≥ 0.2, λ ≤ 13 (λ 11–12): 2, 35; small σ0 ≥ 0.2, λ > 13 (λ 15–15): 1, 80\n")
	var out, errOut bytes.Buffer
	for _, args := range [][]string{
		{"-summary", "-split-sigma0", "0.2", f},
		{"-summary", "-solved-by", "-split-sigma0", "-1", f},
		{"-summary", "-split-lambda", "13", f},
		{"-summary", "-solved-by", "-split-lambda", "-1", f},
	} {
		if err := run(args, &out, &errOut); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// wantSolvedBy runs cmd/bench with args and checks its output.
func wantSolvedBy(t *testing.T, args []string, want string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(args, &out, &errOut); err != nil {
		t.Fatalf("run %v: %v\n%s", args, err, errOut.String())
	}
	if got := out.String(); got != want {
		t.Errorf("%v: got\n%s\nwant\n%s", args, got, want)
	}
}
