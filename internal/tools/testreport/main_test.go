package main

import (
	"strings"
	"testing"
)

// A run of two packages, one with a passing, a skipped and a failing test,
// one that timed out with a test still running, and a build failure.
func TestReport(t *testing.T) {
	in := `{"Action":"start","Package":"a"}
{"Action":"run","Package":"a","Test":"TestOK"}
{"Action":"output","Package":"a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"a","Test":"TestOK","Output":"    a_test.go:5: quiet\n"}
{"Action":"output","Package":"a","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}
{"Action":"pass","Package":"a","Test":"TestOK"}
{"Action":"run","Package":"a","Test":"TestSkip"}
{"Action":"output","Package":"a","Test":"TestSkip","Output":"=== RUN   TestSkip\n"}
{"Action":"output","Package":"a","Test":"TestSkip","Output":"    a_test.go:9: SKIP: no chromium\n"}
{"Action":"output","Package":"a","Test":"TestSkip","Output":"--- SKIP: TestSkip (0.00s)\n"}
{"Action":"skip","Package":"a","Test":"TestSkip"}
{"Action":"run","Package":"a","Test":"TestBad/sub"}
{"Action":"output","Package":"a","Test":"TestBad/sub","Output":"    a_test.go:12: got 1, want 2\n"}
{"Action":"output","Package":"a","Test":"TestBad/sub","Output":"    --- FAIL: TestBad/sub (0.00s)\n"}
{"Action":"fail","Package":"a","Test":"TestBad/sub"}
{"Action":"output","Package":"a","Output":"FAIL\n"}
{"Action":"output","Package":"a","Output":"FAIL\ta\t0.01s\n"}
{"Action":"fail","Package":"a"}
{"Action":"run","Package":"b","Test":"TestSlow"}
{"Action":"output","Package":"b","Test":"TestSlow","Output":"panic: test timed out after 10m0s\n"}
{"Action":"output","Package":"b","Output":"FAIL\tb\t600.01s\n"}
{"Action":"fail","Package":"b"}
{"ImportPath":"c","Action":"build-output","Output":"c/c.go:3:1: syntax error\n"}
{"ImportPath":"c","Action":"build-fail"}
{"Action":"output","Package":"d","Output":"PASS\n"}
{"Action":"output","Package":"d","Output":"ok  \td\t0.02s\n"}
{"Action":"pass","Package":"d"}
not json
`
	var out strings.Builder
	r := newReport(&out)
	for l := range strings.Lines(in) {
		r.line(l)
	}
	r.finish()
	want := `--- FAIL: TestBad/sub (a)
    a_test.go:12: got 1, want 2
FAIL
FAIL	a	0.01s
--- unfinished: TestSlow (b)
panic: test timed out after 10m0s
FAIL	b	600.01s
c/c.go:3:1: syntax error
ok  	d	0.02s
not json
`
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	if !r.failed {
		t.Error("not failed")
	}
	if len(r.skipped) != 1 || r.skipped[0] != "a TestSkip: a_test.go:9: SKIP: no chromium" {
		t.Errorf("skipped %q", r.skipped)
	}
}
