package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// needTools skips the test (or fails it under CI) when a tool the shell
// blocks use is missing.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed (CI must run every test)", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
}

// runBlocks runs shell blocks as one bash script in a temporary directory,
// with URL pointing at base, and returns its output.
func runBlocks(t *testing.T, base string, blocks []string) []byte {
	t.Helper()
	cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+strings.Join(blocks, "\n"))
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "URL="+base)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the blocks failed: %v\n%s", err, out)
	}
	return out
}

// The README's curl loop runs as written against a server started as the
// README says (but on a free port and a temporary file), until the session
// stops.
func TestReadmeCurlLoop(t *testing.T) {
	if !strings.Contains(docSection(t, "README.md", "## The two commands"), "    go run ./cmd/server\n") {
		t.Error("the README does not give the run command")
	}
	blocks := docBlocks(t, "README.md", "## A curl loop")
	if len(blocks) != 1 {
		t.Fatalf("%d sh blocks in the README's curl loop, want 1", len(blocks))
	}
	needTools(t, "bash", "curl", "python3")
	base, _, stop := startRun(t, []string{"-addr", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "readme.db")}, nil)
	defer stop()
	out := runBlocks(t, base, blocks)
	if !regexp.MustCompile(`(?m)^\{'x': \[.*\], 'f': \d(\.\d+)?e-(0[6-9]|[1-9]\d), `).Match(out) {
		t.Errorf("the loop's output lacks a best point under the target 1e-6:\n%s", out)
	}
}

// docs/http-api.md's curl walkthrough runs, exactly as written, against a
// server started as it says (but on a free port and a temporary file).
func TestReadmeWalkthrough(t *testing.T) {
	const file, heading = "docs/http-api.md", "## Walkthrough"
	section, blocks := docSection(t, file, heading), docBlocks(t, file, heading)
	if !strings.Contains(section, "    go run ./cmd/server\n") {
		t.Error("the section does not give the run command")
	}
	// 13 blocks when the walkthrough moved from the README to docs/.
	if len(blocks) < 13 {
		t.Fatalf("%d sh blocks in the walkthrough, want at least 13", len(blocks))
	}
	needTools(t, "bash", "curl", "python3")
	base, _, stop := startRun(t, []string{"-addr", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "readme.db")}, nil)
	defer stop()
	out := runBlocks(t, base, blocks)
	for _, want := range []string{`session \S+\n`, `'f': `, `'c1': `, `\n29,0,\d+,\d+,`, ` selfcma-backup\.db\n`, `\nselfcma_store_writes_total \d+\n`, `"code":"conflict"`,
		`\{'indices': \[2\], 'fitness': \[\S+\]\}\n\{'indices': \[0, 2\], .*\n\{'indices': \[0, 2, 3\], .*\nNone\n1\n0\n\[0\]\n`,
		`\{"queued":1,"generation":1,"waiting":1\}\n\[0\.5, 0\.25, 0, -0\.125\]\n`, `best f \d\.\d{3}; best feasible f \d\.\d{3}, g -\d\.\d{3}\n`} {
		if !regexp.MustCompile(want).Match(out) {
			t.Errorf("the walkthrough's output lacks %s:\n%s", want, out)
		}
	}
}
