package ui_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/ui"
)

// TestMixedBest: a mixed session's page shows its best z and c beside its
// best x; another session's page has neither.
func TestMixedBest(t *testing.T) {
	pts := history(20)
	src := newFake()
	d := detail("m1", "mixed", "running", pts, t0)
	d.BestZ, d.BestC = []float64{0.25, 3}, []float64{0, 4}
	src.put(d, pts)
	src.put(detail("p1", "plain", "running", pts, t0), pts)
	s := server(t, src, ui.Options{})
	_, body := get(t, s.URL+"/ui/sessions/m1")
	for _, want := range []string{`id="best-z">[0.25, 3]`, `id="best-c">[0, 4]`} {
		if !strings.Contains(body, want) {
			t.Errorf("the mixed session's page has no %s", want)
		}
	}
	resp, body := get(t, s.URL+"/ui/sessions/p1")
	if resp.StatusCode != http.StatusOK || strings.Contains(body, "best-z") || strings.Contains(body, "best-c") {
		t.Errorf("a continuous session's page: %d, with best z or c", resp.StatusCode)
	}
}
