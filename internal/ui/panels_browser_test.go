package ui_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
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
	srv := httptest.NewServer(measured(r))
	t.Cleanup(srv.Close)

	ctx := context.Background()
	seed := uint64(17)
	s, err := m.Create(ctx, session.CreateParams{Name: "rosenbrock 10-D", X0: make([]float64, dim), Sigma0: 0.5,
		Algorithm: session.AlgorithmSelfCMAES, Seed: &seed, Active: new(false), PopulationSize: 100, // the self-adapted λ the panels were made for
		SNR:         new(false),                                       // h_t, not the signal-to-noise rule
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
	checkEndLabels(t, "stds", by["stds"], "std-", dim)
	checkEndLabels(t, "mean", by["mean"], "mean-", dim)
	for _, name := range plotOrder {
		checkXFitted(t, name, by[name])
	}
	// pycma's 2×2 grid on a wide screen, one column on a narrow one.
	wide := panelBoxes(t, chromium(t, bin, "--window-size=1600,1000", "--dump-dom", pageURL))
	t.Logf("at 1600 px: %v", wide)
	checkGrid(t, wide, 1600, 2)
	narrow := panelBoxes(t, chromium(t, bin, "--window-size=700,1000", "--dump-dom", pageURL))
	t.Logf("at 700 px: %v", narrow)
	checkGrid(t, narrow, 700, 1)
	if strings.Contains(dom, `data-series="sigma"`) || strings.Contains(dom, `id="distribution-note"`) {
		t.Error("the page plots σ alone, or says the history lacks the distribution")
	}
	if noted := strings.Contains(dom, `id="axes-note"`); noted != (jumpAxis > 2) {
		t.Errorf("the note on the axis lengths' jump: shown %v, the largest jump %.2f decades", noted, jumpAxis)
	}

	file := filepath.Join(t.TempDir(), "panels.png")
	chromium(t, bin, "--screenshot="+file, "--window-size=1920,1600", "--hide-scrollbars", pageURL)
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

// measured wraps a server's handler: into a session's page it writes a
// script, under the nonce of the page's own Content-Security-Policy, that
// writes the bounding box of each figure.panel into its data-box
// attribute (left,top,width,height in CSS pixels), so that Chromium's
// --dump-dom shows the layout.
func measured(h http.Handler) http.Handler {
	const script = `<script nonce="%s">document.querySelectorAll("figure.panel").forEach(function (f) {
  var r = f.getBoundingClientRect();
  f.setAttribute("data-box", [r.left, r.top, r.width, r.height].map(Math.round).join(","));
});</script></body>`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		csp := rec.Header().Get("Content-Security-Policy")
		if i := strings.Index(csp, "'nonce-"); i >= 0 && strings.HasPrefix(r.URL.Path, "/ui/sessions/") {
			nonce := csp[i+7:]
			nonce = nonce[:strings.IndexByte(nonce, '\'')]
			body = bytes.Replace(body, []byte("</body>"), []byte(fmt.Sprintf(script, nonce)), 1)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		w.Write(body)
	})
}

// box is a panel's place on the page, in CSS pixels.
type box struct{ left, top, width, height int }

var boxRE = regexp.MustCompile(`<figure class="panel" id="panel-([a-z]+)" data-box="(-?\d+),(-?\d+),(\d+),(\d+)"`)

// panelBoxes returns the boxes of a page's panels by plot, as measured
// writes them.
func panelBoxes(t *testing.T, dom string) map[string]box {
	t.Helper()
	out := map[string]box{}
	for _, m := range boxRE.FindAllStringSubmatch(dom, -1) {
		var v [4]int
		for i := range v {
			v[i], _ = strconv.Atoi(m[2+i])
		}
		out[m[1]] = box{v[0], v[1], v[2], v[3]}
	}
	if len(out) != len(plotOrder) {
		t.Fatalf("boxes of the panels %v, want %v", out, plotOrder)
	}
	return out
}

// checkGrid checks the panels of a page of width px: pycma's four in cols
// columns, in the order fitness, mean, axes, stds (row by row), as wide
// as the columns allow, the rates below them.
func checkGrid(t *testing.T, b map[string]box, px, cols int) {
	t.Helper()
	four := []string{"fitness", "mean", "axes", "stds"}
	near := func(a, b int) bool { return a-b <= 2 && b-a <= 2 }
	for i, name := range four {
		p, first := b[name], b[four[i-i%cols]] // first: of its row
		if !near(p.top, first.top) {
			t.Errorf("%d columns: %s at top %d, the first of its row at %d", cols, name, p.top, first.top)
		}
		if col := i % cols; col > 0 && p.left < first.left+first.width {
			t.Errorf("%d columns: %s at left %d overlaps %s", cols, name, p.left, four[i-col])
		}
		if i >= cols {
			above := b[four[i-cols]]
			if !near(p.left, above.left) || p.top < above.top+above.height {
				t.Errorf("%d columns: %s %v is not below %s %v", cols, name, p, four[i-cols], above)
			}
		}
		// The columns share the page's width.
		if w := float64(p.width) * float64(cols) / float64(px); w < 0.6 || w > 1 {
			t.Errorf("%d columns: %s is %d px wide on a page of %d", cols, name, p.width, px)
		}
	}
	if r, last := b["rates"], b["stds"]; r.top < last.top+last.height {
		t.Errorf("the rates %v are not below the four panels (%v)", r, last)
	}
}
