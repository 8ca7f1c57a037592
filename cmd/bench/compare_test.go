package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCompareERT(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		a, ref float64
		want   verdict
	}{
		{100, 100, tie}, {115, 100, tie}, {116, 100, worse}, {85, 100, tie}, {84, 100, better},
		{inf, inf, tie}, {inf, 100, worse}, {100, inf, better},
	} {
		if got := compareERT(tc.a, tc.ref); got != tc.want {
			t.Errorf("compareERT(%v, %v) = %v, want %v", tc.a, tc.ref, got, tc.want)
		}
	}
}

func TestCompareDeltaF(t *testing.T) {
	for _, tc := range []struct {
		a, ref, target float64
		want           verdict
	}{
		{2, 1, 1e-8, within}, {2.01, 1, 1e-8, worse}, {0.1, 1, 1e-8, within},
		{5e-9, 1e-12, 1e-8, within}, // both reached the target
		{2e-8, 1e-12, 1e-8, worse}, {0, 0, 1e-8, within}, {1e-9, 0, 0, worse},
	} {
		if got := compareDeltaF(tc.a, tc.ref, tc.target); got != tc.want {
			t.Errorf("compareDeltaF(%v, %v, %v) = %v, want %v", tc.a, tc.ref, tc.target, got, tc.want)
		}
	}
}

// writeLines writes lines into a file of dir and returns its path.
func writeLines(tb testing.TB, dir, name string, lines ...string) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// pyLine is a line of pycma_bbob.py; hit 0 is a miss.
func pyLine(f, n, inst, hit, evals int, df float64) string {
	e := "null"
	if hit > 0 {
		e = fmt.Sprint(hit)
	}
	return fmt.Sprintf(`{"function": %d, "dimension": %d, "instance": %d, "algorithm": "pycma-bipop", "evals_to_target": %s, "evaluations": %d, "final_delta_f": %v}`,
		f, n, inst, e, evals, df)
}

// benchLine is a run line of cmd/bench -json; hit 0 is a miss.
func benchLine(alg string, f, n, inst, hit, evals int, df float64) string {
	e := "null"
	if hit > 0 {
		e = fmt.Sprint(hit)
	}
	return fmt.Sprintf(`{"kind":"run","function":%d,"dimension":%d,"algorithm":%q,"config":{"algorithm":"cma-es"},"run":%d,"instance":%d,"lambda":10,"evals_to_target":%s,"evaluations":%d,"final_delta_f":%v,"generations":3,"restarts":0,"stop":["x"]}`,
		f, n, alg, inst, inst, e, evals, df)
}

// summaryRows runs -summary and returns the cells of the Markdown tables'
// rows by their first two cells ("f1 Sphere 10", "cma-es 10"), and the
// notes.
func summaryRows(tb testing.TB, args ...string) (map[string][]string, []string) {
	tb.Helper()
	var out, errOut bytes.Buffer
	if err := run(append([]string{"-summary", "-md"}, args...), &out, &errOut); err != nil {
		tb.Fatalf("run: %v\n%s", err, errOut.String())
	}
	rows := map[string][]string{}
	var notes []string
	for _, line := range strings.Split(out.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "| "):
			// Split between the outer pipes: empty cells at the end stay.
			c := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|"), "|")
			for i := range c {
				c[i] = strings.TrimSpace(c[i])
			}
			rows[c[0]+" "+c[1]] = c[2:]
		case strings.HasPrefix(line, "- "):
			notes = append(notes, line[2:])
		}
	}
	return rows, notes
}

func TestSummaryERT(t *testing.T) {
	dir := t.TempDir()
	ref := writeLines(t, dir, "pycma.jsonl",
		// f1: (100 + 200 + 1000 + 300) / 3
		pyLine(1, 10, 1, 100, 101, 1e-9), pyLine(1, 10, 2, 200, 201, 1e-9), pyLine(1, 10, 3, 0, 1000, 0.5), pyLine(1, 10, 4, 300, 301, 1e-9),
		// f2: both fail every run
		pyLine(2, 10, 1, 0, 1000, 3), pyLine(2, 10, 2, 0, 1000, 3),
		// f3: the reference succeeds once
		pyLine(3, 10, 1, 0, 1000, 3), pyLine(3, 10, 2, 900, 901, 1e-9),
		// f4: ERT 1000
		pyLine(4, 10, 1, 1000, 1000, 1e-9),
		// f5: only the reference
		pyLine(5, 10, 1, 10, 10, 1e-9),
		// blank lines are skipped
		"",
	)
	ours := writeLines(t, dir, "ours.jsonl",
		// f1: (100 + 100 + 100 + 600) / 3 = 300, instance 5 left out
		benchLine("cma-es", 1, 10, 1, 100, 100, 1e-9), benchLine("cma-es", 1, 10, 2, 100, 100, 1e-9),
		benchLine("cma-es", 1, 10, 3, 100, 100, 1e-9), benchLine("cma-es", 1, 10, 4, 0, 600, 0.1),
		benchLine("cma-es", 1, 10, 5, 0, 600, 0.1),
		benchLine("cma-es", 2, 10, 1, 0, 1000, 1), benchLine("cma-es", 2, 10, 2, 0, 1000, 1),
		benchLine("cma-es", 3, 10, 1, 0, 1000, 1), benchLine("cma-es", 3, 10, 2, 0, 1000, 1),
		// f4: 1150 is a tie, 1160 worse
		benchLine("cma-es", 4, 10, 1, 1150, 1150, 1e-9), benchLine("cma-es+lambda=20", 4, 10, 1, 1160, 1160, 1e-9),
		`{"kind":"summary","function":1,"dimension":10,"algorithm":"cma-es","runs":5,"successes":3}`,
	)
	rows, notes := summaryRows(t, ours, ref)
	for key, want := range map[string][]string{
		"function n":             {"pycma-bipop ERT", "pycma-bipop succ", "cma-es ERT", "cma-es succ", "cma-es+lambda=20 ERT", "cma-es+lambda=20 succ", "cma-es / pycma-bipop", "cma-es+lambda=20 / pycma-bipop"},
		"f1 Sphere 10":           {"533", "3/4", "300", "3/4", "", "", "0.56 better", ""},
		"f2 Ellipsoid 10":        {"∞", "0/2", "∞", "0/2", "", "", "— tie", ""},
		"f3 Rastrigin 10":        {"1900", "1/2", "∞", "0/2", "", "", "∞ worse, p 1", ""},
		"f4 Bueche-rastrigin 10": {"1000", "1/1", "1150", "1/1", "1160", "1/1", "1.15 tie", "1.16 worse"},
		"cma-es 10":              {"1/2/1", "4"},
		"cma-es+lambda=20 10":    {"0/0/1", "1"},
	} {
		if got := rows[key]; !slices.Equal(got, want) {
			t.Errorf("row %q: %q, want %q", key, got, want)
		}
	}
	if _, ok := rows["f5 Linear slope 10"]; ok {
		t.Error("a row for f5, which only the reference ran")
	}
	wantNotes := []string{
		"f1 10-D: compared on instances 1–4, the ones all algorithms ran; left out cma-es's 5",
		"f5 10-D: only pycma-bipop ran",
	}
	if !slices.Equal(notes, wantNotes) {
		t.Errorf("notes %q, want %q", notes, wantNotes)
	}
}

func TestSummaryDeltaF(t *testing.T) {
	dir := t.TempDir()
	ref := writeLines(t, dir, "ref.jsonl",
		pyLine(1, 5, 1, 0, 500, 1), pyLine(1, 5, 2, 0, 500, 2), pyLine(1, 5, 3, 0, 500, 3),
		pyLine(2, 5, 1, 0, 500, 1), pyLine(2, 5, 2, 0, 500, 1), pyLine(2, 5, 3, 0, 500, 1),
		pyLine(3, 5, 1, 0, 500, 1e-12), pyLine(3, 5, 2, 0, 500, 1e-12),
	)
	ours := writeLines(t, dir, "ours.jsonl",
		// median 4 = 2 × 2: within
		benchLine("self-cma-es", 1, 5, 1, 0, 500, 4), benchLine("self-cma-es", 1, 5, 2, 0, 500, 5), benchLine("self-cma-es", 1, 5, 3, 0, 500, 4),
		// median 2.1 > 2 × 1
		benchLine("self-cma-es", 2, 5, 1, 0, 500, 2.1), benchLine("self-cma-es", 2, 5, 2, 0, 500, 3), benchLine("self-cma-es", 2, 5, 3, 0, 500, 2.1),
		// even count: median (4e-9 + 6e-9) / 2, at most the target
		benchLine("self-cma-es", 3, 5, 1, 0, 500, 4e-9), benchLine("self-cma-es", 3, 5, 2, 0, 500, 6e-9),
	)
	rows, notes := summaryRows(t, "-metric", "delta-f", "-ref", "pycma-bipop", ref, ours)
	for key, want := range map[string][]string{
		"f1 Sphere 5":    {"2.00e+00", "3", "4.00e+00", "3", "2.00 within"},
		"f2 Ellipsoid 5": {"1.00e+00", "3", "2.10e+00", "3", "2.10 worse"},
		"f3 Rastrigin 5": {"1.00e-12", "2", "5.00e-09", "2", "5000.00 within"},
		"self-cma-es 5":  {"2", "3"},
	} {
		if got := rows[key]; !slices.Equal(got, want) {
			t.Errorf("row %q: %q, want %q", key, got, want)
		}
	}
	if len(notes) > 0 {
		t.Errorf("notes %q, want none", notes)
	}
}

func TestSummaryErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeLines(t, dir, "good.jsonl", pyLine(1, 5, 1, 10, 10, 0))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no reference", []string{"-ref", "cma-es", good}, "-ref cma-es: no such algorithm"},
		{"missing file", []string{filepath.Join(dir, "none.jsonl")}, "none.jsonl"},
		{"duplicate", []string{good, writeLines(t, dir, "again.jsonl", pyLine(1, 5, 1, 20, 20, 0))}, "-tag"},
		{"not JSON", []string{writeLines(t, dir, "bad.jsonl", pyLine(1, 5, 2, 10, 10, 0), "{")}, "bad.jsonl:2"},
		{"no instance", []string{writeLines(t, dir, "noinst.jsonl", `{"function":1,"dimension":5,"algorithm":"a","evaluations":1,"final_delta_f":0}`)}, "noinst.jsonl:1: want function"},
		{"no evaluations", []string{writeLines(t, dir, "noevals.jsonl", `{"function":1,"dimension":5,"instance":1,"algorithm":"a","final_delta_f":0}`)}, "want evaluations"},
		{"empty", []string{writeLines(t, dir, "empty.jsonl", "")}, "no runs"},
		{"two configurations", []string{
			writeLines(t, dir, "big.jsonl", strings.Replace(benchLine("cma-es", 1, 5, 1, 0, 500, 1), `"config":{`, `"config":{"budget":10000,`, 1)),
			writeLines(t, dir, "small.jsonl", strings.Replace(benchLine("cma-es", 1, 5, 2, 0, 500, 1), `"config":{`, `"config":{"budget":100,`, 1)),
		}, "cma-es: runs of two configurations, in " + filepath.Join(dir, "big.jsonl")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(append([]string{"-summary"}, tc.args...), &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestSummaryOfBench(t *testing.T) {
	// cmd/bench -json compared with itself under another label: every
	// ratio is 1, a tie.
	dir := t.TempDir()
	var a, b, errOut bytes.Buffer
	args := []string{"-json", "-algorithms", "cma-es", "-functions", "1,8", "-dims", "2", "-instances", "1-3"}
	if err := run(args, &a, &errOut); err != nil {
		t.Fatal(err)
	}
	if err := run(append(args, "-tag", "again"), &b, &errOut); err != nil {
		t.Fatal(err)
	}
	rows, _ := summaryRows(t, "-ref", "cma-es", writeLines(t, dir, "a.jsonl", a.String()), writeLines(t, dir, "b.jsonl", b.String()))
	if got := rows["cma-es+again 2"]; !slices.Equal(got, []string{"0/2/0", "2"}) {
		t.Errorf("totals %q, want 0/2/0 over 2 functions", got)
	}
	if got := rows["f1 Sphere 2"]; len(got) != 5 || got[4] != "1.00 tie" {
		t.Errorf("f1: %q, want a ratio of 1.00, a tie", got)
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := writeText(&b, [][]string{{"function", "n", "ERT"}, {"f1 Sphere", "10", "∞"}, {"f10 Ellipsoid rotated", "20", ""}}); err != nil {
		t.Fatal(err)
	}
	want := "function                n  ERT\n" +
		"f1 Sphere              10    ∞\n" +
		"f10 Ellipsoid rotated  20\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestFormatFunctions(t *testing.T) {
	for _, tc := range []struct {
		fns  []int
		want string
	}{{[]int{8}, "f8"}, {[]int{1, 2, 3, 8}, "f1–f3, f8"}, {[]int{3, 4, 5, 6, 7, 9, 10}, "f3–f7, f9–f10"}} {
		if got := formatFunctions(tc.fns); got != tc.want {
			t.Errorf("formatFunctions(%v) = %q, want %q", tc.fns, got, tc.want)
		}
	}
}

func TestBudgetNotes(t *testing.T) {
	fail := func(alg string, n, evals int) runResult {
		return runResult{job: job{Algorithm: alg, Function: 1, Dimension: n}, Evaluations: evals}
	}
	win := fail("a", 10, 99999)
	win.EvalsToTarget = 99999
	runs := []runResult{
		fail("a", 10, 1000), fail("b", 10, 1011), fail("a", 20, 2000), fail("b", 20, 200100), win,
	}
	want := []string{"20-D: different budgets? the failed runs used at most 2000 (a), 200100 (b) evaluations"}
	if got := budgetNotes(runs); !slices.Equal(got, want) {
		t.Errorf("budgetNotes = %q, want %q", got, want)
	}
}
