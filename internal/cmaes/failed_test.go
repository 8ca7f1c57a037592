package cmaes

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/selfcma/selfcma/internal/binenc"
)

// tellFailed tells a generation whose every evaluation failed.
func tellFailed(tb testing.TB, e *ES) Record {
	tb.Helper()
	v := make([]float64, e.Params().Lambda)
	for k := range v {
		v[k] = math.NaN()
	}
	rec, err := e.Tell(v)
	if err != nil {
		tb.Fatalf("generation %d: %v", e.Generation(), err)
	}
	return rec
}

// tellPartlyFailed tells a generation with one finite value.
func tellPartlyFailed(tb testing.TB, e *ES) {
	tb.Helper()
	v := make([]float64, e.Params().Lambda)
	for k := range v {
		v[k] = math.NaN()
	}
	v[1] = sphere(e.Ask()[1])
	if _, err := e.Tell(v); err != nil {
		tb.Fatal(err)
	}
}

func TestFailedEvaluationsStopTheRun(t *testing.T) {
	tests := []struct {
		name string
		term Termination
		ipop bool
		want int // generations all failed until the stop; 0 = never
	}{
		{"default", Termination{}, false, DefaultMaxFailedGenerations},
		{"three", Termination{MaxFailedGenerations: 3}, false, 3},
		{"one", Termination{MaxFailedGenerations: 1}, false, 1},
		{"ipop stops, no restart", Termination{}, true, DefaultMaxFailedGenerations},
		{"disabled", Termination{MaxFailedGenerations: -1}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustNew(t, Config{X0: constVec(4, 1), Sigma0: 0.5, Seed: 2, Termination: tt.term, Restarts: Restarts{IPOP: tt.ipop}})
			step(t, e, sphere)
			// Failures broken by a generation with one value do not add up.
			pre := tt.want - 1
			if tt.want == 0 {
				pre = 30
			}
			for range pre {
				tellFailed(t, e)
			}
			tellPartlyFailed(t, e)
			if why := e.Stopped(); why != nil {
				t.Fatalf("stopped by %v after failures broken by a partial generation", reasonNames(why))
			}
			for g := 1; g <= 200; g++ {
				rec := tellFailed(t, e)
				if e.Stopped() == nil {
					continue
				}
				if g != tt.want {
					t.Fatalf("stopped by %v after %d failed generations, want %d", reasonNames(e.Stopped()), g, tt.want)
				}
				r, ok := hasReason(rec.Stop, StopFailedEvaluations)
				if !ok || r.Value != float64(tt.want) || len(rec.Stop) != 1 {
					t.Fatalf("stop reasons %v, want %s with value %d", rec.Stop, StopFailedEvaluations, tt.want)
				}
				if rec.Restarted || e.Run() != 0 {
					t.Fatal("failed evaluations restarted the run")
				}
				if _, err := e.Tell(make([]float64, e.Params().Lambda)); err != ErrStopped {
					t.Fatalf("tell after the stop: %v, want ErrStopped", err)
				}
				return
			}
			if tt.want != 0 {
				t.Fatal("200 failed generations did not stop the run")
			}
		})
	}
}

// The count of failed generations is part of the state.
func TestFailedGenerationsSurviveMarshal(t *testing.T) {
	e := mustNew(t, Config{X0: constVec(3, 1), Sigma0: 0.5, Seed: 3})
	for range 6 {
		tellFailed(t, e)
	}
	blob, _ := e.MarshalBinary()
	r, err := Unmarshal(blob)
	if err != nil {
		t.Fatal(err)
	}
	for g := 7; g <= DefaultMaxFailedGenerations; g++ {
		if r.Stopped() != nil {
			t.Fatalf("restored run stopped after %d failed generations", g-1)
		}
		tellFailed(t, r)
	}
	if _, ok := hasReason(r.Stopped(), StopFailedEvaluations); !ok {
		t.Fatalf("restored run: stopped by %v, want %s", reasonNames(r.Stopped()), StopFailedEvaluations)
	}
}

// asVersion1 rewrites a blob of the current version, of a state with no
// injected point, no failed generation counted, MaxFailedGenerations 0 and
// the numerics of version 1 (NumericsDsyev), as version 1 wrote it: without
// the blocks of versions 2 and 3.
func asVersion1(tb testing.TB, blob []byte) []byte {
	tb.Helper()
	const tail = 4*8 + 8 // MaxFailedGenerations, the count, two empty lists; the numerics
	v3 := asVersion3(tb, blob)
	body := bytes.Clone(v3[:len(v3)-4])
	at := 8 + len(stateMagic)
	block := body[len(body)-tail:]
	for _, b := range block[:4*8] {
		if b != 0 {
			tb.Fatal("the state has a non-empty version-2 block")
		}
	}
	if got := binary.LittleEndian.Uint64(block[4*8:]); got != NumericsDsyev {
		tb.Fatalf("the state has numerics %d, version 1 had only %d", got, NumericsDsyev)
	}
	binary.LittleEndian.PutUint32(body[at:], 1)
	return binenc.Reseal(append(body[:len(body)-tail], 0, 0, 0, 0))
}

// asVersion4 turns a blob of the current version into the version-4 blob
// of the same state: B, D, the batch and the stream after it written.
func asVersion4(tb testing.TB, blob []byte) []byte {
	tb.Helper()
	e, err := Unmarshal(blob)
	if err != nil {
		tb.Fatal(err)
	}
	w := binenc.NewWriter(stateMagic, versionPacked)
	e.encode(w, versionPacked, nil)
	return w.Finish()
}

// asVersion3 turns a blob of the current version into the version-3 blob
// of the same state: that of version 4 (asVersion4) with C written in
// full, n² values, rather than as its upper triangle.
func asVersion3(tb testing.TB, blob []byte) []byte {
	tb.Helper()
	blob = asVersion4(tb, blob)
	r, err := binenc.NewReader(blob, stateMagic, versionPacked)
	if err != nil {
		tb.Fatal(err)
	}
	// Skip to C, field by field as encode writes them.
	r.Floats()
	r.Float()
	r.Int()
	r.Uint64()
	if r.Bool() {
		r.Floats()
		r.Floats()
	}
	r.Int()
	r.Bool()
	for range 5 {
		r.Float()
	}
	for range 5 {
		r.Bool()
	}
	r.Int()
	r.Bytes()
	r.Int()
	for range 3 {
		r.Float()
	}
	r.Floats()
	r.Float()
	body := blob[:len(blob)-4]
	from := len(body) - r.Remaining()
	_, c := r.UpperFloats()
	if r.Err() != nil {
		tb.Fatal(r.Err())
	}
	to := len(body) - r.Remaining()
	out := append([]byte(nil), body[:from]...)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(c)))
	for _, v := range c {
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v))
	}
	out = append(out, body[to:]...)
	binary.LittleEndian.PutUint32(out[8+len(stateMagic):], 3)
	return binenc.Reseal(append(out, 0, 0, 0, 0))
}

// A version-1 state decodes with MaxFailedGenerations at its default and
// continues as the current state it equals.
func TestVersion1StateDecodes(t *testing.T) {
	e := mustNew(t, Config{X0: constVec(3, 1), Sigma0: 0.5, Seed: 4, Bounds: &Bounds{Lower: constVec(3, -2), Upper: constVec(3, 2)}, Numerics: NumericsDsyev})
	for range 5 {
		step(t, e, rosenbrock)
	}
	blob, _ := e.MarshalBinary()
	old, err := Unmarshal(asVersion1(t, blob))
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := old.MarshalBinary(); !bytes.Equal(asVersion4(t, again), asVersion4(t, blob)) {
		t.Fatal("the version-1 state does not encode as the current one")
	}
	for range DefaultMaxFailedGenerations - 1 {
		tellFailed(t, old)
	}
	if old.Stopped() != nil {
		t.Fatal("stopped early")
	}
	tellFailed(t, old)
	if _, ok := hasReason(old.Stopped(), StopFailedEvaluations); !ok {
		t.Fatalf("version-1 state: stopped by %v, want %s at its default", reasonNames(old.Stopped()), StopFailedEvaluations)
	}
}
