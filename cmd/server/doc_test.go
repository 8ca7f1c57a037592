package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docSection returns the text of a second-level section (heading "## ...")
// of a Markdown file of the repository, up to the next one.
func docSection(t *testing.T, file, heading string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", file))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no %q", file, heading)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// docBlocks returns the ```sh blocks of a section of a Markdown file of the
// repository (see docSection), in order.
func docBlocks(t *testing.T, file, heading string) []string {
	t.Helper()
	rest := docSection(t, file, heading)
	var blocks []string
	for {
		_, after, ok := strings.Cut(rest, "```sh\n")
		if !ok {
			return blocks
		}
		block, tail, ok := strings.Cut(after, "```\n")
		if !ok {
			t.Fatalf("%s: an unterminated ```sh block in %q", file, heading)
		}
		blocks = append(blocks, block)
		rest = tail
	}
}
