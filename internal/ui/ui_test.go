package ui_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/selfcma/selfcma/internal/ui"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func TestListPage(t *testing.T) {
	src := newFake()
	src.put(detail("aaa", "oldest", ui.StatusStopped, history(5), t0), history(5))
	src.put(detail("ccc", "newest", ui.StatusRunning, history(3), t0.Add(2*time.Hour)), history(3))
	src.put(detail("bbb", "", ui.StatusRunning, nil, t0.Add(time.Hour)), nil)
	s := server(t, src, ui.Options{BackupAvailable: true})

	resp, body := get(t, s.URL+"/ui/")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	var order []int
	for _, id := range []string{"aaa", "bbb", "ccc"} {
		i := strings.Index(body, `<a class="session" href="/ui/sessions/`+id+`">`)
		if i < 0 {
			t.Fatalf("no link to session %s in\n%s", id, body)
		}
		order = append(order, i)
	}
	if !slices.IsSortedFunc(order, func(a, b int) int { return b - a }) {
		t.Errorf("sessions not newest first: positions %v of aaa, bbb, ccc", order)
	}
	for _, want := range []string{"newest", "oldest", "self-cma-es", `<span class="badge stopped">stopped</span>`, "2025-03-01 12:01:00 UTC", `<a href="/v1/backup" download="selfcma-backup.db">`, `<a href="/openapi.yaml">`} {
		if !strings.Contains(body, want) {
			t.Errorf("list lacks %q", want)
		}
	}
	if strings.Contains(body, "<script") {
		t.Error("the list has a script")
	}

	if strings.Contains(body, `class="next"`) {
		t.Error("a link to a next page after every session")
	}
	// A store that makes no backups (PostgreSQL): no link to a 501.
	if _, body := get(t, server(t, src, ui.Options{}).URL+"/ui/"); strings.Contains(body, "/v1/backup") || !strings.Contains(body, `<a href="/openapi.yaml">`) {
		t.Error("a backup link without BackupAvailable, or no list")
	}

	// Pages of two, by the link.
	resp, body = get(t, s.URL+"/ui/?limit=2")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "/ui/sessions/bbb") || strings.Contains(body, "/ui/sessions/aaa") {
		t.Fatalf("first page of two: %d\n%s", resp.StatusCode, body)
	}
	next := regexp.MustCompile(`<a class="next" href="([^"]+)"`).FindStringSubmatch(body)
	if next == nil {
		t.Fatalf("no link to the next page in\n%s", body)
	}
	resp, body = get(t, s.URL+html.UnescapeString(next[1]))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "/ui/sessions/aaa") || strings.Contains(body, "/ui/sessions/bbb") || strings.Contains(body, `class="next"`) {
		t.Errorf("second page %s: %d\n%s", next[1], resp.StatusCode, body)
	}
	for query, field := range map[string]string{"limit=0": "limit", "status=done": "status", "name=" + strings.Repeat("x", 201): "name"} {
		if resp, body := get(t, s.URL+"/ui/?"+query); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, field) {
			t.Errorf("%.20s: status %d, want 400 naming %s:\n%s", query, resp.StatusCode, field, body)
		}
	}

	// /ui redirects to /ui/.
	resp, _ = get(t, s.URL+"/ui")
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/ui/" {
		t.Errorf("/ui: status %d Location %q, want 301 to /ui/", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// The list's filter selects by name (contained, ignoring case) and status,
// and its pages keep the filter.
func TestListPageFilter(t *testing.T) {
	src := newFake()
	for i, st := range []string{ui.StatusRunning, ui.StatusStopped, ui.StatusRunning, ui.StatusRunning, ui.StatusStopped} {
		id := fmt.Sprintf("s%d", i)
		src.put(detail(id, fmt.Sprintf("Sphere run %d", i), st, nil, t0.Add(time.Duration(i)*time.Hour)), nil)
	}
	src.put(detail("x9", "rosenbrock", ui.StatusRunning, nil, t0), nil)
	s := server(t, src, ui.Options{})
	ids := func(body string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`<tr data-id="([^"]+)">`).FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		return out
	}
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"", []string{"x9", "s4", "s3", "s2", "s1", "s0"}},
		{"name=SPHERE", []string{"s4", "s3", "s2", "s1", "s0"}},
		{"name=sphere&status=running", []string{"s3", "s2", "s0"}},
		{"status=stopped", []string{"s4", "s1"}},
		{"name=nothing", nil},
	} {
		resp, body := get(t, s.URL+"/ui/?"+c.query)
		if got := ids(body); resp.StatusCode != http.StatusOK || !slices.Equal(got, c.want) {
			t.Errorf("?%s: status %d, sessions %v, want %v", c.query, resp.StatusCode, got, c.want)
		}
		if c.want == nil && !strings.Contains(body, "No session matches the filter") {
			t.Errorf("?%s: no word of the empty result", c.query)
		}
	}
	// The form shows the filter; pages of one keep it.
	var got []string
	next := "/ui/?name=sphere&status=running&limit=1"
	for pages := 0; next != ""; pages++ {
		if pages > 5 {
			t.Fatal("more than 5 pages")
		}
		_, body := get(t, s.URL+next)
		for _, want := range []string{`name="name" value="sphere"`, `<option value="running" selected>`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the form lacks %q", next, want)
			}
		}
		got = append(got, ids(body)...)
		next = ""
		if m := regexp.MustCompile(`<a class="next" href="([^"]+)"`).FindStringSubmatch(body); m != nil {
			next = html.UnescapeString(m[1])
		}
	}
	if want := []string{"s3", "s2", "s0"}; !slices.Equal(got, want) {
		t.Errorf("pages of one: %v, want %v", got, want)
	}
}

func TestListPageEmpty(t *testing.T) {
	s := server(t, newFake(), ui.Options{})
	resp, body := get(t, s.URL+"/ui/")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "No sessions yet") {
		t.Errorf("status %d, body\n%s", resp.StatusCode, body)
	}
}

// plotOrder is the plots of a session page: pycma's four panels in the
// order of its 2×2 grid, then the learning rates.
var plotOrder = []string{"fitness", "mean", "axes", "stds", "rates"}

// wantSeries are the series of each plot, one point per generation.
var wantSeries = map[string][]string{
	"fitness": {"best-so-far", "best", "median", "overall-step", "axis-ratio"},
	"axes":    coordinateSeries("axis-"),
	"stds":    coordinateSeries("std-"),
	"mean":    coordinateSeries("mean-"),
	"rates":   {"c1", "cmu", "cc"},
}

// wantLegend are the legend entries of each plot (without restarts).
var wantLegend = map[string][]string{
	"fitness": {"best-so-far", "best", "median", "overall-step", "axis-ratio"},
	"rates":   {"c1", "cmu", "cc", "defaults"},
}

func coordinateSeries(prefix string) []string {
	out := make([]string, dim)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

func TestSessionPage(t *testing.T) {
	const gens = 50
	src := newFake()
	pts := history(gens)
	src.put(detail("s1", "sphere <10-D>", ui.StatusRunning, pts, t0), pts)
	s := server(t, src, ui.Options{PollInterval: 2 * time.Second})

	resp, body := get(t, s.URL+"/ui/sessions/s1")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200:\n%s", resp.StatusCode, body)
	}
	order, by := plots(t, body)
	if !slices.Equal(order, plotOrder) {
		t.Fatalf("plots %v, want %v", order, plotOrder)
	}
	for name, series := range wantSeries {
		p := by[name]
		for _, s := range series {
			if got := p.points[s]; got != gens {
				t.Errorf("plot %s, series %s: %d points, want %d", name, s, got, gens)
			}
		}
		if !slices.Equal(p.legend, wantLegend[name]) {
			t.Errorf("plot %s: legend %v, want %v", name, p.legend, wantLegend[name])
		}
		if p.restarts != 0 {
			t.Errorf("plot %s: %d restart markers, want 0", name, p.restarts)
		}
		checkXFitted(t, name, p)
		// The coordinates' lines are labelled by index at their right end
		// in the panels of the standard deviations and the mean, as far
		// as the labels fit.
		switch name {
		case "stds":
			checkEndLabels(t, name, p, "std-", dim)
		case "mean":
			checkEndLabels(t, name, p, "mean-", dim)
		default:
			if len(p.ends) > 0 {
				t.Errorf("plot %s: end labels %v", name, p.ends)
			}
		}
	}
	for _, d := range []string{"c1-default", "cmu-default", "cc-default"} {
		if got := by["rates"].points[d]; got != 2 {
			t.Errorf("%s: %d points, want 2 (one segment)", d, got)
		}
	}
	for _, want := range []string{
		"sphere &lt;10-D&gt;",                   // the name, escaped
		`data-poll-url="/ui/sessions/s1/plots"`, // polling
		`data-poll-ms="2000"`,
		`<script nonce=`,
		`href="/v1/sessions/s1/history"`,
		`href="/v1/sessions/s1/history?format=csv"`,
		`href="/v1/sessions/s1"`,
		`<details id="best-x-all"><summary>show all 12</summary>`, // 12 coordinates: truncated
		`<p class="vector" id="mean">[1, 2, 3]</p>`,               // 3: whole
		"0.02 (0.0096)",                                           // c1 and its default
		"axis ratio √(λ_max/λ_min)",
		"σ·√λ_max(C)",
		"best so far",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, "Stopped because") {
		t.Error("a running session shows stop reasons")
	}
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'nonce-") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	nonce := csp[strings.Index(csp, "'nonce-")+7:]
	nonce = nonce[:strings.IndexByte(nonce, '\'')]
	if !strings.Contains(body, `<script nonce="`+nonce+`">`) {
		t.Errorf("the script lacks the nonce %q of the policy", nonce)
	}
	own := strings.ReplaceAll(body, `xmlns="http://www.w3.org/2000/svg"`, "")
	for _, asset := range []string{"http://", "https://", "<link", " src="} {
		if strings.Contains(own, asset) {
			t.Errorf("the page refers to something outside (%q)", asset)
		}
	}
}

// A session that holds values told in parts says how many.
func TestSessionPageHeld(t *testing.T) {
	src := newFake()
	pts := history(30)
	d := detail("parts", "", ui.StatusRunning, pts, t0)
	src.put(d, pts)
	d.ID, d.Held = "held", 3
	src.put(d, pts)
	s := server(t, src, ui.Options{})
	want := fmt.Sprintf(`<td id="held">3 of %d told of generation %d</td>`, d.PopulationSize, d.Generation)
	if _, body := get(t, s.URL+"/ui/sessions/held"); !strings.Contains(body, want) {
		t.Errorf("page lacks %q", want)
	}
	if _, body := get(t, s.URL+"/ui/sessions/parts"); strings.Contains(body, `id="held"`) {
		t.Error("a page with nothing held shows values held")
	}
}

func TestSessionPageStopped(t *testing.T) {
	src := newFake()
	pts := history(30)
	src.put(detail("done", "", ui.StatusStopped, pts, t0), pts)
	s := server(t, src, ui.Options{})
	resp, body := get(t, s.URL+"/ui/sessions/done")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if strings.Contains(body, "<script") || strings.Contains(body, `id="live-state"`) {
		t.Error("a stopped session's page polls")
	}
	for _, want := range []string{"Stopped because", `<td class="mono">tolfun</td><td class="num">1e−12</td>`, `<td class="mono">maxevals</td><td class="num">5000</td>`, `<span class="badge stopped" id="status">stopped</span>`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if _, by := plots(t, body); len(by) != len(plotOrder) {
		t.Errorf("%d plots, want %d", len(by), len(plotOrder))
	}
}

func TestSessionPageRestarts(t *testing.T) {
	src := newFake()
	pts := history(120, 39, 79) // runs of 40 generations, λ = 100, 200, 400
	d := detail("ipop", "ipop", ui.StatusStopped, pts, t0)
	d.RunDefaults = []ui.Hyper{defaults0, defaults1, defaults2}
	d.Defaults = defaults2
	d.Runs = []ui.RunEnd{
		{Generation: 39, PopulationSize: 100, StopReasons: []ui.StopReason{{Name: "tolfun", Value: 1e-12}}},
		{Generation: 79, PopulationSize: 200, StopReasons: []ui.StopReason{{Name: "tolx", Value: 3e-13}}},
	}
	src.put(d, pts)
	s := server(t, src, ui.Options{})
	_, body := get(t, s.URL+"/ui/sessions/ipop")
	_, by := plots(t, body)
	for name, p := range by {
		if p.restarts != 2 {
			t.Errorf("plot %s: %d restart markers, want 2", name, p.restarts)
		}
		if p.legend[len(p.legend)-1] != "restart" {
			t.Errorf("plot %s: legend %v lacks the restart", name, p.legend)
		}
		for _, s := range wantSeries[name] {
			if p.points[s] != 120 {
				t.Errorf("plot %s, series %s: %d points, want 120", name, s, p.points[s])
			}
		}
	}
	for _, name := range []string{"c1-default", "cmu-default", "cc-default"} {
		if got := by["rates"].points[name]; got != 6 {
			t.Errorf("%s: %d points, want 6 (a segment per run)", name, got)
		}
	}
	for _, want := range []string{"restart 1, λ = 200", "restart 2, λ = 400", "<h2>Restarts</h2>", `<span class="mono">tolx</span> = 3e−13`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestSessionPageNoHistory(t *testing.T) {
	src := newFake()
	src.put(detail("new", "fresh", ui.StatusRunning, nil, t0), nil)
	s := server(t, src, ui.Options{})
	resp, body := get(t, s.URL+"/ui/sessions/new")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	_, by := plots(t, body)
	if len(by) != len(plotOrder) {
		t.Fatalf("%d plots, want %d", len(by), len(plotOrder))
	}
	for name, p := range by {
		if name != "rates" && p.empty != "no generations told yet" { // rates draws its defaults
			t.Errorf("plot %s of an empty history says %q", name, p.empty)
		}
	}
	if by["fitness"].points["best"] != 0 || !strings.Contains(body, "No finite f told yet") || strings.Contains(body, `id="distribution-note"`) {
		t.Error("an empty history is not shown as such")
	}
}

// A history written before the distribution was kept shows what it can:
// the fitness and the axis ratio over the whole run, the overall step and
// the coordinates' panels from the first generation that has them, and
// says so; a session of more coordinates than the history keeps says why
// its panels are empty.
func TestSessionPageOldHistory(t *testing.T) {
	old := func(pts []ui.Point) {
		for i := range pts {
			pts[i].OverallStep, pts[i].AxisLengths, pts[i].Stds, pts[i].Mean = math.NaN(), nil, nil, nil
		}
	}
	src := newFake()
	all := history(30)
	old(all)
	src.put(detail("old", "", ui.StatusStopped, all, t0), all)
	mixed := history(30)
	old(mixed[:20])
	src.put(detail("mixed", "", ui.StatusRunning, mixed, t0), mixed)
	wide := history(30)
	for i := range wide {
		wide[i].AxisLengths, wide[i].Stds, wide[i].Mean = nil, nil, nil
	}
	d := detail("wide", "", ui.StatusStopped, wide, t0)
	d.Dimension = 101
	src.put(d, wide)
	s := server(t, src, ui.Options{})

	for _, c := range []struct {
		id           string
		step, coords int    // points of σ·√λ_max(C) and of each coordinate's lines
		empty, note  string // what the empty panels and the note say
	}{
		{"old", 0, 0, "not in the history written before the server's upgrade", "was written before the server kept σ·√λ_max(C)"},
		{"mixed", 10, 10, "", "start at generation 20, the first told after the server's upgrade"},
		{"wide", 30, 0, "the history keeps these only for sessions of at most 100 coordinates", ""},
	} {
		_, body := get(t, s.URL+"/ui/sessions/"+c.id)
		order, by := plots(t, body)
		if !slices.Equal(order, plotOrder) {
			t.Fatalf("%s: plots %v, want %v", c.id, order, plotOrder)
		}
		f := by["fitness"]
		if f.points["best"] != 30 || f.points["axis-ratio"] != 30 || f.points["overall-step"] != c.step {
			t.Errorf("%s: fitness plot %v, want 30 points of f and the axis ratio, %d of σ·√λ_max(C)", c.id, f.points, c.step)
		}
		for _, name := range []string{"axes", "stds", "mean"} {
			p := by[name]
			if c.coords == 0 && (len(p.points) != 0 || !strings.HasPrefix(p.empty, c.empty)) {
				t.Errorf("%s: plot %s has %v and says %q, want nothing and %q", c.id, name, p.points, p.empty, c.empty)
			}
			if c.coords > 0 && (p.points[wantSeries[name][dim-1]] != c.coords || p.empty != "") {
				t.Errorf("%s: plot %s has %v (says %q), want %d points per line", c.id, name, p.points, p.empty, c.coords)
			}
		}
		note := regexp.MustCompile(`<p class="note" id="distribution-note">([^<]*)</p>`).FindStringSubmatch(body)
		if c.note == "" && note != nil || c.note != "" && (note == nil || !strings.Contains(html.UnescapeString(note[1]), c.note)) {
			t.Errorf("%s: note %q, want one with %q", c.id, note, c.note)
		}
	}
}

// Where the axis lengths jump while the overall step does not (the scale
// moved between σ and C), a note says so; a jump at a restart is none.
func TestAxesJumpNote(t *testing.T) {
	src := newFake()
	jump := history(50, 9)
	for g := 30; g < 50; g++ {
		for i := range jump[g].AxisLengths {
			jump[g].AxisLengths[i] *= 1e5
		}
	}
	smooth := history(50, 9)
	for g := 10; g < 50; g++ { // the restart after generation 9 resets C
		for i := range smooth[g].AxisLengths {
			smooth[g].AxisLengths[i] *= 1e5
		}
	}
	src.put(detail("jump", "", ui.StatusStopped, jump, t0), jump)
	src.put(detail("smooth", "", ui.StatusStopped, smooth, t0), smooth)
	s := server(t, src, ui.Options{})
	note := regexp.MustCompile(`<figcaption class="note" id="axes-note">([^<]*)</figcaption>`)
	_, body := get(t, s.URL+"/ui/sessions/jump")
	if m := note.FindStringSubmatch(body); m == nil || !strings.Contains(m[1], "jump at generation 30:") {
		t.Errorf("note %q, want one on the jump at generation 30", m)
	}
	if _, body := get(t, s.URL+"/ui/sessions/smooth"); note.MatchString(body) {
		t.Error("a note on a jump at a restart")
	}
}

// Of coordinates whose lines end together, the top few are labelled, in
// the order of the lines' ends, without overlapping; the rest show their
// title on hover.
func TestEndLabelsTight(t *testing.T) {
	src := newFake()
	pts := history(40)
	last := &pts[len(pts)-1]
	for i := range last.Stds {
		last.Stds[i] = 1e-3 * (1 + 1e-6*float64(i))
	}
	src.put(detail("tight", "", ui.StatusStopped, pts, t0), pts)
	s := server(t, src, ui.Options{})
	_, body := get(t, s.URL+"/ui/sessions/tight")
	_, by := plots(t, body)
	p := by["stds"]
	checkEndLabels(t, "stds", p, "std-", dim)
	var labels []string
	for _, e := range p.ends {
		if e.labeled {
			labels = append(labels, e.text)
		}
	}
	// Top to bottom: the largest std first, coordinate 9; two fit.
	if want := []string{"9", "8"}; !slices.Equal(labels, want) {
		t.Errorf("labels %v, want %v", labels, want)
	}
}

func TestFitnessNotPositive(t *testing.T) {
	src := newFake()
	pts := history(20)
	for i := range pts {
		pts[i].Best -= 50
		pts[i].Median -= 50
		pts[i].BestSoFar -= 50
	}
	src.put(detail("neg", "", ui.StatusStopped, pts, t0), pts)
	s := server(t, src, ui.Options{})
	_, body := get(t, s.URL+"/ui/sessions/neg")
	if !strings.Contains(body, "f − f_min + δ (log scale)") || !strings.Contains(body, "Some f ≤ 0") {
		t.Error("the shifted fitness axis is not explained")
	}
	// The last best so far is f_min: drawn too (at δ), not dropped as −∞.
	if _, by := plots(t, body); by["fitness"].points["best-so-far"] != 20 {
		t.Errorf("best so far: %d points, want 20", by["fitness"].points["best-so-far"])
	}
}

func TestNotFound(t *testing.T) {
	s := server(t, newFake(), ui.Options{})
	for _, path := range []string{"/ui/sessions/nope", "/ui/elsewhere"} {
		resp, body := get(t, s.URL+path)
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: status %d %s, want 404 HTML", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if !strings.Contains(body, "<h1>") {
			t.Errorf("%s: not a page:\n%s", path, body)
		}
	}
	resp, body := get(t, s.URL+"/ui/sessions/nope/plots")
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, `"error"`) {
		t.Errorf("plots of an unknown session: %d %s", resp.StatusCode, body)
	}
}

func TestInternalError(t *testing.T) {
	src := newFake()
	src.err = errors.New("bbolt: secret path /var/lib/x is broken")
	var logs bytes.Buffer
	s := server(t, src, ui.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for _, path := range []string{"/ui/", "/ui/sessions/x", "/ui/sessions/x/plots"} {
		resp, body := get(t, s.URL+path)
		if resp.StatusCode != http.StatusInternalServerError {
			t.Errorf("%s: status %d, want 500", path, resp.StatusCode)
		}
		if strings.Contains(body, "secret") || strings.Contains(body, "bbolt") {
			t.Errorf("%s: the page shows the internals:\n%s", path, body)
		}
	}
	if !strings.Contains(logs.String(), "secret path") {
		t.Errorf("the error was not logged: %s", logs.String())
	}
}

func TestPlotsEndpoint(t *testing.T) {
	src := newFake()
	pts := history(10)
	src.put(detail("live", "", ui.StatusRunning, pts, t0), pts)
	s := server(t, src, ui.Options{})
	decode := func(body string) (out struct {
		Status     string `json:"status"`
		Generation int    `json:"generation"`
		Unchanged  bool   `json:"unchanged"`
		HTML       string `json:"html"`
	}) {
		t.Helper()
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		return out
	}

	resp, body := get(t, s.URL+"/ui/sessions/live/plots")
	got := decode(body)
	if resp.StatusCode != http.StatusOK || got.Status != "running" || got.Generation != 10 || got.Unchanged {
		t.Fatalf("status %d, %+v", resp.StatusCode, got)
	}
	if _, by := plots(t, got.HTML); len(by) != len(plotOrder) || by["rates"].points["cc"] != 10 || by["stds"].points["std-9"] != 10 {
		t.Errorf("the fragment's plots: %v", by)
	}
	if strings.Contains(got.HTML, "<script") || strings.Contains(got.HTML, "<html") {
		t.Error("the fragment is more than the live part")
	}

	// Nothing new: no HTML.
	_, body = get(t, s.URL+"/ui/sessions/live/plots?generation=10")
	if got := decode(body); !got.Unchanged || got.HTML != "" {
		t.Errorf("same generation: %+v, want unchanged", got)
	}

	// The session goes on and stops: the final state.
	pts = history(15)
	src.put(detail("live", "", ui.StatusStopped, pts, t0), pts)
	_, body = get(t, s.URL+"/ui/sessions/live/plots?generation=10")
	got = decode(body)
	if got.Status != "stopped" || got.Generation != 15 || !strings.Contains(got.HTML, "Stopped because") {
		t.Errorf("after stopping: %+v", got)
	}
}

// testToken is the pages' token in TestToken.
const testToken = "s3cret-token"

// tokenServer is the pages of TestToken, behind testToken.
type tokenServer struct {
	s      *httptest.Server
	src    *fakeSource
	logins *ui.Logins
}

func TestToken(t *testing.T) {
	src := newFake()
	pts := history(5)
	src.put(detail("s1", "", ui.StatusRunning, pts, t0), pts)
	logins := ui.NewLogins(testToken)
	e := tokenServer{
		s:   server(t, src, ui.Options{Token: testToken, Logins: logins, BackupAvailable: true}), // the token alone hides the backup link
		src: src, logins: logins,
	}

	t.Run("no token", func(t *testing.T) { tokenNone(t, e) })
	t.Run("bearer", func(t *testing.T) { tokenBearer(t, e) })
	t.Run("cookie", func(t *testing.T) { tokenCookie(t, e) })
	t.Run("TLS", func(t *testing.T) { tokenTLS(t, e) })
	t.Run("logout", func(t *testing.T) { tokenLogout(t, e) })
}

// tokenNone: without the token, the pages send to the login and the plots
// answer 401.
func tokenNone(t *testing.T, e tokenServer) {
	resp, _ := get(t, e.s.URL+"/ui/sessions/s1")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/login?next="+url.QueryEscape("/ui/sessions/s1") {
		t.Errorf("status %d Location %q, want 303 to the login", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = get(t, e.s.URL+"/ui/")
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("list: status %d, want 303", resp.StatusCode)
	}
	resp, _ = get(t, e.s.URL+"/ui/sessions/s1/plots")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("plots: status %d, want 401", resp.StatusCode)
	}
}

// tokenBearer: the token as a bearer header opens every page; a wrong one
// is 401.
func tokenBearer(t *testing.T, e tokenServer) {
	for _, path := range []string{"/ui/", "/ui/sessions/s1", "/ui/sessions/s1/plots"} {
		if resp, _ := get(t, e.s.URL+path, "Authorization", "Bearer "+testToken); resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d, want 200", path, resp.StatusCode)
		}
		if resp, body := get(t, e.s.URL+path, "Authorization", "Bearer wrong"); resp.StatusCode != http.StatusUnauthorized || strings.Contains(body, "<svg ") {
			t.Errorf("%s with a wrong token: status %d, want 401", path, resp.StatusCode)
		}
	}
}

// tokenCookie: the login form sets an HttpOnly cookie that opens the pages
// and the API's data links, one per login, and refuses an open redirect.
func tokenCookie(t *testing.T, e tokenServer) {
	resp, body := get(t, e.s.URL+"/ui/login?next=/ui/sessions/s1")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `name="token"`) || !strings.Contains(body, `value="/ui/sessions/s1"`) {
		t.Fatalf("login form: status %d\n%s", resp.StatusCode, body)
	}
	if strings.Contains(body, `action="/ui/logout"`) {
		t.Error("the login form offers to log out")
	}
	post := func(tok, next string) *http.Response {
		resp, err := noRedirects.PostForm(e.s.URL+"/ui/login", url.Values{"token": {tok}, "next": {next}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp = post("wrong", "/ui/sessions/s1")
	if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Errorf("wrong token: status %d, cookies %v; want 401 and none", resp.StatusCode, resp.Cookies())
	}
	resp = post(testToken, "/ui/sessions/s1")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/sessions/s1" {
		t.Fatalf("login: status %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	cs := resp.Cookies()
	if len(cs) != 1 {
		t.Fatalf("cookies %v, want one", cs)
	}
	c := cs[0]
	if c.Name != ui.CookieName || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure || c.Path != "/" {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/, not Secure over plain HTTP", c)
	}
	if strings.Contains(c.Value, testToken) {
		t.Error("the cookie holds the token in clear")
	}
	for _, path := range []string{"/ui/", "/ui/sessions/s1", "/ui/sessions/s1/plots"} {
		if resp, _ := get(t, e.s.URL+path, "Cookie", c.Name+"="+c.Value); resp.StatusCode != http.StatusOK {
			t.Errorf("%s with the cookie: status %d, want 200", path, resp.StatusCode)
		}
		if resp, _ := get(t, e.s.URL+path, "Cookie", c.Name+"="+c.Value+"x"); resp.StatusCode == http.StatusOK {
			t.Errorf("%s with a forged cookie: status 200", path)
		}
	}
	// The API's check for the pages' data links accepts this cookie only.
	check := e.logins.LoggedIn
	for value, want := range map[string]bool{c.Value: true, c.Value + "x": false, "": false} {
		r := httptest.NewRequest(http.MethodGet, "/v1/sessions/s1/history", nil)
		r.AddCookie(&http.Cookie{Name: ui.CookieName, Value: value})
		if got := check(r); got != want {
			t.Errorf("LoggedIn with cookie %q: %v, want %v", value, got, want)
		}
	}
	if ui.NewLogins("").LoggedIn(httptest.NewRequest(http.MethodGet, "/v1/sessions", nil)) {
		t.Error("LoggedIn without a token admits a request")
	}
	// Logged in, the page offers to log out, and no backup (the
	// login does not read it).
	if _, body := get(t, e.s.URL+"/ui/", "Cookie", c.Name+"="+c.Value); !strings.Contains(body, `action="/ui/logout"`) || strings.Contains(body, "/v1/backup") {
		t.Error("no log out button, or a backup link")
	}
	// Every login is a cookie of its own.
	if again := post(testToken, "/ui/").Cookies(); len(again) != 1 || again[0].Value == c.Value {
		t.Errorf("a second login: cookies %v, want one other than %q", again, c.Value)
	}
	// An open redirect is refused.
	if resp := post(testToken, "//evil.example/"); resp.Header.Get("Location") != "/ui/" {
		t.Errorf("next //evil.example/: Location %q, want /ui/", resp.Header.Get("Location"))
	}
}

// tokenTLS: a login over TLS sets a Secure cookie.
func tokenTLS(t *testing.T, e tokenServer) {
	r := chi.NewRouter()
	r.Mount(ui.Prefix, ui.Handler(e.src, ui.Options{Token: testToken}))
	req := httptest.NewRequest(http.MethodPost, "https://example.org/ui/login", strings.NewReader(url.Values{"token": {testToken}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	cs := w.Result().Cookies()
	if len(cs) != 1 || !cs[0].Secure {
		t.Errorf("login over TLS: cookies %+v, want one Secure", cs)
	}
}

// tokenLogout: after logout the server forgets the cookie.
func tokenLogout(t *testing.T, e tokenServer) {
	resp, err := noRedirects.PostForm(e.s.URL+"/ui/login", url.Values{"token": {testToken}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	c := resp.Cookies()[0]
	if resp, _ := get(t, e.s.URL+"/ui/", "Cookie", c.Name+"="+c.Value); resp.StatusCode != http.StatusOK {
		t.Fatalf("logged in: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPost, e.s.URL+"/ui/logout", nil)
	req.AddCookie(c)
	if resp, err = noRedirects.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cs := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || len(cs) != 1 || cs[0].MaxAge >= 0 {
		t.Errorf("logout: status %d cookies %+v, want 303 and an expired cookie", resp.StatusCode, cs)
	}
	// The server forgot the login: a copy of the cookie is worth nothing.
	if resp, _ := get(t, e.s.URL+"/ui/", "Cookie", c.Name+"="+c.Value); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the cookie after logout: %d, want 303 to the login", resp.StatusCode)
	}
	r := httptest.NewRequest(http.MethodGet, "/v1/sessions", nil)
	r.AddCookie(c)
	if e.logins.LoggedIn(r) {
		t.Error("the API admits the cookie after logout")
	}
}

// TestLoginThrottled: ten wrong tokens from one address, at the login or
// as bearer tokens, and that address is 429 with Retry-After, the right
// token too, until the window ends; a login's cookie still works.
func TestLoginThrottled(t *testing.T) {
	const token = "s3cret-token"
	src := newFake()
	s := server(t, src, ui.Options{Token: token})
	post := func(tok string) *http.Response {
		resp, err := noRedirects.PostForm(s.URL+"/ui/login", url.Values{"token": {tok}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	good := post(token).Cookies()[0]
	for i := range 5 {
		if resp := post("wrong"); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong login %d: %d", i, resp.StatusCode)
		}
		if resp, _ := get(t, s.URL+"/ui/", "Authorization", "Bearer wrong"); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong bearer %d: %d", i, resp.StatusCode)
		}
	}
	resp := post(token)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || len(resp.Cookies()) != 0 {
		t.Errorf("the right token after 10 wrong ones: %d, Retry-After %q, cookies %v; want 429, no cookie", resp.StatusCode, resp.Header.Get("Retry-After"), resp.Cookies())
	}
	if resp, _ := get(t, s.URL+"/ui/", "Authorization", "Bearer "+token); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the right bearer after 10 wrong ones: %d, want 429", resp.StatusCode)
	}
	if resp, _ := get(t, s.URL+"/ui/", "Cookie", good.Name+"="+good.Value); resp.StatusCode != http.StatusOK {
		t.Errorf("a login's cookie from the throttled address: %d, want 200", resp.StatusCode)
	}
}

func TestNoTokenNoLogin(t *testing.T) {
	s := server(t, newFake(), ui.Options{})
	_, body := get(t, s.URL+"/ui/login")
	if !strings.Contains(body, "needs no token") {
		t.Errorf("login without a token:\n%s", body)
	}
	if _, body = get(t, s.URL+"/ui/"); strings.Contains(body, "log out") {
		t.Error("log out offered without a token")
	}
}

func TestLongRunDownsampled(t *testing.T) {
	const gens = 100_000
	src := newFake()
	pts := history(gens, 30_000, 70_000)
	src.put(detail("long", "", ui.StatusStopped, pts, t0), pts)
	s := server(t, src, ui.Options{})
	_, body := get(t, s.URL+"/ui/sessions/long")
	_, by := plots(t, body)
	for name, series := range wantSeries {
		most := 2 * ui.DefaultColumns
		if name == "axes" || name == "stds" || name == "mean" {
			most = 2 * 4 * ui.DefaultColumns / dim // fewer columns per line with more lines
		}
		for _, s := range series {
			n := by[name].points[s]
			if n < 50 || n > most {
				t.Errorf("plot %s, series %s: %d points, want at most %d", name, s, n, most)
			}
		}
		if by[name].restarts != 2 {
			t.Errorf("plot %s: %d restarts, want 2", name, by[name].restarts)
		}
	}
	if len(body) > 400<<10 {
		t.Errorf("page of %d bytes", len(body))
	}
}

func BenchmarkSessionPage(b *testing.B) {
	for _, gens := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("generations=%d", gens), func(b *testing.B) {
			src := newFake()
			pts := history(gens, gens/3, 2*gens/3)
			src.put(detail("s", "bench", ui.StatusRunning, pts, t0), pts)
			r := chi.NewRouter()
			r.Mount(ui.Prefix, ui.Handler(src, ui.Options{}))
			req := httptest.NewRequest(http.MethodGet, "/ui/sessions/s", nil)
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				r.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}
