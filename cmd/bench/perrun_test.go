package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
)

// -per-run lists every run of a restarting ES: their evaluations add up to
// the whole, the first is the default regime at σ0 = 2, and only the last
// may reach the target or end for the budget.
func TestPerRun(t *testing.T) {
	var out, errOut bytes.Buffer
	args := []string{"-algorithms", "cma-es", "-functions", "3", "-dims", "4", "-instances", "1-3", "-budget", "3000", "-json", "-per-run"}
	if err := run(args, &out, &errOut); err != nil {
		t.Fatalf("run: %v\n%s", err, errOut.String())
	}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	seen := 0
	for sc.Scan() {
		var kind struct{ Kind string }
		if err := json.Unmarshal(sc.Bytes(), &kind); err != nil || kind.Kind != "run" {
			continue // a summary
		}
		var r jsonRun
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		seen++
		if len(r.Runs) != r.Restarts+1 {
			t.Fatalf("%d runs listed, %d restarts", len(r.Runs), r.Restarts)
		}
		sum := 0
		for i, x := range r.Runs {
			sum += x.Evaluations
			if len(x.Stop) == 0 || x.Evaluations <= 0 || x.Lambda < 2 {
				t.Errorf("run %d: %+v", i, x)
			}
			if x.Target && i != len(r.Runs)-1 {
				t.Errorf("run %d of %d reached the target", i, len(r.Runs))
			}
		}
		if first := r.Runs[0]; first.Regime != "default" || first.Sigma0 != 2 {
			t.Errorf("first run %+v, want the default regime at σ0 = 2", first)
		}
		if sum != r.Evaluations {
			t.Errorf("the runs' evaluations add up to %d, the ES had %d", sum, r.Evaluations)
		}
	}
	if seen != 3 {
		t.Fatalf("%d runs, want 3", seen)
	}
}
