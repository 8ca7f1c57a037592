package httpapi

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/mixedfn"
	"github.com/selfcma/selfcma/internal/session"
)

// mixedBatch is a mixed session's ask.
type mixedBatch struct {
	Generation int         `json:"generation"`
	Candidates [][]float64 `json:"candidates"`
	Z          [][]float64 `json:"z"`
	C          [][]int     `json:"c"`
}

// TestMixedSession: a mixed session over HTTP, told whole, with ?next=true
// and in parts through claims, answers as the Manager does in process with
// the same values: the same batches (x, z, c), session and history; every
// answer within the spec.
func TestMixedSession(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	create := map[string]any{"x0": []float64{2, 2}, "seed": 9, "bounds": map[string]any{"lower": []float64{-1, -1}, "upper": []float64{5, 5}},
		"integers": [][]float64{{0, 1, 2, 3}, {0.01, 0.1, 1}}, "categories": []int{3, 5}}
	s := ts.create(t, create)
	p := session.CreateParams{X0: []float64{2, 2}, Seed: ptr(uint64(9)), Bounds: &session.Bounds{Lower: []float64{-1, -1}, Upper: []float64{5, 5}},
		Integers: [][]float64{{0, 1, 2, 3}, {0.01, 0.1, 1}}, Categories: []int{3, 5}}
	ctx := context.Background()
	twin, err := ts.m.Create(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	for g := range 30 {
		r := ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/ask"})
		b := decode[mixedBatch](t, r)
		want, err := ts.m.Ask(ctx, twin.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(b.Candidates, want.Candidates) || !reflect.DeepEqual(b.Z, want.Z) || !reflect.DeepEqual(b.C, want.C) {
			t.Fatalf("generation %d: over HTTP %s, in process %+v", g, r.body, want)
		}
		f := make([]float64, len(b.Candidates))
		for k := range f {
			f[k] = mixedfn.SphereIntCOM(b.Candidates[k], b.Z[k], b.C[k])
		}
		switch g % 3 {
		case 0:
			ts.tell(t, s.ID, map[string]any{"generation": g, "fitness": f})
		case 1:
			r := ts.do(t, call{method: "POST", path: "/v1/sessions/" + s.ID + "/tell?next=true", body: map[string]any{"generation": g, "fitness": f}})
			if r.status != http.StatusOK || !strings.Contains(string(r.body), `"z":[[`) {
				t.Fatalf("tell?next=true: %d %s", r.status, r.body)
			}
		case 2:
			for range f {
				r := ts.do(t, call{method: "POST", path: "/v1/sessions/" + s.ID + "/claim", body: map[string]any{"worker": "w"}})
				c := decode[struct {
					Index int       `json:"index"`
					X     []float64 `json:"x"`
					Z     []float64 `json:"z"`
					C     []int     `json:"c"`
				}](t, r)
				if !reflect.DeepEqual(c.Z, b.Z[c.Index]) || !reflect.DeepEqual(c.C, b.C[c.Index]) {
					t.Fatalf("claim %s is not candidate %d", r.body, c.Index)
				}
				ts.tell(t, s.ID, map[string]any{"generation": g, "indices": []int{c.Index}, "fitness": f[c.Index : c.Index+1]})
			}
		}
		if _, err := ts.m.Tell(ctx, twin.ID, session.TellParams{Generation: g, Fitness: f}); err != nil {
			t.Fatal(err)
		}
	}
	r := ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID})
	got := decode[map[string]any](t, r)
	want, err := ts.m.Get(ctx, twin.ID)
	if err != nil {
		t.Fatal(err)
	}
	wj := decode[map[string]any](t, response{body: mustJSON(t, toSessionJSON(want))})
	for _, k := range []string{"best", "mixed", "mean", "sigma", "generation", "evaluations", "algorithm", "dimension"} {
		if g, w := mustJSON(t, got[k]), mustJSON(t, wj[k]); string(g) != string(w) {
			t.Errorf("%s over HTTP %s, in process %s", k, g, w)
		}
	}
	best := got["best"].(map[string]any)
	if got["algorithm"] != "catcma" || len(best["z"].([]any)) != 2 || len(best["c"].([]any)) != 2 {
		t.Fatalf("session %s", r.body)
	}
	h := ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/history"})
	if h.status != http.StatusOK {
		t.Fatalf("history: %d %s", h.status, h.body)
	}
}

// TestMixedBadInput: bad integers and categories are refused naming the
// field; nothing is created.
func TestMixedBadInput(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	for _, c := range []struct {
		name   string
		body   map[string]any
		status int
		want   string
	}{
		{"unsorted", map[string]any{"integers": [][]float64{{2, 1}}}, 422, "integers[0][1]"},
		{"duplicate", map[string]any{"integers": [][]float64{{1, 2, 2}}}, 422, "integers[0][2]"},
		{"empty list", map[string]any{"integers": [][]float64{{}}}, 422, "integers[0]"},
		{"one value", map[string]any{"integers": [][]float64{{1}}, "categories": []int{2}}, 422, "integers[0]"},
		{"null value", map[string]any{"integers": []any{[]any{1, nil}}}, 400, "integers[0][1]"},
		{"one choice", map[string]any{"categories": []int{2, 1}}, 422, "categories[1]"},
		{"a string", map[string]any{"categories": []any{"3"}}, 400, "categories"},
		{"algorithm", map[string]any{"categories": []int{2}, "algorithm": "cma-es", "x0": []float64{0}, "sigma0": 1}, 422, "algorithm"},
		{"too many", map[string]any{"categories": make([]int, 2001)}, 422, "categories"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: c.body, invalid: c.status == 400 || c.name == "empty list" || c.name == "one choice" || c.name == "too many"})
			e := decode[errorView](t, r)
			if r.status != c.status || !strings.Contains(e.Error.Message, c.want) {
				t.Fatalf("%d %s, want %d naming %s", r.status, r.body, c.status, c.want)
			}
		})
	}
	if l := ts.do(t, call{method: "GET", path: "/v1/sessions"}); strings.Contains(string(l.body), `"id"`) {
		t.Fatalf("refused creates left sessions: %s", l.body)
	}
}

// TestMixedCreateCharge: a mixed create is charged what CatCMA states for
// its space (its integer grids too), also without x0.
func TestMixedCreateCharge(t *testing.T) {
	s := &server{m: newTestServer(t, serverOpts{}).m}
	ctx := context.Background()
	long := make([]float64, 5000)
	for i := range long {
		long[i] = float64(i)
	}
	small := session.CreateParams{Integers: [][]float64{{0, 1}, {0, 1}}, Categories: []int{3}}
	big := session.CreateParams{Integers: [][]float64{{0, 1}, long}, Categories: []int{3}}
	cs, cb := s.createCharge(ctx, small), s.createCharge(ctx, big)
	if cs <= 0 || cs != session.CreateBytesOf(small, 3) {
		t.Fatalf("charged %d for a small mixed create, want %d", cs, session.CreateBytesOf(small, 3))
	}
	if cb < cs+2*8*2*5000 { // two padded rows of 5000 values and thresholds, counted twice
		t.Fatalf("charged %d for a list of 5000 values, %d for lists of 2", cb, cs)
	}
}
