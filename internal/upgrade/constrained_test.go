package upgrade

// Upgrade safety of constrained sessions (issue 26): testdata/
// constrained.bbolt.gz holds two constrained sessions written by the
// commit that added this file (record schema 6, history schema 5), and
// testdata/constrained.json what that version answered on it, as
// expected.json does for layout4.bbolt.gz (see upgrade_test.go). Both
// were written with
//
//	go test ./internal/upgrade -run TestWriteConstrainedFixtures -args -write-constrained
//
// and are never regenerated: a later version keeps reading these sessions
// and continuing them bit for bit.

import (
	"context"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/exactbits"
	"github.com/selfcma/selfcma/internal/session"
)

var writeConstrained = flag.Bool("write-constrained", false, "write the constrained fixtures (only ever by the commit that added them)")

const (
	conFixtureFile  = "testdata/constrained.bbolt.gz"
	conExpectedFile = "testdata/constrained.json"
	conWrittenBy    = "issue 26, constrained sessions"
)

var conSessions = []fixtureSession{
	{"con_midrun", session.CreateParams{X0: []float64{1, -0.5, 2}, Sigma0: 0.5, Algorithm: "cma-es", Seed: u64(401), Name: "constrained mid-run",
		Constraints: &session.Constraints{Count: 2}}},
	{"con_self_partial", session.CreateParams{X0: []float64{1, 2, 3}, Sigma0: 0.4, Algorithm: "self-cma-es", PopulationSize: 10, Seed: u64(402),
		Constraints: &session.Constraints{Count: 1}}},
}

// conValues are f and g of the sphere with x_0 + 1 ≤ 0 (and, for m = 2,
// Σx² ≤ 9): candidate 1's f fails, candidate 2's first g is unknown.
func conValues(x [][]float64, m int) ([]float64, [][]float64) {
	f := make([]float64, len(x))
	g := make([][]float64, len(x))
	for k, p := range x {
		for _, v := range p {
			f[k] += v * v
		}
		g[k] = []float64{p[0] + 1, f[k] - 9}[:m]
	}
	f[1] = math.NaN()
	g[2][0] = math.NaN()
	return f, g
}

func tellCon(m *session.Manager, id string, g int, f []float64, c [][]float64, indices []int) (session.Session, error) {
	return m.Tell(context.Background(), id, session.TellParams{Generation: g, Fitness: f, Constraints: c, Indices: indices})
}

// conManifest is constrained.json.
type conManifest struct {
	Written  string            `json:"written"`
	IDs      map[string]string `json:"ids"`
	LastTell struct {
		Generation int
		Fitness    []string
		G          [][]string
	} `json:"last_tell"`
	Steps []step `json:"steps"`
}

func (m conManifest) meta() (string, []step) { return m.Written, m.Steps }

func TestWriteConstrainedFixtures(t *testing.T) {
	if !*writeConstrained {
		t.Skip("writes the constrained fixtures: run only by the commit that added them, with -args -write-constrained")
	}
	if _, err := os.Stat(conFixtureFile); err == nil {
		t.Fatalf("%s exists: it is never rewritten", conFixtureFile)
	}
	path := filepath.Join(t.TempDir(), "db")
	st := openStore(t, path, builtAt)
	m := newManager(st, builtAt)
	man := conManifest{Written: conWrittenBy, IDs: map[string]string{}}
	for _, fs := range conSessions {
		s, _, err := create(m, fs.params)
		if err != nil {
			t.Fatalf("%s: %v", fs.name, err)
		}
		id, mc := idOf(s), fs.params.Constraints.Count
		man.IDs[fs.name] = id
		step := func() {
			t.Helper()
			b, err := ask(m, id)
			if err != nil {
				t.Fatal(err)
			}
			f, g := conValues(candidatesOf(b), mc)
			if _, err := tellCon(m, id, batchGeneration(b), f, g, nil); err != nil {
				t.Fatalf("%s: %v", fs.name, err)
			}
			if fs.name != "con_midrun" {
				return
			}
			man.LastTell.Generation, man.LastTell.Fitness = batchGeneration(b), exactbits.Of(f).([]string)
			man.LastTell.G = nil
			for _, r := range g {
				man.LastTell.G = append(man.LastTell.G, exactbits.Of(r).([]string))
			}
		}
		switch fs.name {
		case "con_midrun":
			for range 12 {
				step()
			}
		case "con_self_partial":
			for range 4 {
				step()
			}
			b, err := ask(m, id)
			if err != nil {
				t.Fatal(err)
			}
			f, g := conValues(candidatesOf(b), mc)
			if _, err := tellCon(m, id, batchGeneration(b), f[:2], g[:2], []int{0, 1}); err != nil {
				t.Fatal(err)
			}
			if _, err := tellCon(m, id, batchGeneration(b), f[7:8], g[7:8], []int{7}); err != nil {
				t.Fatal(err)
			}
		}
	}
	closeStore(t, st)
	packFixture(t, path, conFixtureFile)
	st = openStore(t, unpackedFile(t, conFixtureFile), observeAt)
	man.Steps = observeConstrained(t, newManager(st, observeAt), man)
	if err := os.WriteFile(conExpectedFile, append(exactbits.JSON(t, man), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// observeConstrained: for each session what it reads (get, history, ask),
// the last tell sent again (con_midrun) or the values not held
// (con_self_partial), then three generations and their history.
func observeConstrained(t *testing.T, m *session.Manager, man conManifest) []step {
	t.Helper()
	o := &observer{t: t, m: m}
	sums, err := list(m)
	o.rec("list", sums, err)
	for _, fs := range conSessions {
		o.name = fs.name
		id, mc := man.IDs[fs.name], fs.params.Constraints.Count
		s, err := get(m, id)
		o.rec("get", s, err)
		if err != nil {
			t.Fatalf("%s: %v", fs.name, err)
		}
		h, err := history(m, id, 0)
		o.rec("history", h, err)
		b, err := ask(m, id)
		o.rec("ask", b, err)
		g := generationOf(s)
		switch fs.name {
		case "con_midrun":
			var rows [][]float64
			for _, r := range man.LastTell.G {
				rows = append(rows, exactbits.Floats(t, r))
			}
			s2, err := tellCon(m, id, man.LastTell.Generation, exactbits.Floats(t, man.LastTell.Fitness), rows, nil)
			o.rec("tell sent again", s2, err)
			if err != nil || generationOf(s2) != g {
				t.Errorf("%s: the last tell sent again: generation %d, %v; want %d", fs.name, generationOf(s2), err, g)
			}
		case "con_self_partial":
			held := heldOf(s)
			if !slices.Equal(held, []int{0, 1, 7}) {
				t.Errorf("%s: holds %v, want [0 1 7]", fs.name, held)
			}
			f, gv := conValues(candidatesOf(b), mc)
			var idx []int
			var fr []float64
			var gr [][]float64
			for k := range f {
				if !slices.Contains(held, k) {
					idx, fr, gr = append(idx, k), append(fr, f[k]), append(gr, gv[k])
				}
			}
			s2, err := tellCon(m, id, g, fr, gr, idx)
			o.rec("tell the rest", s2, err)
			if err == nil && generationOf(s2) != g+1 {
				t.Errorf("%s: generation %d after the rest, want %d", fs.name, generationOf(s2), g+1)
			}
		}
		for range 3 {
			b, err := ask(m, id)
			if err != nil {
				t.Fatalf("%s: %v", fs.name, err)
			}
			f, gv := conValues(candidatesOf(b), mc)
			s, err := tellCon(m, id, batchGeneration(b), f, gv, nil)
			o.rec("tell", s, err)
		}
		h, err = history(m, id, g)
		o.rec("history", h, err)
	}
	return o.steps
}

func TestUpgradeConstrained(t *testing.T) {
	checkManifestFixture(t, conExpectedFile, conFixtureFile, conWrittenBy, observeConstrained)
}
