// Command testreport reads the output of go test -json and prints it as
// go test prints without -json: the output of the tests that failed (or
// were still running when their package failed, as when the test binary
// timed out), the packages' ok and FAIL lines, build errors; lines that
// are not JSON pass through unchanged. It lists the tests that were
// skipped, with the reason each gave, in the file of -skips (appended to),
// or at the end of its output without -skips. It exits 1 if a test or a
// build failed.
//
//	go test -json ./... 2>&1 | go run ./internal/tools/testreport -skips skips.txt
//
// make test uses it so that it can name every skipped test at the end.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
)

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action      string
	Package     string
	ImportPath  string // build-output, build-fail
	Test        string
	Output      string
	FailedBuild string
}

func main() {
	skips := flag.String("skips", "", "append the skipped tests to this file instead of printing them at the end")
	flag.Parse()
	r := newReport(os.Stdout)
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadString('\n')
		if line != "" {
			r.line(line)
		}
		if err != nil {
			break
		}
	}
	r.finish()
	if *skips == "" {
		if len(r.skipped) > 0 {
			fmt.Fprintf(os.Stdout, "\n%d tests skipped:\n", len(r.skipped))
			for _, s := range r.skipped {
				fmt.Fprintln(os.Stdout, "  "+s)
			}
		}
	} else if len(r.skipped) > 0 {
		f, err := os.OpenFile(*skips, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			for _, s := range r.skipped {
				fmt.Fprintln(f, s)
			}
			err = f.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", err)
			os.Exit(2)
		}
	}
	if r.failed {
		os.Exit(1)
	}
}

// report turns events into go test's plain output.
type report struct {
	w       io.Writer
	out     map[string][]string // output of the tests under way, by package and test
	pkgOut  map[string][]string // the packages' own output, by package
	skipped []string            // "package Test: reason"
	failed  bool
}

func newReport(w io.Writer) *report {
	return &report{w: w, out: map[string][]string{}, pkgOut: map[string][]string{}}
}

func (r *report) line(line string) {
	var e event
	if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil {
		io.WriteString(r.w, line) // not an event: stderr of go test, say
		if strings.HasPrefix(line, "FAIL") {
			r.failed = true
		}
		return
	}
	switch e.Action {
	case "build-output":
		io.WriteString(r.w, e.Output)
		return
	case "build-fail":
		r.failed = true
		return
	}
	if e.Test == "" { // the package's own lines: ok, FAIL, PASS, a panic outside a test
		switch e.Action {
		case "output": // held until the package ends, after its tests' output
			if e.Output != "PASS\n" { // -json's -v; go test without it says ok
				r.pkgOut[e.Package] = append(r.pkgOut[e.Package], e.Output)
			}
		case "fail":
			r.failed = true
			r.flushPackage(e.Package) // the tests still running when it failed
		case "pass", "skip":
			r.dropPackage(e.Package)
		}
		return
	}
	key := e.Package + "\x00" + e.Test
	switch e.Action {
	case "output":
		if !isFrame(e.Output) {
			r.out[key] = append(r.out[key], e.Output)
		}
	case "fail":
		r.failed = true
		io.WriteString(r.w, "--- FAIL: "+e.Test+" ("+e.Package+")\n")
		for _, o := range r.out[key] {
			io.WriteString(r.w, o)
		}
		delete(r.out, key)
	case "skip":
		r.skipped = append(r.skipped, e.Package+" "+e.Test+": "+reason(r.out[key]))
		delete(r.out, key)
	case "pass":
		delete(r.out, key)
	}
}

// isFrame is a line go test -v prints around a test's own output:
// === RUN, --- PASS and the like.
func isFrame(s string) bool {
	t := strings.TrimSpace(s)
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- PASS", "--- FAIL", "--- SKIP"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// reason is a skipped test's output on one line.
func reason(out []string) string {
	var parts []string
	for _, o := range out {
		if o = strings.TrimSpace(o); o != "" {
			parts = append(parts, o)
		}
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

// finish prints what is held of packages that did not end (go test was
// killed, say).
func (r *report) finish() {
	for _, pkg := range slices.Sorted(maps.Keys(r.pkgOut)) {
		r.flushPackage(pkg)
	}
}

// flushPackage prints the output of pkg's tests that did not end, then
// pkg's own.
func (r *report) flushPackage(pkg string) {
	defer r.dropPackage(pkg)
	for _, key := range slices.Sorted(maps.Keys(r.out)) {
		p, test, _ := strings.Cut(key, "\x00")
		if p != pkg {
			continue
		}
		io.WriteString(r.w, "--- unfinished: "+test+" ("+pkg+")\n")
		for _, o := range r.out[key] {
			io.WriteString(r.w, o)
		}
		delete(r.out, key)
	}
}

// dropPackage prints pkg's own output and forgets its tests'.
func (r *report) dropPackage(pkg string) {
	for _, o := range r.pkgOut[pkg] {
		io.WriteString(r.w, o)
	}
	delete(r.pkgOut, pkg)
	for key := range r.out {
		if p, _, _ := strings.Cut(key, "\x00"); p == pkg {
			delete(r.out, key)
		}
	}
}
