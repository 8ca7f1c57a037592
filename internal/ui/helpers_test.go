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

func (f *fakeSource) ListSessions(ctx context.Context, after string, limit int) ([]ui.Summary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	var out []ui.Summary
	for _, d := range f.sessions {
		if d.ID > after {
			out = append(out, d.Summary)
		}
	}
	slices.SortFunc(out, func(a, b ui.Summary) int { return strings.Compare(a.ID, b.ID) })
	return out[:min(limit, len(out))], nil
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
)

// plot is what a page shows of one plot.
type plot struct {
	points   map[string]int    // data-points by data-series
	legend   []string          // data-series of the legend entries, in order
	restarts int               // restart markers
	labels   map[string]string // end labels by data-series
	empty    string            // the text of an empty plot
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
		if m := emptyRE.FindStringSubmatch(body); m != nil {
			p.empty = html.UnescapeString(m[1])
		}
		order = append(order, name)
		by[name] = p
	}
	return order, by
}
