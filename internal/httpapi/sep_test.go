package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"testing"

	"github.com/selfcma/selfcma/internal/sepcma"
)

// TestSepContract: a sep-cma-es session over the API: created with its
// name, reported with it, its covariance served as the diagonal (and the
// matrix up to 200 coordinates), active refused with 422 naming the field.
func TestSepContract(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	s := ts.create(t, map[string]any{"x0": []float64{1, 2, 3}, "sigma0": 0.5, "algorithm": "sep-cma-es", "seed": 4,
		"bounds": map[string]any{"lower": []float64{-5, -5, -5}, "upper": []float64{5, 5, 5}}})
	b := ts.ask(t, s.ID)
	ts.tell(t, s.ID, sphereTell(b))
	r := ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID})
	got := decode[struct {
		Algorithm string `json:"algorithm"`
		Active    bool   `json:"active"`
	}](t, r)
	if got.Algorithm != "sep-cma-es" || got.Active {
		t.Errorf("algorithm %q, active %v", got.Algorithm, got.Active)
	}
	r = ts.do(t, call{method: "GET", path: "/v1/sessions/" + s.ID + "/covariance"})
	c := decode[struct {
		C        [][]float64 `json:"c"`
		Diagonal []float64   `json:"c_diagonal"`
	}](t, r)
	if r.status != http.StatusOK || len(c.C) != 3 || len(c.Diagonal) != 3 || c.C[1][1] != c.Diagonal[1] || c.C[0][1] != 0 {
		t.Errorf("covariance %d: %s", r.status, r.body)
	}
	big := ts.create(t, map[string]any{"x0": make([]float64, 201), "sigma0": 1, "algorithm": "sep-cma-es"})
	r = ts.do(t, call{method: "GET", path: "/v1/sessions/" + big.ID + "/covariance"})
	c = decode[struct {
		C        [][]float64 `json:"c"`
		Diagonal []float64   `json:"c_diagonal"`
	}](t, r)
	if r.status != http.StatusOK || c.C != nil || len(c.Diagonal) != 201 {
		t.Errorf("covariance at n = 201: %d, %d rows, %d diagonal values", r.status, len(c.C), len(c.Diagonal))
	}
	r = ts.do(t, call{method: "POST", path: "/v1/sessions", body: map[string]any{"x0": []float64{1}, "sigma0": 1, "algorithm": "sep-cma-es", "active": true}})
	if e := decode[errorView](t, r); r.status != http.StatusUnprocessableEntity || !bytes.Contains([]byte(e.Error.Message), []byte("active")) {
		t.Errorf("active sep-cma-es: %d %s", r.status, r.body)
	}
}

// rawJSON sends body (nil: none) as JSON and decodes the answer into out,
// without the contract check (whose validator takes minutes over the 10^6
// numbers of a batch at n = 10^5).
func rawJSON(t *testing.T, ts *testServer, method, path string, body any, want int, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, ts.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: %d %.300s", method, path, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

// TestSepLargeDimension: a sep-cma-es session of n = 10^5 (50 times the
// other algorithms' limit) is created and run over HTTP for a few
// generations; with its batch asked, the server's heap has grown by what
// the engine states it holds (sepcma.HeldBytes, which the cache counts),
// within 25 %.
func TestSepLargeDimension(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a session of n = 10^5 over HTTP takes seconds")
	}
	const n, lambda, gens = 100000, 10, 3
	ts := newTestServer(t, serverOpts{})
	base := liveHeap()
	var s sessionView
	rawJSON(t, ts, "POST", "/v1/sessions", map[string]any{"x0": make([]float64, n), "sigma0": 1, "algorithm": "sep-cma-es",
		"population_size": lambda, "seed": 1}, http.StatusCreated, &s)
	for g := range gens {
		var b batchView
		rawJSON(t, ts, "GET", "/v1/sessions/"+s.ID+"/ask", nil, http.StatusOK, &b)
		if b.Generation != g || len(b.Candidates) != lambda || len(b.Candidates[0]) != n {
			t.Fatalf("generation %d: batch of generation %d, %d candidates of %d", g, b.Generation, len(b.Candidates), len(b.Candidates[0]))
		}
		rawJSON(t, ts, "POST", "/v1/sessions/"+s.ID+"/tell", sphereTell(b), http.StatusOK, &s)
	}
	if s.Generation != gens || s.Best == nil || len(s.Best.X) != n {
		t.Fatalf("after %d generations: %+v", gens, s.Generation)
	}
	s.Best = nil
	var b batchView // the pending batch asked: the server keeps its copy to hand out
	rawJSON(t, ts, "GET", "/v1/sessions/"+s.ID+"/ask", nil, http.StatusOK, &b)
	b.Candidates = nil
	held := liveHeap() - base
	stated := sepcma.HeldBytes(n, lambda, false) // what the cache counts (internal/session's TestSepHeldBytes)
	t.Logf("n = %d, λ = %d: the engine states %d bytes, the heap grew by %d", n, lambda, stated, held)
	if float64(held) > 1.25*float64(stated) || float64(held) < 0.75*float64(stated) {
		t.Errorf("the heap grew by %d bytes, the engine states %d: want within 25 %%", held, stated)
	}
}

// liveHeap is the heap in use after two collections.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
