package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const readmeSection = "## Using the service with curl"

// shellBlocks returns the ```sh blocks of the README's section.
func shellBlocks(t *testing.T) (section string, blocks []string) {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n"+readmeSection+"\n")
	if !ok {
		t.Fatalf("README.md has no %q", readmeSection)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	section = rest
	for {
		_, after, ok := strings.Cut(rest, "```sh\n")
		if !ok {
			break
		}
		block, tail, ok := strings.Cut(after, "```\n")
		if !ok {
			t.Fatal("README.md: an unterminated ```sh block")
		}
		blocks = append(blocks, block)
		rest = tail
	}
	return section, blocks
}

// The README's curl walkthrough runs, exactly as written, against a server
// started as the README says (but on a free port and a temporary file).
func TestReadmeWalkthrough(t *testing.T) {
	section, blocks := shellBlocks(t)
	if !strings.Contains(section, "    go run ./cmd/server\n") {
		t.Error("the section does not give the run command")
	}
	if len(blocks) < 3 {
		t.Fatalf("%d sh blocks in the section", len(blocks))
	}
	for _, tool := range []string{"bash", "curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	base, _, stop := startRun(t, []string{"-addr", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "readme.db")}, nil)
	defer stop()
	cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+strings.Join(blocks, "\n"))
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "URL="+base)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the walkthrough failed: %v\n%s", err, out)
	}
	for _, want := range []string{`session \S+\n`, `'f': `, `'c1': `, `\n29,0,\d+,\d+,`, ` selfcma-backup\.db\n`, `\nselfcma_store_writes_total \d+\n`, `"code":"conflict"`,
		`\{'indices': \[2\], 'fitness': \[\S+\]\}\n\{'indices': \[0, 2\], .*\n\{'indices': \[0, 2, 3\], .*\nNone\n1\n0\n\[0\]\n`,
		`\{"queued":1,"generation":1,"waiting":1\}\n\[0\.5, 0\.25, 0, -0\.125\]\n`} {
		if !regexp.MustCompile(want).Match(out) {
			t.Errorf("the walkthrough's output lacks %s:\n%s", want, out)
		}
	}
}
