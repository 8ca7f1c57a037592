package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestRun: both modes print one parseable line per run, and a run that
// reaches the target reports it.
func TestRun(t *testing.T) {
	for _, args := range [][]string{
		{"-n", "6", "-seeds", "2", "-problem", "SphereCOM"},
		{"-constrained", "-n", "4", "-seeds", "2", "-problem", "sphere-1lin"},
	} {
		var out, errs bytes.Buffer
		if err := run(args, &out, &errs); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("%v: %d lines, want 2:\n%s", args, len(lines), out.String())
		}
		for _, l := range lines {
			var r Run
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			if !r.Reached || r.Evals <= 0 {
				t.Errorf("%v: %+v did not reach the target", args, r)
			}
		}
	}
	if err := run([]string{"-n", "x"}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Error("-n x accepted")
	}
}
