package httpapi

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
)

// conValues are the values of the sphere with x_0 + 1 ≤ 0 and Σx² ≤ 4: a
// row per candidate, candidate 1's second value unknown (null) and
// candidate 2's row unknown every third generation.
func conValues(b batchView) ([]float64, []any) {
	f := make([]float64, len(b.Candidates))
	g := make([]any, len(b.Candidates))
	for k, x := range b.Candidates {
		f[k] = sphere(x)
		row := []any{x[0] + 1, sphere(x) - 4}
		switch {
		case k == 1:
			row[1] = nil
		case k == 2 && b.Generation%3 == 0:
			g[k] = nil
			continue
		}
		g[k] = row
	}
	return f, g
}

// conView is what a client reads of a constrained session.
type conView struct {
	Generation int `json:"generation"`
	Best       *struct {
		F float64 `json:"f"`
	} `json:"best"`
	BestFeasible *struct {
		X          []float64 `json:"x"`
		F          float64   `json:"f"`
		G          []float64 `json:"g"`
		Generation int       `json:"generation"`
	} `json:"best_feasible"`
	Constraints *struct {
		Count          int       `json:"count"`
		Multipliers    []float64 `json:"multipliers"`
		PenaltyFactors []float64 `json:"penalty_factors"`
	} `json:"constraints"`
	Partial *struct {
		Indices          []int        `json:"indices"`
		ConstraintValues [][]*float64 `json:"constraint_values"`
	} `json:"partial"`
}

// TestConstrainedSession: a constrained session over HTTP, told whole
// (with ?next=true) and in parts, with unknown constraint values, answers
// as the Manager does in process with the same values: the same session
// object, the same history, every answer within the spec.
func TestConstrainedSession(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	for _, alg := range []string{"cma-es", "self-cma-es"} {
		t.Run(alg, func(t *testing.T) {
			create := map[string]any{"x0": []float64{1, 1, 1}, "sigma0": 1, "seed": 9, "algorithm": alg, "constraints": map[string]any{"count": 2}}
			r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: create})
			if r.status != http.StatusCreated {
				t.Fatalf("create: %d %s", r.status, r.body)
			}
			s := decode[conView](t, r)
			if s.Constraints == nil || s.Constraints.Count != 2 || s.Constraints.Multipliers != nil || s.BestFeasible != nil {
				t.Fatalf("created %s", r.body)
			}
			id := decode[sessionView](t, r).ID
			var p session.CreateParams
			p.X0, p.Sigma0, p.Seed, p.Algorithm, p.Constraints = []float64{1, 1, 1}, 1, ptr(uint64(9)), alg, &session.Constraints{Count: 2}
			ctx := context.Background()
			twin, err := ts.m.Create(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			const gens = 30
			for g := range gens {
				b := ts.ask(t, id)
				f, gv := conValues(b)
				if g%4 == 1 { // in parts: candidate 0, then the rest
					one := map[string]any{"generation": g, "indices": []int{0}, "fitness": f[:1], "constraint_values": gv[:1]}
					r := ts.do(t, call{method: "POST", path: "/v1/sessions/" + id + "/tell", body: one})
					held := decode[conView](t, r)
					if r.status != http.StatusOK || held.Partial == nil || len(held.Partial.ConstraintValues) != 1 {
						t.Fatalf("part: %d %s", r.status, r.body)
					}
					rest := map[string]any{"generation": g, "indices": []int{}, "fitness": []float64{}, "constraint_values": []any{}}
					for k := 1; k < len(f); k++ {
						rest["indices"] = append(rest["indices"].([]int), k)
						rest["fitness"] = append(rest["fitness"].([]float64), f[k])
						rest["constraint_values"] = append(rest["constraint_values"].([]any), gv[k])
					}
					ts.tell(t, id, rest)
				} else {
					r := ts.do(t, call{method: "POST", path: "/v1/sessions/" + id + "/tell?next=true", body: map[string]any{"generation": g, "fitness": f, "constraint_values": gv}})
					if r.status != http.StatusOK {
						t.Fatalf("tell: %d %s", r.status, r.body)
					}
				}
				tp := session.TellParams{Generation: g, Fitness: f, Constraints: make([][]float64, len(f))}
				for k, row := range gv {
					if row != nil {
						tp.Constraints[k] = []float64{row.([]any)[0].(float64), math.NaN()}
						if v, ok := row.([]any)[1].(float64); ok {
							tp.Constraints[k][1] = v
						}
					}
				}
				if _, err := ts.m.Tell(ctx, twin.ID, tp); err != nil {
					t.Fatal(err)
				}
			}
			r = ts.do(t, call{method: "GET", path: "/v1/sessions/" + id})
			got := decode[map[string]any](t, r)
			want, err := ts.m.Get(ctx, twin.ID)
			if err != nil {
				t.Fatal(err)
			}
			wj := decode[map[string]any](t, response{body: mustJSON(t, toSessionJSON(want))})
			for _, k := range []string{"best", "best_feasible", "constraints", "mean", "sigma", "hyperparameters", "generation", "evaluations"} {
				if g, w := mustJSON(t, got[k]), mustJSON(t, wj[k]); string(g) != string(w) {
					t.Errorf("%s over HTTP %s, in process %s", k, g, w)
				}
			}
			s = decode[conView](t, r)
			if s.BestFeasible == nil || s.BestFeasible.G[0] > 0 || s.BestFeasible.G[1] > 0 || s.Best.F > s.BestFeasible.F ||
				len(s.Constraints.Multipliers) != 2 || len(s.Constraints.PenaltyFactors) != 2 {
				t.Fatalf("after %d generations: %s", gens, r.body)
			}
			h := ts.do(t, call{method: "GET", path: "/v1/sessions/" + id + "/history"})
			var hist struct {
				Records []map[string]any `json:"records"`
			}
			if err := json.Unmarshal(h.body, &hist); err != nil || len(hist.Records) != gens {
				t.Fatalf("history: %v, %d records", err, len(hist.Records))
			}
			for _, rec := range hist.Records {
				for _, k := range []string{"feasible", "violation", "best_feasible", "best_feasible_so_far"} {
					if _, ok := rec[k]; !ok {
						t.Fatalf("history record without %s: %v", k, rec)
					}
				}
			}
			if last := hist.Records[gens-1]; last["best_feasible_so_far"] != s.BestFeasible.F || last["best_so_far"] != s.Best.F {
				t.Fatalf("last history record %v", last)
			}
			checkConstraintsCSV(t, ts, id, hist.Records)
		})
	}
}

func ptr[T any](v T) *T { return &v }

// checkConstraintsCSV: the history as CSV has the constraint columns after
// the fixed ones, with the JSON records' values (empty for null).
func checkConstraintsCSV(t *testing.T, ts *testServer, id string, recs []map[string]any) {
	t.Helper()
	c := ts.do(t, call{method: "GET", path: "/v1/sessions/" + id + "/history?format=csv"})
	rows, err := csv.NewReader(strings.NewReader(string(c.body))).ReadAll()
	if err != nil || len(rows) != len(recs)+1 {
		t.Fatalf("csv: %d rows, %v", len(rows), err)
	}
	for i, name := range csvConstraintsHeader {
		if got := rows[0][len(csvHeader)+i]; got != name {
			t.Fatalf("csv column %d is %q, want %q: %v", len(csvHeader)+i, got, name, rows[0])
		}
	}
	for k, rec := range recs {
		for i, name := range csvConstraintsHeader {
			got, want := rows[k+1][len(csvHeader)+i], ""
			if v, ok := rec[name].(float64); ok {
				want = strconv.FormatFloat(v, 'g', -1, 64)
				if g, err := strconv.ParseFloat(got, 64); err == nil && g == v {
					continue
				}
			}
			if got != want {
				t.Errorf("generation %d: csv %s = %q, json %v", k, name, got, rec[name])
			}
		}
	}
}

// TestConstrainedBadInput: a bad constraints declaration and constraint
// values that do not fit the session are refused naming the field, and a
// refused tell changes nothing.
func TestConstrainedBadInput(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	base := func() map[string]any {
		return map[string]any{"x0": []float64{1, 1, 1}, "sigma0": 1, "seed": 9, "constraints": map[string]any{"count": 2}}
	}
	for _, c := range []struct {
		name   string
		edit   func(m map[string]any)
		status int
		want   string
	}{
		{"count 0", func(m map[string]any) { m["constraints"] = map[string]any{"count": 0} }, 422, "constraints.count 0"},
		{"count over", func(m map[string]any) { m["constraints"] = map[string]any{"count": 1001} }, 422, "constraints.count 1001"},
		{"no count", func(m map[string]any) { m["constraints"] = map[string]any{} }, 400, "constraints.count is required"},
		{"unknown field", func(m map[string]any) { m["constraints"] = map[string]any{"count": 1, "cuont": 2} }, 400, "constraints.cuont"},
		{"count a string", func(m map[string]any) { m["constraints"] = map[string]any{"count": "2"} }, 400, "constraints.count"},
		{"target", func(m map[string]any) { m["termination"] = map[string]any{"target_fitness": 1} }, 422, "termination.target_fitness"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := base()
			c.edit(body)
			r := ts.do(t, call{method: "POST", path: "/v1/sessions", body: body, invalid: c.name != "target"})
			e := decode[errorView](t, r)
			if r.status != c.status || !strings.Contains(e.Error.Message, c.want) {
				t.Fatalf("%d %s, want %d naming %s", r.status, r.body, c.status, c.want)
			}
		})
	}

	s := ts.create(t, base())
	plain := ts.create(t, map[string]any{"x0": []float64{1, 1, 1}, "sigma0": 1})
	b := ts.ask(t, s.ID)
	f, g := conValues(b)
	lam := len(f)
	for _, c := range []struct {
		name string
		id   string
		body map[string]any
		want string
	}{
		{"missing", s.ID, map[string]any{"generation": 0, "fitness": f}, "constraint_values is required"},
		{"rows", s.ID, map[string]any{"generation": 0, "fitness": f, "constraint_values": g[1:]}, "constraint_values has"},
		{"row width", s.ID, map[string]any{"generation": 0, "fitness": f, "constraint_values": append([]any{[]float64{1}}, g[1:]...)}, "constraint_values[0] has 1 values, want 2"},
		{"part", s.ID, map[string]any{"generation": 0, "indices": []int{2}, "fitness": f[2:3], "constraint_values": []any{[]float64{1, 2, 3}}}, "constraint_values[0] has 3 values"},
		{"unconstrained", plain.ID, map[string]any{"generation": 0, "fitness": make([]float64, lam), "constraint_values": g}, "no constraints"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ts.do(t, call{method: "POST", path: "/v1/sessions/" + c.id + "/tell", body: c.body})
			e := decode[errorView](t, r)
			if r.status != http.StatusUnprocessableEntity || !strings.Contains(e.Error.Message, c.want) {
				t.Fatalf("%d %s, want 422 naming %q", r.status, r.body, c.want)
			}
		})
	}
	r := ts.do(t, call{method: "POST", path: "/v1/sessions/" + s.ID + "/tell", body: `{"generation":0,"fitness":[1],"indices":[0],"constraint_values":[[1,"x"]]}`, invalid: true})
	if e := decode[errorView](t, r); r.status != http.StatusBadRequest || !strings.Contains(e.Error.Message, "constraint_values[0][1]") {
		t.Fatalf("a string among the constraint values: %d %s", r.status, r.body)
	}
	if now := decode[conView](t, ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID})); now.Generation != 0 || now.Partial != nil || now.Best != nil {
		t.Fatalf("a refused tell changed the session: %+v", now)
	}
}
