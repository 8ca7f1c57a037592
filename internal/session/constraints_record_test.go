package session

import (
	"bytes"
	"encoding/hex"
	"flag"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/constraints"
	"github.com/selfcma/selfcma/internal/enginecodec"
	"github.com/selfcma/selfcma/internal/exactbits"
)

var writeSchema6 = flag.Bool("write-schema6", false, "write testdata/meta-schema6.hex and history-schema5.hex (once, by the commit that made them)")

// schema6Meta is the record of testdata/meta-schema6.hex: a constrained
// session (m = 2, n = 2) after one tell, with two values held.
func schema6Meta(t *testing.T) *meta {
	al, err := constraints.New(2, 2)
	if err != nil {
		t.Fatal(err)
	}
	f := []float64{1, 2, 3, 4, 5, 6}
	g := [][]float64{{-1, 0.5}, {0.25, -2}, {1, 1}, {-0.5, -0.5}, {2, -1}, {0, 0}}
	if _, err := al.Tell(f, g); err != nil {
		t.Fatal(err)
	}
	blob := enginecodec.AppendAL(nil, al)
	best := 1.0
	nan := math.NaN()
	return &meta{ID: "v6", Name: "constrained", Algorithm: AlgorithmCMAES, CreatedAt: time.Unix(5, 7).UTC(), UpdatedAt: time.Unix(6, 0).UTC(),
		Dimension: 2, PopulationSize: 6, Status: StatusRunning, Generation: 1, Evaluations: 6, BestF: &best,
		LastTell: &lastTell{Generation: 0, Fitness: []nullNum{1, 2, 3, 4, 5, 6},
			G: [][]float64{{-1, 0.5}, {0.25, -2}, {1, 1}, {-0.5, -0.5}, {2, -1}, {nan, 0}}},
		Partial: &partialTell{Generation: 1, Indices: []int{0, 3}, Fitness: []float64{7, nan}, G: [][]float64{{-1, -1}, {nan, nan}}},
		Constrained: &constrainedMeta{M: 2, AL: blob,
			Best:     &Best{X: []float64{0.5, -0.25}, F: 1, Generation: 0},
			Feasible: &FeasibleBest{X: []float64{-0.5, 0.75}, F: 4, G: []float64{-0.5, -0.5}, Generation: 0}},
	}
}

func schema5History() HistoryRecord {
	h := distributionRecord(7, 3)
	h.Constraint = &ConstraintRecord{Feasible: 2, Violation: 0, BestFeasible: 0.5, BestFeasibleSoFar: 0.25}
	return h
}

// golden reads testdata/name's hex, or writes b there with -write-schema6.
func golden(t *testing.T, name string, b []byte) []byte {
	t.Helper()
	path := "testdata/" + name
	if *writeSchema6 {
		if err := os.WriteFile(path, []byte(hex.EncodeToString(b)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// TestMetaSchema6: a constrained session's record is written in schema 6,
// byte for byte as testdata/meta-schema6.hex holds it, and reads back with
// its constraint values, NaN as NaN.
func TestMetaSchema6(t *testing.T) {
	m := schema6Meta(t)
	b, err := encodeMeta(m)
	if err != nil {
		t.Fatal(err)
	}
	want := golden(t, "meta-schema6.hex", b)
	if !bytes.Equal(b, want) {
		t.Fatalf("schema 6 is written\n%x\nnot as the fixture holds it\n%x", b, want)
	}
	got, err := decodeMeta(want)
	if err != nil {
		t.Fatal(err)
	}
	m.Schema = 6
	if !sameMeta(got, m) {
		t.Fatalf("decoded %+v\nwant    %+v", got, m)
	}
	for i, r := range m.LastTell.G {
		if !exactbits.Same(got.LastTell.G[i], r) {
			t.Fatalf("last tell's constraint values %v, want %v", got.LastTell.G, m.LastTell.G)
		}
	}
	for i, r := range m.Partial.G {
		if !exactbits.Same(got.Partial.G[i], r) {
			t.Fatalf("held constraint values %v, want %v", got.Partial.G, m.Partial.G)
		}
	}
	if err := checkConstrained(got); err != nil {
		t.Fatal(err)
	}
	// Every cut of the record is refused, never read as another.
	for k := range len(b) - 4 {
		if _, err := decodeMeta(b[:k]); err == nil {
			t.Fatalf("the record cut at %d bytes decoded", k)
		}
	}
	// A record without constraints is written in the schema it was.
	m.Constrained, m.LastTell.G, m.Partial.G = nil, nil, nil
	if b, _ := encodeMeta(m); b[8+len(metaMagic)] == 6 {
		t.Fatal("an unconstrained record is written in schema 6")
	}
}

// TestHistorySchema5: a constrained session's history entry is written in
// schema 5, byte for byte as testdata/history-schema5.hex holds it.
func TestHistorySchema5(t *testing.T) {
	h := schema5History()
	b, err := encodeHistory(h)
	if err != nil {
		t.Fatal(err)
	}
	want := golden(t, "history-schema5.hex", b)
	if !bytes.Equal(b, want) {
		t.Fatalf("schema 5 is written\n%x\nnot as the fixture holds it\n%x", b, want)
	}
	got, err := decodeHistory(want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Constraint, h.Constraint) || got.Generation != h.Generation || !reflect.DeepEqual(got.Mean, h.Mean) {
		t.Fatalf("decoded %+v %+v", got, got.Constraint)
	}
}
