// Package esfixture is the upgrade check shared by the engines' tests
// (cmaes and selfcma): a fixture holds a state written by commit b8986da
// and what that version did next (the batch asked, the values told, one of
// them a failed evaluation, and the state after each of three tells, every
// float64 as the hex of its bits); the check decodes the state with the
// current code, tells the same values and compares everything bit for bit.
package esfixture

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/exactbits"
)

// Written is the commit that wrote the fixtures. They are never written
// again by a later version: one that changes the encoding or the numerics
// keeps the old path for these states and adds fixtures of its own.
const Written = "b8986da"

// Fixture is one kind's file.
type Fixture struct {
	Kind    string `json:"kind"`
	Written string `json:"written"` // the commit that wrote it
	State   []byte `json:"state"`   // the encoded state, base64
	// Tells are the values told after Snaps[i]; Snaps has one more.
	Tells   [][]string `json:"tells"`
	Snaps   []any      `json:"snaps"`
	Records []any      `json:"records"`
	// TellErr is the outcome of a tell on a stopped state.
	TellErr string `json:"tell_err,omitempty"`
}

// ES is what the check needs of an engine; R is its Tell's record.
type ES[R any] interface {
	Ask() [][]float64
	Tell(f []float64) (R, error)
	Status() cmaes.Status
}

// Kind builds one kind of run as the fixture version left it.
type Kind[E any] struct {
	Name  string
	Build func(t *testing.T) E
}

// Suite is an engine's fixtures: where they are, the kinds of run, how a
// state encodes (internal/enginecodec) and decodes, and what a snapshot
// keeps of it (all the engine exposes).
type Suite[R any, E ES[R]] struct {
	Dir    string
	Kinds  []Kind[E]
	Decode func([]byte) (E, error)
	Encode func(E) []byte
	Snap   func(E) any
}

// Fitness is a rotated ellipsoid of every candidate but the second, whose
// evaluation failed.
func Fitness(x [][]float64) []float64 {
	f := make([]float64, len(x))
	for k, p := range x {
		n := len(p)
		for i := range n {
			y := p[i] + 0.5*p[(i+1)%n]
			f[k] += math.Pow(100, float64(i)/float64(max(n-1, 1))) * y * y
		}
	}
	if len(f) > 1 {
		f[1] = math.NaN()
	}
	return f
}

// Run tells e gens generations of Fitness.
func Run[R any](t *testing.T, e ES[R], gens int) {
	t.Helper()
	for range gens {
		if _, err := e.Tell(Fitness(e.Ask())); err != nil {
			t.Fatal(err)
		}
	}
}

// Continue tells e three generations, the values of the i-th by tell(i,
// batch), and returns what it saw. On a stopped e it returns the tell's
// error.
func (s Suite[R, E]) Continue(t *testing.T, e E, tell func(int, [][]float64) []float64) Fixture {
	t.Helper()
	fx := Fixture{Snaps: []any{s.Snap(e)}}
	if len(e.Status().Stop) > 0 {
		_, err := e.Tell(make([]float64, e.Status().Params.Lambda))
		fx.TellErr = fmt.Sprint(err)
		if !errors.Is(err, cmaes.ErrStopped) {
			t.Errorf("tell on a stopped state: %v, want ErrStopped", err)
		}
		return fx
	}
	for i := range 3 {
		f := tell(i, e.Ask())
		rec, err := e.Tell(f)
		if err != nil {
			t.Fatalf("tell %d: %v", i, err)
		}
		fx.Tells = append(fx.Tells, exactbits.Of(f).([]string))
		fx.Records = append(fx.Records, exactbits.Of(rec))
		fx.Snaps = append(fx.Snaps, s.Snap(e))
	}
	return fx
}

// Write writes the fixtures that are missing (only ever on commit
// Written).
func (s Suite[R, E]) Write(t *testing.T) {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fitness := func(_ int, x [][]float64) []float64 { return Fitness(x) }
	for _, k := range s.Kinds {
		e := k.Build(t)
		blob := s.Encode(e)
		// Continue a decoded copy, as the check does.
		d, err := s.Decode(blob)
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		fx := s.Continue(t, d, fitness)
		// The original continues the same way, or the blob lost something.
		if got := s.Continue(t, e, fitness); !reflect.DeepEqual(exactbits.JSON(t, got), exactbits.JSON(t, fx)) {
			t.Fatalf("%s: the decoded state does not continue as the original", k.Name)
		}
		fx.Kind, fx.Written, fx.State = k.Name, Written, blob
		path := filepath.Join(s.Dir, k.Name+".json")
		if _, err := os.Stat(path); err == nil {
			t.Logf("%s exists: kept as it is", path) // never rewritten
			continue
		}
		if err := os.WriteFile(path, exactbits.JSON(t, fx), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Check decodes every kind's state, continues it with the fixture's values
// and compares every snapshot and record with the fixture's, bit for bit.
func (s Suite[R, E]) Check(t *testing.T) {
	for _, k := range s.Kinds {
		t.Run(k.Name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(s.Dir, k.Name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var want Fixture
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			if want.Written != Written || len(want.Snaps) == 0 {
				t.Fatalf("fixture written by %q with %d snapshots", want.Written, len(want.Snaps))
			}
			e, err := s.Decode(want.State)
			if err != nil {
				t.Fatalf("decode the state of %s: %v", want.Written, err)
			}
			got := s.Continue(t, e, func(i int, x [][]float64) []float64 {
				if i >= len(want.Tells) {
					t.Fatalf("tell %d: the fixture has %d", i, len(want.Tells))
				}
				return exactbits.Floats(t, want.Tells[i])
			})
			var gotTree Fixture
			if err := json.Unmarshal(exactbits.JSON(t, got), &gotTree); err != nil {
				t.Fatal(err)
			}
			if len(gotTree.Snaps) != len(want.Snaps) {
				t.Fatalf("%d snapshots, want %d", len(gotTree.Snaps), len(want.Snaps))
			}
			d := exactbits.NewDiff(t)
			for i := range want.Snaps {
				d.Subset(fmt.Sprintf("snap[%d]", i), want.Snaps[i], gotTree.Snaps[i])
			}
			d.Subset("records", any(want.Records), any(gotTree.Records))
			d.Done()
			if gotTree.TellErr != want.TellErr {
				t.Errorf("tell on the stopped state: %q, want %q", gotTree.TellErr, want.TellErr)
			}
		})
	}
}
