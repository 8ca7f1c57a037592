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
			for _, k := range []string{"function", "dimension", "algorithm", "config", "instance", "evals_to_target", "evaluations", "final_delta_f", "generations", "restarts"} {
				if _, ok := obj[k]; !ok {
					t.Errorf("run object lacks %q: %s", k, sc.Text())
				}
			}
			// -lambda 20 is not the default: the label says so.
			alg := obj["config"].(map[string]any)["algorithm"].(string)
			if obj["algorithm"] != alg+"+lambda=20" {
				t.Errorf("label %q, want %q", obj["algorithm"], alg+"+lambda=20")
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
	if err := run(append(smallArgs, "-paper", "-dims", "2,3", "-plots", dir), &out, &errOut); err != nil {
		t.Fatalf("run: %v\n%s", err, errOut.String())
	}
	for _, want := range []string{"instances 1–3", "| f1 Sphere |  2 |", "| f1 Sphere |  3 |", "CMA/self ERT", "3/3"} {
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

// paperRun is what TestPaperKeepsRuns compares of a run.
type paperRun struct {
	Function      int      `json:"function"`
	Dimension     int      `json:"dimension"`
	Algorithm     string   `json:"algorithm"`
	Run           int      `json:"run"`
	Instance      int      `json:"instance"`
	Lambda        int      `json:"lambda"`
	EvalsToTarget *int     `json:"evals_to_target"`
	Evaluations   int      `json:"evaluations"`
	FinalDeltaF   float64  `json:"final_delta_f"`
	Generations   int      `json:"generations"`
	Restarts      int      `json:"restarts"`
	Stop          []string `json:"stop"`
}

// readPaperRuns decodes the run lines of cmd/bench -json.
func readPaperRuns(tb testing.TB, b []byte) []paperRun {
	tb.Helper()
	var out []paperRun
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if !bytes.Contains(line, []byte(`"kind":"run"`)) {
			continue
		}
		var r paperRun
		if err := json.Unmarshal(line, &r); err != nil {
			tb.Fatalf("%s: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// TestPaperKeepsRuns checks that -paper runs what cmd/bench ran before the
// defaults package: testdata/paper-runs.jsonl holds the run lines that
// commit b03dfd9 printed for these commands (without -paper, which did not
// exist; numerics 3 named so that a later version does not change them).
func TestPaperKeepsRuns(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "paper-runs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	for _, args := range [][]string{
		{"-functions", "1,8", "-dims", "2,5", "-runs", "3"},
		{"-functions", "15", "-dims", "3", "-runs", "6", "-restarts", "ipop", "-budget", "2000"},
		{"-functions", "8", "-dims", "4", "-runs", "2", "-lambda", "20", "-restarts", "ipop", "-init", "uniform",
			"-local-stops=false", "-budget", "500", "-target", "1e-5", "-seed", "7"},
	} {
		var out, errOut bytes.Buffer
		if err := run(append([]string{"-paper", "-json", "-numerics", "3"}, args...), &out, &errOut); err != nil {
			t.Fatalf("%q: %v\n%s", args, err, errOut.String())
		}
		got = append(got, out.Bytes()...)
	}
	g, w := readPaperRuns(t, got), readPaperRuns(t, want)
	if len(g) != len(w) {
		t.Fatalf("%d runs, want %d", len(g), len(w))
	}
	for i := range w {
		// The labels name the mode now: cma-es+paper, self-cma-es+paper+ipop+...
		base, _, _ := strings.Cut(g[i].Algorithm, "+")
		if !strings.HasPrefix(g[i].Algorithm, w[i].Algorithm+"+paper") || base != w[i].Algorithm {
			t.Errorf("run %d: label %q, want %s+paper...", i, g[i].Algorithm, w[i].Algorithm)
		}
		g[i].Algorithm = w[i].Algorithm
		gj, _ := json.Marshal(g[i])
		wj, _ := json.Marshal(w[i])
		if !bytes.Equal(gj, wj) {
			t.Errorf("run %d:\n got %s\nwant %s", i, gj, wj)
		}
	}
}
