package sessionsource

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
	"github.com/selfcma/selfcma/internal/ui"
)

func newManager(t testing.TB) *session.Manager {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "s.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return session.NewManager(st, session.Options{})
}

func sphere(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return s
}

// step tells k generations of the sphere to session id.
func step(t *testing.T, m *session.Manager, id string, k int) session.Session {
	t.Helper()
	ctx := context.Background()
	var s session.Session
	for range k {
		b, err := m.Ask(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		f := make([]float64, len(b.Candidates))
		for i, x := range b.Candidates {
			f[i] = sphere(x)
		}
		if s, err = m.Tell(ctx, id, session.TellParams{Generation: b.Generation, Fitness: f}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func seed(v uint64) *uint64 { return &v }

func TestSessionAndHistory(t *testing.T) {
	ctx := context.Background()
	m := newManager(t)
	src := New(m)
	created, err := m.Create(ctx, session.CreateParams{
		X0: []float64{1, 2, 3, 4}, Sigma0: 0.5, Seed: seed(7), Name: "four",
		Restarts:    session.Restarts{Strategy: "ipop"},
		Termination: session.Termination{TolFun: ptr(1e-3)},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := created.ID
	checkNew(t, src, created)

	// Run until the first restart, then a few more generations: the cache
	// must hold exactly what the Manager holds.
	var s session.Session
	for s.Restarts.Count == 0 {
		s = step(t, m, id, 5)
	}
	got, err := src.History(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	s = step(t, m, id, 3)
	got2, err := src.History(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got2) != len(got)+3 || len(got2) != s.Generation {
		t.Fatalf("history grew from %d to %d points, want +3 = %d generations", len(got), len(got2), s.Generation)
	}
	checkPoints(t, m, id, got2)
	checkRestarted(t, src, s)

	// Two values told in parts.
	b, err := m.Ask(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Tell(ctx, id, session.TellParams{Generation: b.Generation, Indices: []int{3, 0}, Fitness: []float64{1, 2}}); err != nil {
		t.Fatal(err)
	}
	if d, err := src.Session(ctx, id); err != nil || d.Held != 2 {
		t.Errorf("holds %d values after a part of 2: %v", d.Held, err)
	}
}

// checkNew checks the detail and the history of a session just created.
func checkNew(t *testing.T, src *Source, created session.Session) {
	t.Helper()
	ctx := context.Background()
	d, err := src.Session(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.ID != created.ID || d.Name != "four" || d.Dimension != 4 || d.Status != ui.StatusRunning || d.BestF != nil || d.Seed != 7 {
		t.Errorf("new session: %+v", d)
	}
	// A new session is active CMA-ES by default: its rates are those.
	p, _ := cmaes.NewParamsActive(4, d.PopulationSize, created.Active)
	if !created.Active {
		t.Error("a new session is not active CMA-ES")
	}
	if want := (ui.Hyper{C1: p.C1, CMu: p.CMu, Cc: p.Cc}); d.Defaults != want || len(d.RunDefaults) != 1 || d.RunDefaults[0] != want {
		t.Errorf("defaults %+v, run defaults %+v, want %+v", d.Defaults, d.RunDefaults, want)
	}
	if pts, err := src.History(ctx, created.ID); err != nil || len(pts) != 0 {
		t.Fatalf("history of a new session: %d points, %v", len(pts), err)
	}
}

// checkPoints checks that pts are the Manager's history of session id.
func checkPoints(t *testing.T, m *session.Manager, id string, pts []ui.Point) {
	t.Helper()
	recs, err := m.History(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		g := pts[i]
		if g.Generation != r.Generation || g.Run != r.Run || g.Lambda != r.Lambda || g.Evaluations != r.Evaluations ||
			!same(g.Best, r.Best) || !same(g.Median, r.Median) || !same(g.BestSoFar, r.BestSoFar) || g.Sigma != r.Sigma ||
			g.AxisRatio != r.AxisRatio || g.C1 != r.C1 || g.CMu != r.CMu || g.Cc != r.Cc {
			t.Fatalf("point %d: %+v, record %+v", i, g, r)
		}
	}
}

// checkRestarted checks the detail of session s, which has restarted:
// its runs and their default rates, its best point.
func checkRestarted(t *testing.T, src *Source, s session.Session) {
	t.Helper()
	d, err := src.Session(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Restarts < 1 || len(d.Runs) != d.Restarts || len(d.RunDefaults) != d.Restarts+1 {
		t.Fatalf("restarts %d, runs %d, run defaults %d", d.Restarts, len(d.Runs), len(d.RunDefaults))
	}
	p0, _ := cmaes.NewParamsActive(4, d.Runs[0].PopulationSize, true)
	if d.RunDefaults[0] != (ui.Hyper{C1: p0.C1, CMu: p0.CMu, Cc: p0.Cc}) || d.RunDefaults[0] == d.Defaults || d.PopulationSize != 2*d.Runs[0].PopulationSize {
		t.Errorf("run defaults %+v for λ %d then %d", d.RunDefaults, d.Runs[0].PopulationSize, d.PopulationSize)
	}
	if d.BestF == nil || *d.BestF != s.Best.F || len(d.BestX) != 4 || d.Generation != s.Generation {
		t.Errorf("detail %+v, session %+v", d, s)
	}
	if len(d.Runs[0].StopReasons) == 0 {
		t.Error("the first run ended without a reason")
	}
	if d.Held != 0 {
		t.Errorf("holds %d values, none told in parts", d.Held)
	}
}

func TestNotFound(t *testing.T) {
	ctx := context.Background()
	m := newManager(t)
	src := New(m)
	for _, id := range []string{"0195a1b2-0000-7000-8000-000000000000", "not an id"} {
		if _, err := src.Session(ctx, id); !errors.Is(err, ui.ErrNotFound) {
			t.Errorf("Session(%q): %v, want ErrNotFound", id, err)
		}
		if _, err := src.History(ctx, id); !errors.Is(err, ui.ErrNotFound) {
			t.Errorf("History(%q): %v, want ErrNotFound", id, err)
		}
	}
	// A deleted session is gone, cached history too.
	s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 1}, Sigma0: 1, Algorithm: session.AlgorithmCMAES})
	if err != nil {
		t.Fatal(err)
	}
	step(t, m, s.ID, 2)
	if pts, err := src.History(ctx, s.ID); err != nil || len(pts) != 2 {
		t.Fatalf("history: %d points, %v", len(pts), err)
	}
	if err := m.Delete(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := src.History(ctx, s.ID); !errors.Is(err, ui.ErrNotFound) {
		t.Errorf("history of a deleted session: %v", err)
	}
	if _, ok := src.cache[s.ID]; ok {
		t.Error("a deleted session's history stays cached")
	}
}

// The list comes newest first, in pages, filtered by name and status,
// whatever the chunks it is read in.
func TestListSessionsPages(t *testing.T) {
	ctx := context.Background()
	m := newManager(t)
	var all, odd []string // newest first
	for i := range 7 {
		name := fmt.Sprintf("Run %d", i)
		if i%2 == 1 {
			name = fmt.Sprintf("odd run %d", i)
		}
		s, err := m.Create(ctx, session.CreateParams{Name: name, X0: []float64{1}, Sigma0: 1, Algorithm: session.AlgorithmCMAES})
		if err != nil {
			t.Fatal(err)
		}
		all = append([]string{s.ID}, all...)
		if i%2 == 1 {
			odd = append([]string{s.ID}, odd...)
		}
		if i == 3 {
			if _, err := m.Stop(ctx, s.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !slices.IsSortedFunc(all, func(a, b string) int { return strings.Compare(b, a) }) {
		t.Fatalf("ids %v: not in the order of creation", all)
	}
	pages := func(src *Source, q ui.ListQuery) []string {
		var got []string
		for {
			page, err := src.ListSessions(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range page {
				if s.Algorithm != session.AlgorithmCMAES {
					t.Errorf("summary %+v", s)
				}
				got = append(got, s.ID)
			}
			if len(page) < q.Limit {
				return got
			}
			q.Before = page[len(page)-1].ID
		}
	}
	for _, chunk := range []int{2, 3, listChunk} {
		src := New(m)
		src.chunk = chunk
		for _, c := range []struct {
			q    ui.ListQuery
			want []string
		}{
			{ui.ListQuery{Limit: 3}, all},
			{ui.ListQuery{Limit: 2, Name: "ODD"}, odd},
			{ui.ListQuery{Limit: 1, Name: "odd", Status: ui.StatusRunning}, []string{odd[0], odd[2]}},
			{ui.ListQuery{Limit: 5, Status: ui.StatusStopped}, []string{odd[1]}},
			{ui.ListQuery{Limit: 5, Name: "none"}, nil},
		} {
			if got := pages(src, c.q); !slices.Equal(got, c.want) {
				t.Errorf("chunks of %d, %+v: pages list %v, want %v", chunk, c.q, got, c.want)
			}
		}
	}
}

func TestHistoryConcurrentAndEvicted(t *testing.T) {
	ctx := context.Background()
	m := newManager(t)
	src := New(m)
	var ids []string
	for range cacheCap + 2 {
		s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 1}, Sigma0: 1, Algorithm: session.AlgorithmCMAES})
		if err != nil {
			t.Fatal(err)
		}
		step(t, m, s.ID, 2)
		ids = append(ids, s.ID)
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		for range 3 {
			wg.Go(func() {
				if pts, err := src.History(ctx, id); err != nil || len(pts) != 2 {
					t.Errorf("history of %s: %d points, %v", id, len(pts), err)
				}
			})
		}
	}
	wg.Wait()
	if n := src.lru.Len(); n != cacheCap || len(src.cache) != cacheCap {
		t.Errorf("%d histories cached (map %d), want %d", n, len(src.cache), cacheCap)
	}
}

func ptr[T any](v T) *T { return &v }

func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// BenchmarkListSessions lists the newest page of 100 of n sessions, with
// and without a filter: a pass over every session's summary.
func BenchmarkListSessions(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1_000, 10_000} {
		m := newManager(b)
		for i := range n {
			if _, err := m.Create(ctx, session.CreateParams{Name: fmt.Sprintf("run %d", i), X0: []float64{1, 1}, Sigma0: 1,
				Algorithm: session.AlgorithmCMAES}); err != nil {
				b.Fatal(err)
			}
		}
		src := New(m)
		for _, q := range []ui.ListQuery{{Limit: 100}, {Limit: 100, Name: "run 99", Status: ui.StatusRunning}} {
			b.Run(fmt.Sprintf("sessions=%d/name=%q", n, q.Name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := src.ListSessions(ctx, q); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestSepSession: a sep-cma-es session's page: its default rates are
// sep-CMA-ES's (those the update used), its history keeps the diagonal's
// axis lengths per coordinate, and the page renders.
func TestSepSession(t *testing.T) {
	ctx := context.Background()
	m := newManager(t)
	src := New(m)
	s, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 2, 3, 4}, Sigma0: 0.5, Seed: seed(7), Algorithm: session.AlgorithmSepCMAES})
	if err != nil {
		t.Fatal(err)
	}
	s = step(t, m, s.ID, 6)
	d, err := src.Session(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Algorithm != session.AlgorithmSepCMAES || d.Defaults != d.Hyper || d.Defaults.C1 == 0 {
		t.Errorf("algorithm %q, defaults %+v, rates %+v: want sep-CMA-ES's, equal", d.Algorithm, d.Defaults, d.Hyper)
	}
	pts, err := src.History(ctx, s.ID)
	if err != nil || len(pts) != 6 || len(pts[5].AxisLengths) != 4 {
		t.Fatalf("history: %d points, %v", len(pts), err)
	}
	r := chi.NewRouter()
	r.Mount(ui.Prefix, ui.Handler(src, ui.Options{}))
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest("GET", ui.Prefix+"/sessions/"+s.ID, nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "sep-cma-es") {
		t.Errorf("the page: %d, sep-cma-es named: %v", rec.Code, strings.Contains(rec.Body.String(), "sep-cma-es"))
	}
}

// TestSepSessionLarge: the page of a sep-cma-es session of n = 10^5 shows
// the head of its vectors, not 10^5 numbers each.
func TestSepSessionLarge(t *testing.T) {
	ctx := context.Background()
	m := newManager(t)
	s, err := m.Create(ctx, session.CreateParams{X0: make([]float64, 100000), Sigma0: 1, Seed: seed(7), PopulationSize: 4, Algorithm: session.AlgorithmSepCMAES})
	if err != nil {
		t.Fatal(err)
	}
	step(t, m, s.ID, 2)
	r := chi.NewRouter()
	r.Mount(ui.Prefix, ui.Handler(New(m), ui.Options{}))
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest("GET", ui.Prefix+"/sessions/"+s.ID, nil))
	body := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(body, "100000 coordinates: the API") || len(body) > 1<<20 {
		t.Errorf("the page: %d, %d bytes", rec.Code, len(body))
	}
}
