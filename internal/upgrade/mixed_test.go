package upgrade

// Upgrade safety of mixed sessions (issue 26): testdata/mixed.bbolt.gz
// holds two mixed sessions (algorithm catcma; catcma state encoding 2)
// written by the commit that added this file, and testdata/mixed.json what
// that version answered on it, as constrained.json does for
// constrained.bbolt.gz. Both were written with
//
//	go test ./internal/upgrade -run TestWriteMixedFixtures -args -write-mixed
//
// and are never regenerated.

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

var writeMixed = flag.Bool("write-mixed", false, "write the mixed fixtures (only ever by the commit that added them)")

const (
	mixFixtureFile  = "testdata/mixed.bbolt.gz"
	mixExpectedFile = "testdata/mixed.json"
	mixWrittenBy    = "issue 26, mixed sessions"
)

var mixSessions = []fixtureSession{
	{"mix_midrun", session.CreateParams{X0: []float64{2, 2}, Seed: u64(501), Name: "mixed mid-run",
		Bounds:   &session.Bounds{Lower: []float64{-1, -1}, Upper: []float64{5, 5}},
		Integers: [][]float64{{0, 1, 2, 3}, {0.01, 0.1, 1}}, Categories: []int{3, 5}}},
	{"mix_con_partial", session.CreateParams{Seed: u64(502), PopulationSize: 8, Sigma0: 0.7,
		Integers: [][]float64{{-2, -1, 0, 1, 2, 3}}, Categories: []int{4},
		Constraints: &session.Constraints{Count: 1}}},
}

// askMixed is the pending batch with its z and c.
func askMixed(m *session.Manager, id string) (session.Batch, error) {
	return m.Ask(context.Background(), id)
}

// mixValues are f = Σx² + Σz² + #(c ≠ 0) and g = z_0 − 1 (≤ 0 feasible):
// candidate 1's f fails.
func mixValues(b session.Batch) ([]float64, [][]float64) {
	f := make([]float64, len(b.Candidates))
	g := make([][]float64, len(b.Candidates))
	for k, x := range b.Candidates {
		for _, v := range x {
			f[k] += v * v
		}
		for _, v := range b.Z[k] {
			f[k] += v * v
		}
		for _, c := range b.C[k] {
			if c != 0 {
				f[k]++
			}
		}
		g[k] = []float64{b.Z[k][0] - 1}
	}
	f[1] = math.NaN()
	return f, g
}

// tellMix tells values of session fs (constraint values if it has them).
func tellMix(m *session.Manager, fs fixtureSession, id string, g int, f []float64, c [][]float64, indices []int) (session.Session, error) {
	if fs.params.Constraints == nil {
		c = nil
	}
	return m.Tell(context.Background(), id, session.TellParams{Generation: g, Fitness: f, Constraints: c, Indices: indices})
}

// mixManifest is mixed.json.
type mixManifest struct {
	Written  string            `json:"written"`
	IDs      map[string]string `json:"ids"`
	LastTell struct {
		Generation int
		Fitness    []string
	} `json:"last_tell"`
	Steps []step `json:"steps"`
}

func (m mixManifest) meta() (string, []step) { return m.Written, m.Steps }

func TestWriteMixedFixtures(t *testing.T) {
	if !*writeMixed {
		t.Skip("writes the mixed fixtures: run only by the commit that added them, with -args -write-mixed")
	}
	if _, err := os.Stat(mixFixtureFile); err == nil {
		t.Fatalf("%s exists: it is never rewritten", mixFixtureFile)
	}
	path := filepath.Join(t.TempDir(), "db")
	st := openStore(t, path, builtAt)
	m := newManager(st, builtAt)
	man := mixManifest{Written: mixWrittenBy, IDs: map[string]string{}}
	for _, fs := range mixSessions {
		s, _, err := create(m, fs.params)
		if err != nil {
			t.Fatalf("%s: %v", fs.name, err)
		}
		id := idOf(s)
		man.IDs[fs.name] = id
		gens := map[string]int{"mix_midrun": 12, "mix_con_partial": 4}[fs.name]
		for range gens {
			b, err := askMixed(m, id)
			if err != nil {
				t.Fatal(err)
			}
			f, g := mixValues(b)
			if _, err := tellMix(m, fs, id, b.Generation, f, g, nil); err != nil {
				t.Fatalf("%s: %v", fs.name, err)
			}
			if fs.name == "mix_midrun" {
				man.LastTell.Generation, man.LastTell.Fitness = b.Generation, exactbits.Of(f).([]string)
			}
		}
		if fs.name == "mix_con_partial" {
			b, err := askMixed(m, id)
			if err != nil {
				t.Fatal(err)
			}
			f, g := mixValues(b)
			for _, idx := range [][]int{{0, 1}, {5}} {
				if _, err := tellMix(m, fs, id, b.Generation, pick(f, idx), pick(g, idx), idx); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	closeStore(t, st)
	packFixture(t, path, mixFixtureFile)
	st = openStore(t, unpackedFile(t, mixFixtureFile), observeAt)
	man.Steps = observeMixed(t, newManager(st, observeAt), man)
	if err := os.WriteFile(mixExpectedFile, append(exactbits.JSON(t, man), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func pick[T any](v []T, idx []int) []T {
	var out []T
	for _, k := range idx {
		out = append(out, v[k])
	}
	return out
}

// observeMixed: for each session what it reads (get, history, ask with z
// and c), the last tell sent again (mix_midrun) or the values not held
// (mix_con_partial), a claim, then three generations and their history.
func observeMixed(t *testing.T, m *session.Manager, man mixManifest) []step {
	t.Helper()
	o := &observer{t: t, m: m}
	sums, err := list(m)
	o.rec("list", sums, err)
	for _, fs := range mixSessions {
		o.name = fs.name
		id := man.IDs[fs.name]
		s, err := get(m, id)
		o.rec("get", s, err)
		if err != nil {
			t.Fatalf("%s: %v", fs.name, err)
		}
		h, err := history(m, id, 0)
		o.rec("history", h, err)
		b, err := askMixed(m, id)
		o.rec("ask", b, err)
		g := generationOf(s)
		switch fs.name {
		case "mix_midrun":
			s2, err := tellMix(m, fs, id, man.LastTell.Generation, exactbits.Floats(t, man.LastTell.Fitness), nil, nil)
			o.rec("tell sent again", s2, err)
			if err != nil || generationOf(s2) != g {
				t.Errorf("%s: the last tell sent again: generation %d, %v; want %d", fs.name, generationOf(s2), err, g)
			}
		case "mix_con_partial":
			held := heldOf(s)
			if !slices.Equal(held, []int{0, 1, 5}) {
				t.Errorf("%s: holds %v, want [0 1 5]", fs.name, held)
			}
			c, err := claim(m, id, leaseWorker)
			o.rec("claim", c, err)
			f, gv := mixValues(b)
			var idx []int
			for k := range f {
				if !slices.Contains(held, k) {
					idx = append(idx, k)
				}
			}
			s2, err := tellMix(m, fs, id, g, pick(f, idx), pick(gv, idx), idx)
			o.rec("tell the rest", s2, err)
			if err == nil && generationOf(s2) != g+1 {
				t.Errorf("%s: generation %d after the rest, want %d", fs.name, generationOf(s2), g+1)
			}
		}
		for range 3 {
			b, err := askMixed(m, id)
			if err != nil {
				t.Fatalf("%s: %v", fs.name, err)
			}
			f, gv := mixValues(b)
			s, err := tellMix(m, fs, id, b.Generation, f, gv, nil)
			o.rec("tell", s, err)
		}
		h, err = history(m, id, g)
		o.rec("history", h, err)
	}
	return o.steps
}

func TestUpgradeMixed(t *testing.T) {
	checkManifestFixture(t, mixExpectedFile, mixFixtureFile, mixWrittenBy, observeMixed)
}
