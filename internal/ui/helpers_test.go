package ui_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"math"
	"math/bits"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/selfcma/selfcma/internal/ui"
)

// fakeSource is a Source over maps, safe for concurrent use.
type fakeSource struct {
	mu       sync.Mutex
	sessions map[string]ui.Detail
	history  map[string][]ui.Point
	err      error // returned by every method when set
}

func newFake() *fakeSource {
	return &fakeSource{sessions: map[string]ui.Detail{}, history: map[string][]ui.Point{}}
}

func (f *fakeSource) put(d ui.Detail, pts []ui.Point) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sessions[d.ID], f.history[d.ID] = d, pts
}

func (f *fakeSource) ListSessions(ctx context.Context, q ui.ListQuery) ([]ui.Summary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	var out []ui.Summary
	for _, d := range f.sessions {
		if (q.Before == "" || d.ID < q.Before) && q.Match(d.Summary) {
			out = append(out, d.Summary)
		}
	}
	slices.SortFunc(out, func(a, b ui.Summary) int { return strings.Compare(b.ID, a.ID) })
	return out[:min(q.Limit, len(out))], nil
}

func (f *fakeSource) Session(ctx context.Context, id string) (ui.Detail, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return ui.Detail{}, f.err
	}
	d, ok := f.sessions[id]
	if !ok {
		return ui.Detail{}, fmt.Errorf("session %q: %w", id, ui.ErrNotFound)
	}
	return d, nil
}

func (f *fakeSource) History(ctx context.Context, id string) ([]ui.Point, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	pts, ok := f.history[id]
	if !ok {
		return nil, fmt.Errorf("session %q: %w", id, ui.ErrNotFound)
	}
	return pts, nil
}

// Defaults of n = 10, λ = 100 and of λ doubled twice, roughly.
var (
	defaults0 = ui.Hyper{C1: 0.0096, CMu: 0.16, Cc: 0.29}
	defaults1 = ui.Hyper{C1: 0.0070, CMu: 0.21, Cc: 0.29}
	defaults2 = ui.Hyper{C1: 0.0048, CMu: 0.27, Cc: 0.29}
)

// dim is the dimension of the sessions of the tests.
const dim = 10

// keepsCoordinates is the history's rule (session.HistoryKeepsCoordinates):
// every generation below 1000, then ever sparser.
func keepsCoordinates(g int) bool {
	if g < 1000 {
		return true
	}
	k := bits.Len(uint(g/1000)) - 1
	return g%(1<<(k+1)) == 0
}

// history makes gens points of a converging run with λ = 100 in dimension
// dim, restarting (λ doubled) after each generation in restartAfter, with
// the distribution's values where the history keeps them.
func history(gens int, restartAfter ...int) []ui.Point {
	pts := make([]ui.Point, gens)
	run, lambda, evals, best := 0, 100, 0, math.Inf(1)
	for g := range pts {
		evals += lambda
		f := 100 * math.Exp(-float64(g)/20) * (1 + 0.3*math.Sin(float64(g)))
		best = math.Min(best, f)
		sigma, ratio := math.Exp(-float64(g)/40), 1+float64(g%100)
		pts[g] = ui.Point{
			Generation: g, Run: run, Lambda: lambda, Evaluations: evals,
			Best: f, Median: 3 * f, BestSoFar: best,
			Sigma: sigma, AxisRatio: ratio,
			C1: 0.01 * (1.5 + math.Sin(float64(g)/7)), CMu: 0.3 + 0.1*math.Cos(float64(g)/11), Cc: 0.4,
			OverallStep: sigma * ratio,
		}
		if keepsCoordinates(g) {
			p := &pts[g]
			p.AxisLengths, p.Stds, p.Mean = make([]float64, dim), make([]float64, dim), make([]float64, dim)
			for i := range dim {
				p.AxisLengths[i] = 1 + (ratio-1)*float64(i)/(dim-1)
				p.Stds[i] = sigma * (1 + float64(i)/3)
				p.Mean[i] = (float64(i)-4.5)*math.Exp(-float64(g)/200) + float64(i)/10
			}
		}
		for _, r := range restartAfter {
			if g == r {
				run++
				lambda *= 2
			}
		}
	}
	return pts
}

// detail makes a session named name that has the history pts.
func detail(id, name, status string, pts []ui.Point, created time.Time) ui.Detail {
	d := ui.Detail{
		Summary: ui.Summary{
			ID: id, Name: name, Algorithm: "self-cma-es", Status: status,
			CreatedAt: created, UpdatedAt: created.Add(time.Minute),
		},
		Dimension: dim, PopulationSize: 100, Seed: 42, CoordinateLimit: 100,
		Mean: []float64{1, 2, 3}, Sigma: 0.5,
		Hyper: ui.Hyper{C1: 0.02, CMu: 0.3, Cc: 0.4}, Defaults: defaults0,
	}
	if n := len(pts); n > 0 {
		last := pts[n-1]
		d.Generation, d.Evaluations = last.Generation+1, last.Evaluations
		f := last.BestSoFar
		d.BestF = &f
		d.BestX = make([]float64, 12)
		for i := range d.BestX {
			d.BestX[i] = float64(i) / 3
		}
		d.PopulationSize, d.Restarts = last.Lambda, last.Run
	}
	if status == ui.StatusStopped {
		d.StopReasons = []ui.StopReason{{Name: "tolfun", Value: 1e-12}, {Name: "maxevals", Value: 5000}}
	}
	return d
}

// server mounts the pages at /ui as the service does.
func server(t testing.TB, src ui.Source, opt ui.Options) *httptest.Server {
	t.Helper()
	r := chi.NewRouter()
	r.Mount(ui.Prefix, ui.Handler(src, opt))
	s := httptest.NewServer(r)
	t.Cleanup(s.Close)
	return s
}

// noRedirects is a client that returns redirects instead of following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// get fetches url with the headers h (name, value, ...) and returns the
// response and its body.
func get(t testing.TB, url string, h ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Set(h[i], h[i+1])
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

var (
	seriesRE  = regexp.MustCompile(`<(?:polyline|path)[^>]* data-series="([^"]+)" data-points="(\d+)"`)
	svgRE     = regexp.MustCompile(`<svg [^>]*data-plot="([^"]+)"`)
	legendRE  = regexp.MustCompile(`<g class="legend-entry" data-series="([^"]+)">`)
	restartRE = regexp.MustCompile(`<line class="restart" data-run="(\d+)"`)
	labelRE   = regexp.MustCompile(`<g data-series="([^"]+)"><polyline[^>]*(?:/>|></polyline>)<text class="end-label"[^>]*>([^<]*)</text>`)
	emptyRE   = regexp.MustCompile(`<text class="empty"[^>]*>([^<]*)</text>`)
	endRE     = regexp.MustCompile(`<g data-series="([^"]+)"><polyline [^>]*points="[\d.]+,([\d.]+) [\d.]+,[\d.]+ [\d.]+,([\d.]+)"(?:/>|></polyline>)` +
		`<text class="end-label"[^>]*>([^<]*)</text><title>([^<]*)</title></g>`)
	frameRE   = regexp.MustCompile(`<rect class="frame" x="([\d.]+)" y="[\d.]+" width="([\d.]+)"`)
	pointsRE  = regexp.MustCompile(`<polyline data-series="([^"]+)"[^>]* points="([^"]*)"`)
	xticksRE  = regexp.MustCompile(`<g class="xticks"[^>]*>(.*?)</g>`)
	xtickRE   = regexp.MustCompile(`<line [^>]*x1="([\d.]+)"`)
	endTickRE = regexp.MustCompile(`<g class="end-tick" data-series="([^"]+)"><title>([^<]*)</title><line [^>]*y1="([\d.]+)"`)
)

// endLabel is a line's end right of a plot: labelled, or a tick with a
// title.
type endLabel struct {
	series, text, title string
	lineY, labelY       float64 // labelY: of the leader's end at the label
	labeled             bool
}

// plot is what a page shows of one plot.
type plot struct {
	points   map[string]int     // data-points by data-series
	legend   []string           // data-series of the legend entries, in order
	restarts int                // restart markers
	labels   map[string]string  // end labels by data-series
	empty    string             // the text of an empty plot
	ends     []endLabel         // labelled first, each kind from the top down
	right    float64            // the right edge of the plot area
	lastX    map[string]float64 // the x of each line's last point
	xticks   []float64          // the x of the x axis's ticks
}

// plots parses the plots of a session page, by data-plot.
func plots(t testing.TB, page string) (order []string, by map[string]plot) {
	t.Helper()
	by = map[string]plot{}
	locs := svgRE.FindAllStringSubmatchIndex(page, -1)
	for i, loc := range locs {
		name := page[loc[2]:loc[3]]
		end := len(page)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		body := page[loc[0]:end]
		if j := regexp.MustCompile(`</svg>`).FindStringIndex(body); j != nil {
			body = body[:j[1]]
		}
		p := plot{points: map[string]int{}}
		for _, m := range seriesRE.FindAllStringSubmatch(body, -1) {
			n, _ := strconv.Atoi(m[2])
			p.points[m[1]] = n
		}
		for _, m := range legendRE.FindAllStringSubmatch(body, -1) {
			p.legend = append(p.legend, m[1])
		}
		p.restarts = len(restartRE.FindAllString(body, -1))
		p.labels = map[string]string{}
		for _, m := range labelRE.FindAllStringSubmatch(body, -1) {
			p.labels[m[1]] = m[2]
		}
		for _, m := range endRE.FindAllStringSubmatch(body, -1) {
			y0, _ := strconv.ParseFloat(m[2], 64)
			y1, _ := strconv.ParseFloat(m[3], 64)
			p.ends = append(p.ends, endLabel{series: m[1], lineY: y0, labelY: y1, text: m[4], title: html.UnescapeString(m[5]), labeled: true})
		}
		for _, m := range endTickRE.FindAllStringSubmatch(body, -1) {
			y, _ := strconv.ParseFloat(m[3], 64)
			p.ends = append(p.ends, endLabel{series: m[1], lineY: y, title: html.UnescapeString(m[2])})
		}
		if m := frameRE.FindStringSubmatch(body); m != nil {
			x, _ := strconv.ParseFloat(m[1], 64)
			w, _ := strconv.ParseFloat(m[2], 64)
			p.right = x + w
		}
		p.lastX = map[string]float64{}
		for _, m := range pointsRE.FindAllStringSubmatch(body, -1) {
			if i := strings.LastIndexByte(m[2], ' '); m[2] != "" {
				x, _, _ := strings.Cut(m[2][i+1:], ",")
				p.lastX[m[1]], _ = strconv.ParseFloat(x, 64)
			}
		}
		if m := xticksRE.FindStringSubmatch(body); m != nil {
			for _, t := range xtickRE.FindAllStringSubmatch(m[1], -1) {
				x, _ := strconv.ParseFloat(t[1], 64)
				p.xticks = append(p.xticks, x)
			}
		}
		if m := emptyRE.FindStringSubmatch(body); m != nil {
			p.empty = html.UnescapeString(m[1])
		}
		order = append(order, name)
		by[name] = p
	}
	return order, by
}

// checkEndLabels checks the ends of the lines of the coordinates (series
// prefix0, prefix1, ...) of plot p: each has one, with its title; the
// labels are the coordinates' indices, none overlaps another (11 units
// apart, for a font of 10), each at most 11 units below its line's end;
// the line that ends highest is labelled.
func checkEndLabels(t testing.TB, name string, p plot, prefix string, n int) {
	t.Helper()
	const gap = 11
	seen := map[string]bool{}
	top, topLabeled := math.Inf(1), false
	prev := math.Inf(-1)
	for _, e := range p.ends {
		idx, ok := strings.CutPrefix(e.series, prefix)
		if !ok || seen[e.series] {
			t.Errorf("plot %s: end of %q (a second one, or of no coordinate)", name, e.series)
			continue
		}
		seen[e.series] = true
		if !strings.Contains(e.title, "coordinate "+idx+" ") {
			t.Errorf("plot %s, %s: title %q", name, e.series, e.title)
		}
		if e.lineY < top {
			top, topLabeled = e.lineY, e.labeled
		}
		if !e.labeled {
			continue
		}
		if e.text != idx {
			t.Errorf("plot %s, %s: label %q, want %s", name, e.series, e.text, idx)
		}
		if d := e.labelY - e.lineY; d < -0.1 || d > gap+0.1 {
			t.Errorf("plot %s, %s: label %.1f below its line's end", name, e.series, d)
		}
		if e.labelY-prev < gap-0.1 {
			t.Errorf("plot %s, %s: label at %.1f overlaps the one at %.1f", name, e.series, e.labelY, prev)
		}
		prev = e.labelY
	}
	if len(seen) != n {
		t.Errorf("plot %s: ends of %d lines, want %d", name, len(seen), n)
	}
	if n > 0 && !topLabeled {
		t.Errorf("plot %s: the line that ends highest is not labelled", name)
	}
}

// checkXFitted checks that the x axis of plot p ends where its data ends:
// the last point of the line that reaches furthest is at the right edge
// of the plot area (within a pixel), and the last tick lies within one
// tick's spacing of the edge.
func checkXFitted(t testing.TB, name string, p plot) {
	t.Helper()
	last := math.Inf(-1)
	for _, x := range p.lastX {
		last = math.Max(last, x)
	}
	if math.Abs(last-p.right) > 1 {
		t.Errorf("plot %s: the data end at x = %.1f, the x axis at %.1f", name, last, p.right)
	}
	if n := len(p.xticks); n < 2 || p.right-p.xticks[n-1] > p.xticks[1]-p.xticks[0]+0.1 || p.xticks[n-1] > p.right+0.1 {
		t.Errorf("plot %s: x ticks at %v, the axis ends at %.1f", name, p.xticks, p.right)
	}
}
