package session

import (
	"context"
	"encoding/hex"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/binenc"
)

// The per-coordinate values are kept for every generation below 1000, then
// for every 2nd generation up to 2000, every 4th up to 4000, and so on;
// never above 100 coordinates. A 100 000-generation run keeps at most
// 1000 + 500·⌈log2 100⌉ of them.
func TestHistoryKeepsCoordinates(t *testing.T) {
	for _, c := range []struct {
		g, n int
		want bool
	}{
		{0, 1, true}, {999, 10, true}, {999, HistoryMaxCoordinates, true}, {5, HistoryMaxCoordinates + 1, false},
		{0, 0, false}, {-1, 3, false},
		{1000, 10, true}, {1001, 10, false}, {1002, 10, true}, {1999, 10, false},
		{2000, 10, true}, {2002, 10, false}, {2004, 10, true}, {3996, 10, true}, {3998, 10, false},
		{4000, 10, true}, {4004, 10, false}, {4008, 10, true},
		{64000, 10, true}, {64064, 10, false}, {64128, 10, true},
	} {
		if got := HistoryKeepsCoordinates(c.g, c.n); got != c.want {
			t.Errorf("HistoryKeepsCoordinates(%d, %d) = %v, want %v", c.g, c.n, got, c.want)
		}
	}
	const G = 100_000
	kept, last := 0, 0
	for g := range G {
		if !HistoryKeepsCoordinates(g, 10) {
			continue
		}
		// The gap to the previous kept generation is at most g/500.
		if gap := g - last; g >= HistoryDenseGenerations && float64(gap) > float64(g)/500 {
			t.Fatalf("generation %d kept %d after the previous one", g, gap)
		}
		kept, last = kept+1, g
	}
	if bound := 1000 + 500*int(math.Ceil(math.Log2(G/1000))); kept > bound || kept < 4000 {
		t.Errorf("%d of %d generations keep the coordinates, want about 1000 + 500·log2(%d/1000) ≤ %d", kept, G, G, bound)
	}
}

func distributionRecord(g, n int) HistoryRecord {
	h := HistoryRecord{Generation: g, Lambda: 10, Evaluations: 10 * (g + 1), Best: 1, Median: 2, BestSoFar: 1, Sigma: 0.5,
		C1: 0.1, CMu: 0.2, Cc: 0.3, AxisRatio: 4, OverallStep: 1.25}
	for i := range n {
		h.AxisLengths = append(h.AxisLengths, float64(i+1)/3)
		h.Stds = append(h.Stds, 0.1*float64(i)+1e-300)
		h.Mean = append(h.Mean, -float64(i)+0.1)
	}
	return h
}

// An entry of schema 3 keeps the overall step always and the
// per-coordinate values where the rule says so.
func TestHistorySchema3(t *testing.T) {
	for _, c := range []struct {
		name string
		h    HistoryRecord
		keep bool
	}{
		{"kept", distributionRecord(7, 3), true},
		{"kept, n = 100", distributionRecord(1000, HistoryMaxCoordinates), true},
		{"between kept generations", distributionRecord(1001, 3), false},
		{"n = 101", distributionRecord(7, HistoryMaxCoordinates+1), false},
		{"no coordinates", distributionRecord(7, 0), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := encodeHistory(c.h)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeHistory(b)
			if err != nil {
				t.Fatal(err)
			}
			want := c.h
			if !c.keep {
				want.AxisLengths, want.Stds, want.Mean = nil, nil, nil
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("decoded %+v\nwant    %+v", got, want)
			}
			if size := len(b); !c.keep && size > 200 {
				t.Errorf("an entry without coordinates takes %d bytes", size)
			}
		})
	}

	// Vectors of different lengths do not read.
	w := binenc.NewWriter(historyMagic, 3)
	for range 4 {
		w.Int(1)
	}
	for range 8 {
		w.Float(1)
	}
	w.Bool(false)
	w.Bool(false)
	w.Float(1)
	w.Bool(true)
	w.Floats([]float64{1, 2})
	w.Floats([]float64{1})
	w.Floats([]float64{1, 2})
	if h, err := decodeHistory(w.Finish()); err == nil {
		t.Errorf("an entry of 2 axis lengths, 1 std and 2 mean coordinates decoded as %+v", h)
	}
}

// An entry of schema 2, as servers before schema 3 wrote it
// (testdata/history-schema2.hex), reads, without the distribution.
func TestHistorySchema2(t *testing.T) {
	golden, err := os.ReadFile("testdata/history-schema2.hex")
	if err != nil {
		t.Fatal(err)
	}
	old, err := hex.DecodeString(strings.TrimSpace(string(golden)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeHistory(old)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(got.Median) || !math.IsNaN(got.OverallStep) {
		t.Errorf("median %v, overall step %v: want NaN (the entry has none)", got.Median, got.OverallStep)
	}
	got.Median, got.OverallStep = 0, 0
	want := HistoryRecord{Generation: 9, Run: 1, Lambda: 12, Evaluations: 120, Best: 1.5, BestSoFar: 1.25,
		Sigma: 0.3, C1: 0.01, CMu: 0.2, Cc: 0.3, AxisRatio: 12, Restarted: true,
		Aux: &AuxRecord{Mean: [3]float64{0.1, 0.6, 0.5}, Sigma: 0.55, Feasible: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %+v\nwant    %+v", got, want)
	}
}

// A session's history holds the distribution after each generation: the
// last entry's mean is the session's, its overall step σ·max axis length
// and its axis ratio max/min axis length; above HistoryMaxCoordinates only
// the overall step.
func TestHistoryDistribution(t *testing.T) {
	ctx := context.Background()
	m := NewManager(newMemStore(), Options{})
	for _, c := range []struct {
		algorithm string
		n         int
	}{{AlgorithmCMAES, 4}, {AlgorithmSelfCMAES, 4}, {AlgorithmCMAES, HistoryMaxCoordinates + 1}} {
		seed := uint64(5)
		x0 := make([]float64, c.n)
		for i := range x0 {
			x0[i] = 1
		}
		s, err := m.Create(ctx, CreateParams{X0: x0, Sigma0: 0.5, Algorithm: c.algorithm, Seed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			b, err := m.Ask(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			f := make([]float64, len(b.Candidates))
			for k, x := range b.Candidates {
				for _, v := range x {
					f[k] += v * v
				}
			}
			if s, err = m.Tell(ctx, s.ID, TellParams{Generation: b.Generation, Fitness: f}); err != nil {
				t.Fatal(err)
			}
		}
		hist, err := m.History(ctx, s.ID, 0, 0)
		if err != nil || len(hist) != 5 {
			t.Fatalf("%s n=%d: %d entries, %v", c.algorithm, c.n, len(hist), err)
		}
		last := hist[4]
		if c.n > HistoryMaxCoordinates {
			if last.Mean != nil || last.Stds != nil || last.AxisLengths != nil || !(last.OverallStep > 0) {
				t.Errorf("n=%d: kept mean %v, stds %v, axis lengths %v, overall step %v", c.n, last.Mean, last.Stds, last.AxisLengths, last.OverallStep)
			}
			continue
		}
		if !slices.Equal(last.Mean, s.Mean) {
			t.Errorf("%s: last entry's mean %v, the session's %v", c.algorithm, last.Mean, s.Mean)
		}
		d := last.AxisLengths
		if len(d) != c.n || len(last.Stds) != c.n || last.OverallStep != s.Sigma*d[c.n-1] || last.AxisRatio != d[c.n-1]/d[0] {
			t.Errorf("%s: overall step %v, axis lengths %v, axis ratio %v; σ = %v", c.algorithm, last.OverallStep, d, last.AxisRatio, s.Sigma)
		}
	}
}

// Any bytes decode to an entry or an error, never a panic, and a decoded
// entry's vectors are of one length within the limit.
func FuzzDecodeHistory(f *testing.F) {
	for _, h := range []HistoryRecord{distributionRecord(3, 4), distributionRecord(1001, 4), distributionRecord(2, 0)} {
		b, _ := encodeHistory(h)
		f.Add(b)
	}
	if golden, err := os.ReadFile("testdata/history-schema2.hex"); err == nil {
		if b, err := hex.DecodeString(strings.TrimSpace(string(golden))); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := decodeHistory(b)
		if err != nil {
			return
		}
		if n := len(h.Mean); n > HistoryMaxCoordinates || len(h.AxisLengths) != n || len(h.Stds) != n {
			t.Fatalf("decoded %d axis lengths, %d stds, %d mean coordinates", len(h.AxisLengths), len(h.Stds), n)
		}
	})
}
