package upgrade

// Upgrade safety of CMA-ES sessions with the lazy update of B and D
// (cmaes.NumericsLazy, state encoding 8): testdata/lazy1.bbolt.gz holds one
// cma-es session at n = cmaes.LazyMinDimension (100), the smallest a new
// session decomposes lazily at, told three generations so that its B and D
// are those of the second update's C (the lazy gap is about 1.14 updates),
// written with
//
//	go test ./internal/upgrade -run TestWriteLazyUpgradeFixtures -args -write-lazy
//
// by the code of commit lazyWrittenBy, and testdata/lazy1.json what that
// code answered on it (observe, as for layout4.bbolt.gz). Never
// regenerated: a later change of the encoding or the numerics keeps the
// path of this session and adds fixtures of its own.

import (
	"flag"
	"testing"

	"github.com/selfcma/selfcma/internal/exactbits"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

var writeLazy = flag.Bool("write-lazy", false, "write the lazy-update fixtures (only ever on commit "+lazyWrittenBy+")")

const (
	lazyFixtureFile  = "testdata/lazy1.bbolt.gz"
	lazyExpectedFile = "testdata/lazy1.json"
	lazyWrittenBy    = "2547556"
	lazyLayout       = 5
)

func lazyX0() []float64 {
	x0 := make([]float64, 100)
	for i := range x0 {
		x0[i] = 1 - float64(i%7)/4
	}
	return x0
}

var lazyFixtureSessions = []fixtureSession{
	{"lazy_midrun", session.CreateParams{X0: lazyX0(), Sigma0: 0.5, Algorithm: "cma-es", Seed: u64(501), Name: "lazy mid-run"}},
}

// lazyBuild makes the session of the lazy fixture in m and returns the
// manifest without its steps.
func lazyBuild(t *testing.T, m *session.Manager) manifest {
	t.Helper()
	man := manifest{Written: lazyWrittenBy, Layout: bolt.SchemaVersion, IDs: map[string]string{}}
	fs := lazyFixtureSessions[0]
	s, _, err := create(m, fs.params)
	if err != nil {
		t.Fatalf("%s: %v", fs.name, err)
	}
	id := idOf(s)
	man.IDs[fs.name] = id
	for range 3 {
		b, err := ask(m, id)
		if err != nil {
			t.Fatal(err)
		}
		f := fitness(candidatesOf(b))
		if _, err := tell(m, id, batchGeneration(b), f, nil); err != nil {
			t.Fatal(err)
		}
		man.LastTell.Generation = batchGeneration(b)
		man.LastTell.Fitness = exactbits.Of(f).([]string)
	}
	return man
}

// lazyObserve is observe over the lazy fixture's session.
func lazyObserve(t *testing.T, m *session.Manager, man manifest) []step {
	t.Helper()
	o := &observer{t: t, m: m, man: man}
	for _, fs := range lazyFixtureSessions {
		o.session(fs)
	}
	return o.steps
}

func TestWriteLazyUpgradeFixtures(t *testing.T) {
	if !*writeLazy {
		t.Skip("writes the lazy-update fixtures of commit " + lazyWrittenBy + ": run only on that commit, with -args -write-lazy")
	}
	lazyFixture.write(t)
}

// TestUpgradeLazy: the lazy cma-es session of lazyWrittenBy, stored
// between two decompositions of C, continues bit for bit under the current
// code: reads, the batch, the last tell sent again, and three more
// generations.
func TestUpgradeLazy(t *testing.T) { lazyFixture.check(t) }

var lazyFixture = boltFixture{file: lazyFixtureFile, expected: lazyExpectedFile, writtenBy: lazyWrittenBy,
	layout: lazyLayout, build: lazyBuild, observe: lazyObserve}
