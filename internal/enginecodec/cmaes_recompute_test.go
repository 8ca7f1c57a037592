package enginecodec

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// recomputeCounts tallies what version 5 left out over a run.
type recomputeCounts struct {
	bdLeftOut, bdWritten, batchLeftOut, batchWritten, safeguarded int
}

// checkDecodesSame encodes e, decodes it and fails unless the decoded ES is
// e bit for bit: its version-4 blob (every field, B, D, the batch and the
// stream after it included) is e's, and so are the flags of version 5, the
// stream before the batch, its hash and the points handed out. It returns
// the decoded ES.
func checkDecodesSame(t *testing.T, where string, e *cmaes.ES, n *recomputeCounts) *cmaes.ES {
	t.Helper()
	blob, _ := marshal(e)
	d, err := DecodeCMAES(blob)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	switch {
	case !bytes.Equal(encodeAs(d, versionPacked), encodeAs(e, versionPacked)):
		_, db := d.Eigen()
		_, eb := e.Eigen()
		t.Fatalf("%s: the decoded state differs (bdFromC %v, batch resampled %v; D %v, want %v)", where, e.State().DecomposedC, resampled(e.State()), db, eb)
	case d.State().DecomposedC != e.State().DecomposedC || d.State().BatchDrawn != e.State().BatchDrawn:
		t.Fatalf("%s: decoded flags bdFromC %v, batchFresh %v; want %v, %v", where, d.State().DecomposedC, d.State().BatchDrawn, e.State().DecomposedC, e.State().BatchDrawn)
	case e.State().BatchDrawn && (d.State().BatchRand != e.State().BatchRand || batchChecksum(d.State().Batch) != batchChecksum(e.State().Batch)):
		t.Fatalf("%s: decoded stream before the batch or its hash differs", where)
	case !samePoints(d.Ask(), e.Ask()):
		t.Fatalf("%s: the decoded ES hands out other points", where)
	}
	if again, _ := marshal(d); !bytes.Equal(again, blob) {
		t.Fatalf("%s: the decoded ES encodes to other bytes", where)
	}
	if e.State().DecomposedC {
		n.bdLeftOut++
	} else {
		n.bdWritten++
	}
	if resampled(e.State()) {
		n.batchLeftOut++
	} else {
		n.batchWritten++
	}
	return d
}

// continueBoth tells a and b the same values (f, with the NaN pattern of
// the generation) for gens generations and fails unless they ask the same
// points, bit for bit, and stay the same state.
func continueBoth(t *testing.T, where string, a, b *cmaes.ES, f func([]float64) float64, gens int) {
	t.Helper()
	for g := range gens {
		if a.Stopped() != nil || b.Stopped() != nil {
			if len(a.Stopped()) != len(b.Stopped()) {
				t.Fatalf("%s, +%d: one stopped, the other not", where, g)
			}
			return
		}
		X, Y := a.Ask(), b.Ask()
		if !samePoints(X, Y) {
			t.Fatalf("%s, +%d: the decoded ES asks other points", where, g)
		}
		v := make([]float64, len(X))
		for k, x := range X {
			v[k] = f(x)
		}
		if _, err := a.Tell(v); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Tell(v); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(encodeAs(a, versionPacked), encodeAs(b, versionPacked)) {
		t.Fatalf("%s: after %d generations the states differ", where, gens)
	}
}

// TestVersion5DecodesBitForBit runs ES through bounds, injected points
// (clipped and not), failed evaluations (some and all of a generation),
// IPOP restarts, both numerics versions and both safeguards (the
// regularization of an ill-conditioned C, the move of scale from σ into C
// and D), and after every generation checks that the state decoded from
// version 5 (B and D recomputed when bdFromC, the batch sampled again) is
// the ES bit for bit and continues as it does.
func TestVersion5DecodesBitForBit(t *testing.T) {
	off := cmaes.Termination{TolFun: -1, TolX: -1, ConditionCov: -1, TolUpSigma: -1,
		NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true, NoEqualFunVal: true, MaxFailedGenerations: -1}
	cases := []struct {
		name  string
		cfg   cmaes.Config
		f     func([]float64) float64
		gens  int
		plain bool // no injected point, no NaN: they would keep σ from diverging
		// what the run must have shown
		safeguards, restarts, stops bool
	}{
		{name: "bounds, inject, NaN, IPOP", cfg: cmaes.Config{X0: constVec(6, 1), Sigma0: 1, Seed: 22, Lambda: 8,
			Bounds: &cmaes.Bounds{Lower: constVec(6, -1), Upper: constVec(6, 3)}, Restarts: cmaes.Restarts{IPOP: true, Max: 2}, Termination: cmaes.Termination{TolX: 0.05}},
			f: rosenbrock, gens: 400, restarts: true, stops: true},
		{name: "dsyev, inject, NaN", cfg: cmaes.Config{X0: uniformX0(2, 9), Sigma0: 0.5, Seed: 23, Numerics: cmaes.NumericsDsyev, Termination: cmaes.Termination{MaxEvaluations: 1500}},
			f: ellipsoid, gens: 300, stops: true},
		{name: "ill-conditioned: C regularized", cfg: cmaes.Config{X0: constVec(3, 1), Sigma0: 1, Seed: 2, Termination: off},
			f: func(x []float64) float64 { return x[0]*x[0] + 1e20*(x[1]*x[1]+x[2]*x[2]) }, gens: 700, safeguards: true},
		{name: "linear: σ moved into C", cfg: cmaes.Config{X0: constVec(3, 1), Sigma0: 1, Seed: 2, Termination: off},
			f: func(x []float64) float64 { return x[0] }, gens: 1500, plain: true, safeguards: true},
		{name: "diverging, dsyev", cfg: cmaes.Config{X0: constVec(4, 1), Sigma0: 1, Seed: 3, Termination: off, Numerics: cmaes.NumericsDsyev},
			f: func(x []float64) float64 { return -sphere(x) }, gens: 1500, plain: true, safeguards: true},
		{name: "flat", cfg: cmaes.Config{X0: constVec(3, 1), Sigma0: 1, Seed: 4, Termination: off},
			f: func([]float64) float64 { return 7 }, gens: 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := mustNew(t, c.cfg)
			n := e.Dim()
			var counts recomputeCounts
			restarts := 0
			checkDecodesSame(t, "new", e, &counts)
			for g := range c.gens {
				if e.Stopped() != nil {
					break
				}
				if g%3 == 0 && !c.plain {
					a, b := make([]float64, n), make([]float64, n)
					for i := range a {
						a[i] = 2.9 - 0.3*float64((g+i)%7)
						b[i] = -0.9 + 0.1*float64((g*i)%5)
					}
					if err := e.Inject([][]float64{a, b}, g%2 == 0); err != nil {
						t.Fatal(err)
					}
				}
				X := e.Ask()
				v := make([]float64, len(X))
				for k, x := range X {
					v[k] = c.f(x)
					if !c.plain && (g%7 == 3 && k%3 == 1 || g%11 == 5) {
						v[k] = math.NaN() // some, or all at g%11 == 5
					}
				}
				rec, err := e.Tell(v)
				if err != nil {
					t.Fatal(err)
				}
				if rec.Restarted {
					restarts++
				}
				if e.LastStep() != nil && !e.State().DecomposedC {
					counts.safeguarded++
				}
				where := fmt.Sprintf("generation %d", g)
				d := checkDecodesSame(t, where, e, &counts)
				// Continue a copy of e with the decoded ES.
				blob, _ := marshal(e)
				orig, err := DecodeCMAES(asVersion4(t, blob)) // the version-4 state: everything written
				if err != nil {
					t.Fatal(err)
				}
				continueBoth(t, where, orig, d, c.f, 3)
			}
			if e.Stopped() == nil {
				e.StopNow() // a stopped ES with its batch still fresh
			}
			checkDecodesSame(t, "stopped", e, &counts)
			t.Logf("%+v, %d restarts, stopped by %v", counts, restarts, reasonNames(e.Stopped()))
			switch {
			case counts.bdLeftOut < 20 || counts.batchLeftOut < 20:
				t.Errorf("B and D left out %d times, the batch %d times", counts.bdLeftOut, counts.batchLeftOut)
			case c.safeguards && counts.safeguarded < 5:
				t.Errorf("the safeguards changed C after %d updates only", counts.safeguarded)
			case c.restarts && restarts == 0:
				t.Error("no restart")
			case c.stops && counts.batchWritten == 0:
				t.Error("no stopped state with its batch written")
			}
		})
	}
}

// TestVersion5Parallel checks the decoding at n = λ = 130, where the batch's
// product Z Bᵀ and the decomposition of C run in parallel: decoded with
// one goroutine, the ES is the one that ran with several.
func TestVersion5Parallel(t *testing.T) {
	if testing.Short() {
		t.Skip("n = 130")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	e := mustNew(t, cmaes.Config{X0: uniformX0(5, 130), Sigma0: 1, Lambda: 130, Seed: 9})
	var counts recomputeCounts
	for g := range 3 {
		step(t, e, ellipsoid)
		blob, _ := marshal(e)
		runtime.GOMAXPROCS(1)
		d, err := DecodeCMAES(blob)
		runtime.GOMAXPROCS(4)
		if err != nil {
			t.Fatalf("generation %d: %v", g, err)
		}
		if !bytes.Equal(encodeAs(d, versionPacked), encodeAs(e, versionPacked)) || !samePoints(d.Ask(), e.Ask()) {
			t.Fatalf("generation %d: decoded with one goroutine, the state differs", g)
		}
		checkDecodesSame(t, fmt.Sprintf("generation %d", g), e, &counts)
	}
	if counts.bdLeftOut != 3 || counts.batchLeftOut != 3 {
		t.Fatalf("%+v: B, D or the batch written", counts)
	}
}

// TestVersion5WritesLargeBatches: a batch of more than maxResampled(n)
// values is written (a decoder allocates no batch larger than its blob or
// that), one of maxResampled(n) is not; both decode to the same ES.
func TestVersion5WritesLargeBatches(t *testing.T) {
	for _, c := range []struct {
		lambda  int
		written bool
	}{{maxResampled(1), false}, {maxResampled(1) + 1, true}} {
		e := mustNew(t, cmaes.Config{X0: []float64{1}, Sigma0: 1, Lambda: c.lambda, Seed: 3})
		blob, _ := marshal(e)
		if written := len(blob) > 8*c.lambda; written != c.written {
			t.Errorf("λ = %d: %d bytes, batch written %v, want %v", c.lambda, len(blob), written, c.written)
		}
		d, err := DecodeCMAES(blob)
		if err != nil {
			t.Fatalf("λ = %d: %v", c.lambda, err)
		}
		if !samePoints(d.Ask(), e.Ask()) || !bytes.Equal(encodeAs(d, versionPacked), encodeAs(e, versionPacked)) {
			t.Errorf("λ = %d: the decoded ES differs", c.lambda)
		}
	}
}

// TestVersion5RefusesAnotherBatch: a version-5 blob whose batch, sampled
// again, is not the one handed out (another hash, another stream before it,
// another mean) does not decode.
func TestVersion5RefusesAnotherBatch(t *testing.T) {
	e := mustNew(t, cmaes.Config{X0: uniformX0(3, 5), Sigma0: 1, Seed: 12})
	step(t, e, sphere)
	blob, _ := marshal(e)
	if !resampled(e.State()) {
		t.Fatal("the batch is written")
	}
	for name, mutate := range map[string]func(*cmaes.State){
		"hash":   func(s *cmaes.State) { s.Batch.Set(0, 0, s.Batch.At(0, 0)+1) },
		"stream": func(s *cmaes.State) { s.BatchRand.Uint64() },
		"mean":   func(s *cmaes.State) { s.Mean[2] = math.Nextafter(s.Mean[2], 10) },
	} {
		d, err := DecodeCMAES(blob)
		if err != nil {
			t.Fatal(err)
		}
		st := d.State()
		mutate(st)
		bad := AppendCMAES(nil, st)
		if _, err := DecodeCMAES(bad); err == nil {
			t.Errorf("%s changed: the blob decoded", name)
		}
	}
}

// encoding4Continuation is continueHash(e, 20) by the code of state
// version 4 (commit 542aea5) from testdata/cmaes/encoding4-n12.state, which that
// code wrote after 25 generations on the ellipsoid of New(Config{X0:
// uniformX0(3, 12), Sigma0: 0.5, Lambda: 10, Seed: 43, Bounds: [−4, 5]¹²}),
// two points injected at generations 1, 6, 11, … (at 1, 11 and 21 with
// their steps clipped) and one more, constVec(12, −3.5), waiting.
const encoding4Continuation = "a853c3f8eea399f1be0af8552389d8762438be74dcc04f025bd7a37b7d043adc"

// TestUpgradeEncoding4 checks that a state of version 4 (B, D and the batch
// written) continues bit for bit as the code that wrote it did, also after
// it is encoded again in version 5, and, after one more generation, with
// B, D and the batch left out.
func TestUpgradeEncoding4(t *testing.T) {
	blob, e := stateFixture(t, "testdata/cmaes/encoding4-n12.state", 4)
	if !bytes.Equal(encodeAs(e, versionPacked), blob) {
		t.Fatal("the version-4 state does not encode back to its bytes in version 4")
	}
	again, _ := marshal(e)
	if got := continueHash(t, e, 20); got != encoding4Continuation {
		t.Fatalf("continuation %s, the old code's %s", got, encoding4Continuation)
	}
	e2, err := DecodeCMAES(again)
	if err != nil {
		t.Fatal(err)
	}
	if got := continueHash(t, e2, 20); got != encoding4Continuation {
		t.Fatalf("re-encoded continuation %s, want %s", got, encoding4Continuation)
	}
	// After a generation of its own, the state leaves B, D and the batch out.
	e3, _ := DecodeCMAES(blob)
	step(t, e3, ellipsoid)
	v5, _ := marshal(e3)
	if v4 := encodeAs(e3, versionPacked); len(v4)-len(v5) < 8*(12*12+10*12) {
		t.Fatalf("version 5 takes %d bytes, version 4 %d", len(v5), len(v4))
	}
}
