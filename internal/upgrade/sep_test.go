package upgrade

// Upgrade safety of sep-cma-es sessions: testdata/sep1.bbolt.gz is a bbolt
// file (store layout 5) holding one sep-cma-es session of each kind
// (sepFixtureSessions), written with
//
//	go test ./internal/upgrade -run TestWriteSepFixtures -args -write-sep
//
// by the code of commit sepWrittenBy (the first with sep-cma-es sessions:
// sepcma state version 2), and testdata/sep1.json what that code answered
// on it (observe, as for layout4.bbolt.gz). As the layout-4 fixtures, they
// are never regenerated: a later change of sepcma's encoding or numerics
// keeps the path of these sessions and adds fixtures of its own.

import (
	"context"
	"flag"
	"testing"

	"github.com/selfcma/selfcma/internal/exactbits"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

var writeSep = flag.Bool("write-sep", false, "write the sep-cma-es fixtures (only ever on commit "+sepWrittenBy+")")

const (
	sepFixtureFile  = "testdata/sep1.bbolt.gz"
	sepExpectedFile = "testdata/sep1.json"
	sepWrittenBy    = "9e0e27c"
	sepLayout       = 5
)

var sepFixtureSessions = []fixtureSession{
	{"sep_midrun", session.CreateParams{X0: []float64{1, -0.5, 2, 0.3}, Sigma0: 0.5, Algorithm: "sep-cma-es", Seed: u64(401), Name: "sep mid-run",
		Bounds: &session.Bounds{Lower: []float64{-1, -1, 0, 0}, Upper: []float64{3, 3, 3, 1}}}},
	{"sep_bipop", session.CreateParams{X0: []float64{2, -2}, Sigma0: 1, Algorithm: "sep-cma-es", Seed: u64(402),
		Restarts:    session.Restarts{Strategy: "bipop", Max: intp(3), Region: &session.Bounds{Lower: []float64{-3, -3}, Upper: []float64{3, 3}}, Point: "uniform"},
		Termination: session.Termination{TolFun: f64(1e-6)}}},
	{"sep_partial", session.CreateParams{X0: []float64{1, 2, 3}, Sigma0: 0.4, Algorithm: "sep-cma-es", PopulationSize: 10, Seed: u64(403)}},
	{"sep_lease", session.CreateParams{X0: []float64{0.1, 0.2, 0.3}, Sigma0: 0.3, Algorithm: "sep-cma-es", Seed: u64(404)}},
	{"sep_stopped", session.CreateParams{X0: []float64{1, 1}, Sigma0: 0.3, Algorithm: "sep-cma-es", Seed: u64(405)}},
}

func inject(m *session.Manager, id string, points [][]float64) error {
	_, err := m.Inject(context.Background(), id, points, true)
	return err
}

// sepBuild makes the sessions of the sep fixture in m and returns the
// manifest without its steps.
func sepBuild(t *testing.T, m *session.Manager) manifest {
	t.Helper()
	man := manifest{Written: sepWrittenBy, Layout: bolt.SchemaVersion, IDs: map[string]string{}}
	for _, fs := range sepFixtureSessions {
		s, _, err := create(m, fs.params)
		if err != nil {
			t.Fatalf("%s: %v", fs.name, err)
		}
		id := idOf(s)
		man.IDs[fs.name] = id
		step := func() {
			t.Helper()
			b, err := ask(m, id)
			if err != nil {
				t.Fatalf("%s: %v", fs.name, err)
			}
			f := fitness(candidatesOf(b))
			if _, err := tell(m, id, batchGeneration(b), f, nil); err != nil {
				t.Fatalf("%s: %v", fs.name, err)
			}
			if fs.name == "sep_midrun" {
				man.LastTell.Generation = batchGeneration(b)
				man.LastTell.Fitness = exactbits.Of(f).([]string)
			}
		}
		switch fs.name {
		case "sep_midrun":
			for g := range 15 {
				if g == 10 { // an injected point in generation 11's batch
					if err := inject(m, id, [][]float64{{0, 0, 0.5, 0.5}}); err != nil {
						t.Fatal(err)
					}
				}
				step()
			}
		case "sep_bipop":
			for g := 0; ; g++ {
				s, err := get(m, id)
				if err != nil {
					t.Fatal(err)
				}
				if restartsOf(s) >= 2 {
					break
				}
				if g > 5000 {
					t.Fatal("no restart in 5000 generations")
				}
				step()
			}
			step()
			// A point waiting for the next batch.
			if err := inject(m, id, [][]float64{{0.25, -0.25}}); err != nil {
				t.Fatal(err)
			}
		case "sep_partial":
			for range 4 {
				step()
			}
			b, err := ask(m, id)
			if err != nil {
				t.Fatal(err)
			}
			f := fitness(candidatesOf(b))
			if _, err := tell(m, id, batchGeneration(b), []float64{f[0], f[1]}, []int{0, 1}); err != nil {
				t.Fatal(err)
			}
			if _, err := tell(m, id, batchGeneration(b), []float64{f[7]}, []int{7}); err != nil {
				t.Fatal(err)
			}
		case "sep_lease":
			for range 3 {
				step()
			}
			c, err := claim(m, id, leaseWorker)
			if err != nil {
				t.Fatal(err)
			}
			man.Lease.Generation, man.Lease.Index = claimGeneration(c), claimIndex(c)
		case "sep_stopped":
			for range 2 {
				step()
			}
			if _, err := stop(m, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	return man
}

// sepObserve is observe over the sep fixture's sessions.
func sepObserve(t *testing.T, m *session.Manager, man manifest) []step {
	t.Helper()
	o := &observer{t: t, m: m, man: man}
	sums, err := list(m)
	o.rec("list", sums, err)
	for _, fs := range sepFixtureSessions {
		o.session(fs)
	}
	return o.steps
}

func TestWriteSepFixtures(t *testing.T) {
	if !*writeSep {
		t.Skip("writes the sep-cma-es fixtures of commit " + sepWrittenBy + ": run only on that commit, with -args -write-sep")
	}
	sepFixture.write(t)
}

// TestUpgradeSep: the sep-cma-es sessions of sepWrittenBy continue bit for
// bit under the current code: reads, batches, a tell sent again, the rest
// of a partial tell, leases, a stopped session, an injected point waiting,
// and three more generations of each.
func TestUpgradeSep(t *testing.T) { sepFixture.check(t) }

var sepFixture = boltFixture{file: sepFixtureFile, expected: sepExpectedFile, writtenBy: sepWrittenBy,
	layout: sepLayout, build: sepBuild, observe: sepObserve}
