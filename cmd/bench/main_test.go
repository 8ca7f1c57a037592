package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// smallArgs is a quick experiment: the 2-D sphere, 3 runs, both algorithms.
var smallArgs = []string{"-algorithms", "cma-es,self-cma-es", "-functions", "1", "-dims", "2", "-runs", "3", "-lambda", "20", "-target", "1e-6"}

func TestRunJSON(t *testing.T) {
	var out1, out2, errOut bytes.Buffer
	if err := run(append(smallArgs, "-json"), &out1, &errOut); err != nil {
		t.Fatalf("run: %v\n%s", err, errOut.String())
	}
	if err := run(append(smallArgs, "-json"), &out2, &errOut); err != nil {
		t.Fatal(err)
	}
	if out1.String() != out2.String() {
		t.Error("two runs with the same seed print different results")
	}

	var runs, sums int
	sc := bufio.NewScanner(&out1)
	for sc.Scan() {
		var obj map[string]any
		if err := json.Unmarshal(sc.Bytes(), &obj); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		switch obj["kind"] {
		case "run":
			runs++
			for _, k := range []string{"function", "dimension", "algorithm", "instance", "evals_to_target", "final_delta_f", "generations", "restarts"} {
				if _, ok := obj[k]; !ok {
					t.Errorf("run object lacks %q: %s", k, sc.Text())
				}
			}
			if obj["evals_to_target"] == nil || obj["final_delta_f"].(float64) > 1e-6 {
				t.Errorf("run did not reach 1e-6 on the 2-D sphere: %s", sc.Text())
			}
		case "summary":
			if runs != 6 {
				t.Errorf("a summary after %d runs, want all 6 runs first", runs)
			}
			sums++
			if obj["successes"].(float64) != 3 {
				t.Errorf("summary %s, want 3 successes", sc.Text())
			}
		default:
			t.Errorf("unknown kind in %s", sc.Text())
		}
	}
	if runs != 6 || sums != 2 {
		t.Errorf("%d runs and %d summaries, want 6 and 2", runs, sums)
	}
}

func TestRunTableAndPlots(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plots")
	var out, errOut bytes.Buffer
	if err := run(append(smallArgs, "-dims", "2,3", "-plots", dir), &out, &errOut); err != nil {
		t.Fatalf("run: %v\n%s", err, errOut.String())
	}
	for _, want := range []string{"instances 1–3", "| f1 Sphere | 2 |", "| f1 Sphere | 3 |", "CMA/self ERT", "3/3"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	for _, n := range []int{2, 3} {
		svg, err := os.ReadFile(filepath.Join(dir, plotFile(1, n)))
		if err != nil {
			t.Fatal(err)
		}
		poly, legend, title := svgCounts(t, svg)
		if poly != 14 || legend != 5 {
			t.Errorf("plot of %d-D: %d polylines and %d legend entries, want 14 and 5", n, poly, legend)
		}
		if want := "f1 Sphere, " + string(rune('0'+n)) + "-D, λ = 20 (median of 3 runs)"; title != want {
			t.Errorf("title %q, want %q", title, want)
		}
	}
}

func TestRunErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run([]string{"-functions", "0"}, &out, &errOut); err == nil {
		t.Error("run accepted function 0")
	}
}
