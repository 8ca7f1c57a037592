package main

import (
	"io"
	"slices"
	"testing"
)

func TestInstance(t *testing.T) {
	// PAPER_NOTES.md section 3: 15 runs on instances 1–5 and 31–40.
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
		if got := instanceList(tc.runs); got != tc.want {
			t.Errorf("instanceList(%d) = %q, want %q", tc.runs, got, tc.want)
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
		s := esSeed(tc.seed, tc.function, tc.dim, tc.run)
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
		!slices.Equal(o.dims, []int{10, 20}) || !o.ipop || o.maxEvaluations(20) != 200000 {
		t.Errorf("parsed %+v", o)
	}
	for _, args := range [][]string{
		{"-algorithms", "bipop"}, {"-functions", "25"}, {"-functions", "x"}, {"-dims", "1"},
		{"-lambda", "1"}, {"-runs", "0"}, {"-budget", "0"}, {"-target", "-1"},
		{"-restarts", "bipop"}, {"-init", "random"}, {"extra"},
	} {
		if _, err := parseOptions(args, io.Discard); err == nil {
			t.Errorf("parseOptions(%q) accepted", args)
		}
	}
}
