package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInts(t *testing.T) {
	got, err := ints("1,3-5")
	if err != nil || len(got) != 4 || got[0] != 1 || got[3] != 5 {
		t.Errorf("ints = %v, %v", got, err)
	}
	for _, bad := range []string{"", "a", "5-3"} {
		if _, err := ints(bad); err == nil {
			t.Errorf("ints(%q) accepted", bad)
		}
	}
}

// TestRunAndCompare: runs on the sphere reach the target, the output does
// not depend on the number of workers, and -compare tabulates them.
func TestRunAndCompare(t *testing.T) {
	var one, two bytes.Buffer
	args := []string{"-functions", "1", "-dims", "5", "-instances", "1-3"}
	if err := run(append(args, "-workers", "1"), &one); err != nil {
		t.Fatal(err)
	}
	if err := run(append(args, "-workers", "2"), &two); err != nil {
		t.Fatal(err)
	}
	if one.String() != two.String() {
		t.Fatalf("the output depends on the workers:\n%s\n%s", one.String(), two.String())
	}
	lines := strings.Split(strings.TrimSpace(one.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3", len(lines))
	}
	for _, l := range lines {
		var r result
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.EvalsToTarget == nil || *r.EvalsToTarget != r.Evaluations || r.FinalDeltaF > 1e-8 {
			t.Errorf("sphere run missed the target: %s", l)
		}
	}
	file := filepath.Join(t.TempDir(), "runs.jsonl")
	if err := os.WriteFile(file, one.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := run([]string{"-compare", "-ref", "sepcma-ipop", file}, &table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "| 5 | f1 | 3/3, ") || !strings.Contains(table.String(), "| 1.00 |") {
		t.Errorf("table:\n%s", table.String())
	}
	if err := run([]string{"-restarts", "lots"}, &table); err == nil {
		t.Error("-restarts lots accepted")
	}
}
