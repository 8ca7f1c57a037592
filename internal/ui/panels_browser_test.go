package ui_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/httpapi"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
	"github.com/selfcma/selfcma/internal/testfn"
	"github.com/selfcma/selfcma/internal/ui"
	"github.com/selfcma/selfcma/internal/ui/sessionsource"
)

// TestBrowserPanels runs self-CMA-ES on the 10-D Rosenbrock function to
// convergence (the run of issue 17, whose σ jumps by decades where the
// safeguard moves scale between σ and C) and looks at its page in headless
// Chromium: pycma's four panels, each coordinate's line in them, the
// standard deviations and the mean labelled by coordinate; then a
// screenshot, in which every coordinate's color shows.
//
// SELFCMA_UI_SCREENSHOT_PANELS=file.png keeps a copy of the screenshot.
func TestBrowserPanels(t *testing.T) {
	bin := needChromium(t)

	st, err := bolt.Open(filepath.Join(t.TempDir(), "panels.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m := session.NewManager(st, session.Options{})
	r := httpapi.New(httpapi.Config{Manager: m})
	r.Mount(ui.Prefix, ui.Handler(sessionsource.New(m), ui.Options{}))
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)

	ctx := context.Background()
	seed := uint64(17)
	s, err := m.Create(ctx, session.CreateParams{Name: "rosenbrock 10-D", X0: make([]float64, dim), Sigma0: 0.5,
		Algorithm: session.AlgorithmSelfCMAES, Seed: &seed, Active: new(false), PopulationSize: 100, // the self-adapted λ the panels were made for
		Restarts:    session.Restarts{Strategy: session.RestartsNone}, // one run, as the panels were made for (not the defaults)
		Termination: session.Termination{MaxEvaluations: 200_000}})
	if err != nil {
		t.Fatal(err)
	}
	for s.Status == session.StatusRunning {
		b, err := m.Ask(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		f := make([]float64, len(b.Candidates))
		for k, x := range b.Candidates {
			f[k] = testfn.Rosenbrock(x)
		}
		if s, err = m.Tell(ctx, s.ID, session.TellParams{Generation: b.Generation, Fitness: f}); err != nil {
			t.Fatal(err)
		}
	}
	if s.Best == nil || !(s.Best.F < 1e-8) || s.Generation >= session.HistoryDenseGenerations {
		t.Fatalf("stopped after %d generations at %+v, want convergence within %d", s.Generation, s.Best, session.HistoryDenseGenerations)
	}
	hist, err := m.History(ctx, s.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The largest change of σ, of σ·√λ_max(C) and of √λ_max(C) from one
	// generation to the next, in decades: σ·√λ_max(C) changes smoothly
	// even where the scale moves between σ and C.
	var jumpSigma, jumpStep, jumpAxis float64
	for k := 1; k < len(hist); k++ {
		a, b := hist[k-1], hist[k]
		jumpSigma = math.Max(jumpSigma, math.Abs(math.Log10(b.Sigma/a.Sigma)))
		jumpStep = math.Max(jumpStep, math.Abs(math.Log10(b.OverallStep/a.OverallStep)))
		jumpAxis = math.Max(jumpAxis, math.Abs(math.Log10(b.AxisLengths[dim-1]/a.AxisLengths[dim-1])))
	}
	t.Logf("%d generations to f = %.3g; largest change in one generation: σ %.2f decades, σ·√λ_max(C) %.2f, √λ_max(C) %.2f",
		s.Generation, s.Best.F, jumpSigma, jumpStep, jumpAxis)
	if jumpStep >= 1 {
		t.Errorf("σ·√λ_max(C) changed by %.2f decades in one generation", jumpStep)
	}
	pageURL := srv.URL + "/ui/sessions/" + s.ID
	dom := chromium(t, bin, "--dump-dom", pageURL)
	order, by := plots(t, dom)
	if strings.Join(order, ",") != strings.Join(plotOrder, ",") {
		t.Fatalf("plots %v, want %v", order, plotOrder)
	}
	for name, series := range wantSeries {
		for _, sr := range series {
			if n := by[name].points[sr]; n != s.Generation {
				t.Errorf("plot %s, series %s: %d points, want %d (one per generation)", name, sr, n, s.Generation)
			}
		}
	}
	for _, name := range []string{"stds", "mean"} {
		for i, sr := range wantSeries[name] {
			if l := by[name].labels[sr]; l != strconv.Itoa(i) {
				t.Errorf("plot %s, series %s: end label %q, want %d", name, sr, l, i)
			}
		}
	}
	if strings.Contains(dom, `data-series="sigma"`) || strings.Contains(dom, `id="distribution-note"`) {
		t.Error("the page plots σ alone, or says the history lacks the distribution")
	}
	if noted := strings.Contains(dom, `id="axes-note"`); noted != (jumpAxis > 2) {
		t.Errorf("the note on the axis lengths' jump: shown %v, the largest jump %.2f decades", noted, jumpAxis)
	}

	file := filepath.Join(t.TempDir(), "panels.png")
	chromium(t, bin, "--screenshot="+file, "--window-size=1280,2300", "--hide-scrollbars", pageURL)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if keep := os.Getenv("SELFCMA_UI_SCREENSHOT_PANELS"); keep != "" {
		if err := os.WriteFile(keep, b, 0o644); err != nil {
			t.Error(err)
		}
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	// Each coordinate's color is drawn (matplotlib's ten, as pycma's).
	for i, c := range []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"} {
		if n := pixelsOf(img, c); n < 200 {
			t.Errorf("coordinate %d: %d pixels of its color %s in the screenshot", i, n, c)
		}
	}
}

// pixelsOf counts the pixels of img within 12 of the color hex in each
// channel.
func pixelsOf(img image.Image, hex string) int {
	v, _ := strconv.ParseUint(hex[1:], 16, 32)
	want := [3]int{int(v >> 16), int(v >> 8 & 0xff), int(v & 0xff)}
	n := 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			got := [3]int{int(r >> 8), int(g >> 8), int(b >> 8)}
			ok := true
			for k := range got {
				if d := got[k] - want[k]; d > 12 || d < -12 {
					ok = false
				}
			}
			if ok {
				n++
			}
		}
	}
	return n
}
