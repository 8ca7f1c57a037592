package upgrade

// Upgrade safety of the told-value log (store layout 6):
// testdata/told6.bbolt.gz and testdata/told6.told.gz are a bbolt file and
// its log as a crash left them: the partial tells and the stop of
// toldFixtureSessions are in the log only, not yet folded into the file.
// They were written with
//
//	go test ./internal/upgrade -run TestWriteToldUpgradeFixtures -args -write-told
//
// by the code of commit toldWrittenBy, and testdata/told6.json is what
// that code answered on them (observe, as for layout4.bbolt.gz). Never
// regenerated: a later layout reads this log (or migrates it) and adds
// fixtures of its own.

import (
	"flag"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

var writeTold = flag.Bool("write-told", false, "write the told-value log fixtures (only ever on commit "+toldWrittenBy+")")

const (
	toldFixtureFile  = "testdata/told6.bbolt.gz"
	toldLogFile      = "testdata/told6.told.gz"
	toldExpectedFile = "testdata/told6.json"
	toldWrittenBy    = "06ea968"
	toldLayout       = 6
)

// The names are those of the kinds observe knows: a partial tell whose
// values are held (0, 1 and 7), a stopped session.
var toldFixtureSessions = []fixtureSession{
	{"self_partial", session.CreateParams{X0: []float64{1, 2, 3}, Sigma0: 0.4, Algorithm: "self-cma-es", PopulationSize: 10, Seed: u64(601)}},
	{"stopped_client", session.CreateParams{X0: []float64{1, 1}, Sigma0: 0.3, Algorithm: "cma-es", Seed: u64(602)}},
}

// toldBuild makes the sessions of the fixture in m: whole generations
// (committed to the file), then the partial tells and the stop (to the
// log).
func toldBuild(t *testing.T, m *session.Manager) manifest {
	t.Helper()
	man := manifest{Written: toldWrittenBy, Layout: bolt.SchemaVersion, IDs: map[string]string{}}
	for _, fs := range toldFixtureSessions {
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
			if _, err := tell(m, id, batchGeneration(b), fitness(candidatesOf(b)), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Then the writes of a meta only, which the log takes (a commit to
	// the file would fold it).
	id := man.IDs["self_partial"]
	b, err := ask(m, id)
	if err != nil {
		t.Fatal(err)
	}
	f := fitness(candidatesOf(b))
	for _, k := range [][]int{{0, 1}, {7}} {
		var v []float64
		for _, i := range k {
			v = append(v, f[i])
		}
		if _, err := tell(m, id, batchGeneration(b), v, k); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := stop(m, man.IDs["stopped_client"]); err != nil {
		t.Fatal(err)
	}
	return man
}

func toldObserve(t *testing.T, m *session.Manager, man manifest) []step {
	t.Helper()
	o := &observer{t: t, m: m, man: man}
	sums, err := list(m)
	o.rec("list", sums, err)
	for _, fs := range toldFixtureSessions {
		o.session(fs)
	}
	return o.steps
}

func TestWriteToldUpgradeFixtures(t *testing.T) {
	if !*writeTold {
		t.Skip("writes the told-value log fixtures of commit " + toldWrittenBy + ": run only on that commit, with -args -write-told")
	}
	toldFixture.write(t)
}

// TestUpgradeTold: the file and log of toldWrittenBy, left by a crash,
// open with the told values of the log (the values held of the partial
// tell, the stop), and the sessions continue bit for bit: the rest of the
// generation, three more, a stopped session refusing a tell.
func TestUpgradeTold(t *testing.T) { toldFixture.check(t) }

var toldFixture = boltFixture{file: toldFixtureFile, log: toldLogFile, expected: toldExpectedFile, writtenBy: toldWrittenBy,
	layout: toldLayout, build: toldBuild, observe: toldObserve}
