package enginecodec

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/exactbits"
	"gonum.org/v1/gonum/mat"
)

// encodeStep returns the blob of s alone, as selfcma embeds it.
func stepBlob(s *cmaes.Step) []byte {
	w := binenc.NewWriter("step", cmaesVersion)
	encodeStep(w, s)
	return w.Finish()
}

func stepFromBlob(tb testing.TB, blob []byte) *cmaes.Step {
	tb.Helper()
	r, err := binenc.NewReader(blob, "step", cmaesVersion)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := decodeStep(r, cmaesVersion)
	if err == nil {
		err = r.Done()
	}
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// symBitsDiffer returns the first entry (i ≤ j) where the upper triangles
// of a and b differ in their bits, or −1, −1.
func symBitsDiffer(a, b *mat.SymDense) (int, int) {
	ra, rb := a.RawSymmetric(), b.RawSymmetric()
	for i := range ra.N {
		for j := i; j < ra.N; j++ {
			if math.Float64bits(ra.Data[i*ra.Stride+j]) != math.Float64bits(rb.Data[i*rb.Stride+j]) {
				return i, j
			}
		}
	}
	return -1, -1
}

// checkStepRoundTrip checks that the Step decodes from its encoding with
// every field equal bit for bit, C_μ recomputed (not written), and that a
// Step whose C_μ no update made still round-trips, with C_μ written.
func checkStepRoundTrip(t *testing.T, g int, st *cmaes.Step) {
	t.Helper()
	n := len(st.PC)
	blob := stepBlob(st)
	got := stepFromBlob(t, blob)
	if i, j := symBitsDiffer(got.CMu, st.CMu); i >= 0 {
		t.Fatalf("generation %d: decoded C_μ(%d, %d) = %v, the update's %v", g, i, j, got.CMu.At(i, j), st.CMu.At(i, j))
	}
	if i, j := symBitsDiffer(got.C, st.C); i >= 0 {
		t.Fatalf("generation %d: decoded C(%d, %d) differs", g, i, j)
	}
	if !exactbits.Same(slices.Concat(usedRows(got)...), slices.Concat(usedRows(st)...)) || !exactbits.Same(got.PC, st.PC) ||
		!exactbits.Same(got.Yw, st.Yw) || !exactbits.Same(got.PSigma, st.PSigma) || !exactbits.Same(got.Mean, st.Mean) ||
		!exactbits.Same([]float64{got.HSigma, got.MuW, got.Sigma}, []float64{st.HSigma, st.MuW, st.Sigma}) ||
		got.Hyper != st.Hyper || !bytes.Equal(stepBlob(got), blob) {
		t.Fatalf("generation %d: the decoded step differs", g)
	}
	for k := range st.Order {
		if got.Order[k] != st.Order[k] {
			t.Fatalf("generation %d: decoded order differs", g)
		}
	}
	// Version 6 writes the μ rows C_μ uses, and the others decode as NaN.
	l, _ := st.X.Dims()
	mu := len(usedRows(st))
	if mu != l/2 {
		t.Fatalf("generation %d: %d of %d rows written, want λ/2", g, mu, l)
	}
	for _, k := range st.Order[mu:] {
		if x := got.X.At(k, 0); !math.IsNaN(x) {
			t.Fatalf("generation %d: row %d, not used by C_μ, decodes as %v", g, k, x)
		}
	}

	// The same Step with one bit of C_μ changed: C_μ is written, the blob
	// is longer by exactly its upper triangle, and it decodes as it was.
	var odd cmaes.Step
	odd.CopyFrom(st)
	odd.CMu.SetSym(0, n-1, math.Float64frombits(math.Float64bits(odd.CMu.At(0, n-1))^1))
	oddBlob := stepBlob(&odd)
	if extra := len(oddBlob) - len(blob); extra != 8+8*n*(n+1)/2 {
		t.Fatalf("generation %d: a step with its own C_μ takes %d more bytes, want %d", g, extra, 8+8*n*(n+1)/2)
	}
	if i, j := symBitsDiffer(stepFromBlob(t, oddBlob).CMu, odd.CMu); i >= 0 {
		t.Fatalf("generation %d: a written C_μ decodes differently at (%d, %d)", g, i, j)
	}
}

// TestStepEncodingRecomputesCMu checks, on the steps of long runs with
// failed evaluations, injected points (clipped and not), bounds and IPOP
// restarts, that a Step encoded without its C_μ decodes with the update's
// C_μ bit for bit.
func TestStepEncodingRecomputesCMu(t *testing.T) {
	n := 6
	cfgs := map[string]cmaes.Config{
		"plain": {X0: uniformX0(2, n), Sigma0: 1, Seed: 21, Lambda: 12},
		"bounds, ipop": {X0: constVec(n, 1), Sigma0: 1, Seed: 22, Bounds: &cmaes.Bounds{Lower: constVec(n, -1), Upper: constVec(n, 3)},
			Restarts: cmaes.Restarts{IPOP: true, Max: 3}, Termination: cmaes.Termination{TolX: 0.05}},
	}
	for name, cfg := range cfgs {
		t.Run(name, func(t *testing.T) {
			e := mustNew(t, cfg)
			steps, lambdas := 0, map[int]bool{}
			for g := range 300 {
				if e.Stopped() != nil {
					break
				}
				if g%3 == 0 {
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
					v[k] = rosenbrock(x)
					if g%7 == 3 && k%3 == 1 {
						v[k] = math.NaN()
					}
				}
				if _, err := e.Tell(v); err != nil {
					t.Fatal(err)
				}
				if st := e.LastStep(); st != nil {
					checkStepRoundTrip(t, g, st)
					steps++
					lambdas[st.X.RawMatrix().Rows] = true
				}
			}
			if steps < 50 {
				t.Fatalf("only %d steps checked", steps)
			}
			if cfg.Restarts.IPOP && len(lambdas) < 2 {
				t.Fatalf("steps of λ %v only: no restart tested", lambdas)
			}
		})
	}
}

// TestUnmarshalStepRejectsWrittenCMu: a step of version 4 that carries the
// C_μ its points give is not what encodeStep writes, and is refused (every
// step decoded encodes back to its bytes).
func TestUnmarshalStepRejectsWrittenCMu(t *testing.T) {
	e := mustNew(t, cmaes.Config{X0: uniformX0(3, 4), Sigma0: 1, Seed: 5})
	step(t, e, sphere)
	st := e.LastStep()
	w := binenc.NewWriter("step", cmaesVersion)
	writeUpper(w, st.C)
	w.Floats(st.PC)
	w.Floats(st.Yw)
	w.Float(st.HSigma)
	w.Bool(true)
	writeUpper(w, st.CMu)
	w.Float(st.MuW)
	w.Float(st.Hyper.C1)
	w.Float(st.Hyper.CMu)
	w.Float(st.Hyper.Cc)
	w.Float(st.Sigma)
	w.Floats(st.PSigma)
	w.Floats(st.Mean)
	w.Int(st.X.RawMatrix().Rows)
	w.Floats(st.X.RawMatrix().Data)
	w.Ints(st.Order)
	r, err := binenc.NewReader(w.Finish(), "step", cmaesVersion)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeStep(r, cmaesVersion); err == nil {
		t.Fatal("a step with its recomputable C_μ written decoded")
	}
}

// TestEncodingSizes checks the sizes of versions 4 to 7: C and a step's C
// take n(n+1)/2 values; B, D and the pending batch n², n and λn in version
// 4, none from version 5 on after an update (a plain ES writes C and one
// flag more in version 6, 29 bytes more in version 7, 8 more in version
// 8, one flag more in version 9, 16 in version 10, 9 in version 11, two
// flags in version 12, three flags and two floats in version 13, two
// floats in version 14, one in version 15 and a flag in version 16); and a version-3 blob of
// the same state (C in full) decodes to the same state.
func TestEncodingSizes(t *testing.T) {
	for _, c := range []struct{ n, lambda int }{{1, 2}, {10, 10}, {40, 8}} {
		e := mustNew(t, cmaes.Config{X0: uniformX0(4, c.n), Sigma0: 1, Lambda: c.lambda, Seed: 8})
		for range 3 {
			step(t, e, sphere)
		}
		blob, _ := marshal(e)
		v4 := asVersion4(t, blob)
		// Less B and D with their lengths, the batch for its hash, two flags
		// of version 5, one of version 6 (C written), and version 7's block
		// (4 flags, IncPopSize, the regime, σ0's flag, the generation limit),
		// version 8's EigenT, version 9's flag, version 10's two floats,
		// version 11's flag and float, version 12's two flags, version
		// 13's three flags, α and the smallest η, version 14's TolWorse
		// and RunStartF, version 15's TolWorseDelta and version 16's
		// SpareBestSmall.
		if got, want := len(v4)-len(blob), 8*(c.n*c.n+c.n+c.lambda*c.n)+14-1-(5+3*8)-8-1-16-9-2-19-16-8-1; got != want {
			t.Errorf("n=%d: the current version saves %d bytes on version 4, want %d", c.n, got, want)
		}
		v3 := asVersion3(t, blob)
		if got, want := len(v3)-len(v4), 8*(c.n*c.n-c.n*(c.n+1)/2); got != want {
			t.Errorf("n=%d: version 4 saves %d bytes on C, want %d", c.n, got, want)
		}
		if size := cmaesSize(e.State()); size < len(blob) || size > len(blob)+2048 {
			t.Errorf("n=%d: EncodedSize %d for %d bytes", c.n, size, len(blob))
		}
		d, err := DecodeCMAES(v3)
		if err != nil {
			t.Fatalf("n=%d: the version-3 blob: %v", c.n, err)
		}
		// Encoded again, it writes B, D and the batch (no version-3 blob
		// says they can be recomputed) and is otherwise the same state.
		if again, _ := marshal(d); !bytes.Equal(asVersion4(t, again), v4) {
			t.Errorf("n=%d: the version-3 blob decodes to another state", c.n)
		}
		st := e.LastStep()
		if st == nil {
			t.Fatalf("n=%d: no step", c.n)
		}
		if size, got := stepSize(st), len(stepBlob(st)); size < got || size > got+512 {
			t.Errorf("n=%d: step EncodedSize %d for %d bytes", c.n, size, got)
		}
	}
}

// encoding3State is testdata/cmaes/encoding3-n12.state: written by the code of
// state version 3 (commit 0e9253e) after 25 generations on the ellipsoid of
// New(Config{X0: uniformX0(3, 12), Sigma0: 0.5, Lambda: 10, Seed: 13,
// Bounds: [−4, 5]¹²}), two points injected at generations 1, 6, 11, … (at 1,
// 11 and 21 with their steps clipped), and one more, constVec(12, −3.5),
// waiting; encoding3Continuation is continueHash(e, 20) by that same code.
const encoding3Continuation = "f87926afe0bee8d87ee8311dfc852e62cf5885b6eba6a8319dd59c52d77eae5f"

// TestUpgradeEncoding3 checks that a state of version 3 (C in full)
// continues bit for bit as the code that wrote it did, also after it is
// encoded again in version 4.
func TestUpgradeEncoding3(t *testing.T) {
	blob, e := stateFixture(t, "testdata/cmaes/encoding3-n12.state", 3)
	again, _ := marshal(e)
	if len(again) >= len(blob) {
		t.Errorf("re-encoded in version 4: %d bytes, version 3 took %d", len(again), len(blob))
	}
	if got := continueHash(t, e, 20); got != encoding3Continuation {
		t.Fatalf("continuation %s, the old code's %s", got, encoding3Continuation)
	}
	e2, err := DecodeCMAES(again)
	if err != nil {
		t.Fatal(err)
	}
	if got := continueHash(t, e2, 20); got != encoding3Continuation {
		t.Fatalf("re-encoded continuation %s, want %s", got, encoding3Continuation)
	}
}

// TestStepDerivedC checks version 6's C left out: an ES encoded after the
// Step of its update leaves C out and decodes, given that Step, with C bit
// for bit; not given it, it is refused; and a blob that writes the C the
// Step gives is refused too (encode never writes one).
func TestStepDerivedC(t *testing.T) {
	n := 7
	e := mustNew(t, cmaes.Config{X0: uniformX0(5, n), Sigma0: 1, Seed: 9})
	for range 4 {
		step(t, e, rosenbrock)
	}
	st := e.LastStep()
	encode := func(given *cmaes.Step) []byte {
		w := binenc.NewWriter(cmaesMagic, cmaesVersion)
		encodeAsVersion(w, cmaesVersion, e.State(), given)
		return w.Finish()
	}
	decode := func(blob []byte, given *cmaes.Step) (*cmaes.ES, error) {
		r, err := binenc.NewReader(blob, cmaesMagic, cmaesVersion)
		if err != nil {
			t.Fatal(err)
		}
		d, err := decodeRestore(r, cmaesVersion, given)
		if err == nil {
			err = r.Done()
		}
		return d, err
	}
	short, full := encode(st), encode(nil)
	if got, want := len(full)-len(short), 8+8*n*(n+1)/2; got != want {
		t.Fatalf("leaving C out saves %d bytes, want %d", got, want)
	}
	d, err := decode(short, st)
	if err != nil {
		t.Fatal(err)
	}
	if i, j := symBitsDiffer(d.State().C, e.State().C); i >= 0 {
		t.Fatalf("replayed C(%d, %d) differs", i, j)
	}
	if again := encodeAs(d, cmaesVersion); !bytes.Equal(again, full) {
		t.Fatal("the decoded ES is another state")
	}
	if _, err := decode(short, nil); err == nil {
		t.Fatal("a blob without C decoded with no step to replay")
	}
	if _, err := decode(full, st); err == nil {
		t.Fatal("a blob that writes the C its step gives decoded")
	}
	if _, err := decode(full, nil); err != nil {
		t.Fatalf("the plain blob: %v", err)
	}
	// Another step (a C_μ entry changed) no longer gives C: C is written.
	var odd cmaes.Step
	odd.CopyFrom(st)
	odd.CMu.SetSym(0, 1, 2*odd.CMu.At(0, 1)+1)
	if b := encode(&odd); !bytes.Equal(b, full) {
		t.Fatal("C left out though the step does not give it")
	}
}

// The queue and the injected candidates of the pending batch are part of the
// state: a run with injections, marshalled at any point, continues bit for
// bit.
func TestInjectionsSurviveMarshal(t *testing.T) {
	cfgs := map[string]cmaes.Config{
		"plain": {X0: uniformX0(4, 5), Sigma0: 1, Seed: 9, Inject: [][]float64{constVec(5, 0.5)}},
		"bounds, ipop": {X0: constVec(5, 1), Sigma0: 1, Seed: 9, Bounds: &cmaes.Bounds{Lower: constVec(5, -1), Upper: constVec(5, 3)},
			Restarts: cmaes.Restarts{IPOP: true, Max: 3}, Termination: cmaes.Termination{TolX: 0.05}},
	}
	// Every third generation injects two points (one clipped, one not)
	// before the tell; so both a waiting queue and an injected batch are
	// marshalled.
	inject := func(e *cmaes.ES) {
		g := e.Generation()
		if g%3 != 0 {
			return
		}
		a, b := make([]float64, 5), make([]float64, 5)
		for i := range a {
			a[i] = 2.9 - 0.3*float64((g+i)%7)
			b[i] = -0.9 + 0.1*float64((g*i)%5)
		}
		if err := e.Inject([][]float64{a, b}, g%2 == 0); err != nil {
			t.Fatal(err)
		}
	}
	for name, cfg := range cfgs {
		t.Run(name, func(t *testing.T) {
			restarted := false
			for _, at := range []int{0, 1, 3, 4, 20, 61} {
				for _, injectFirst := range []bool{false, true} {
					a := mustNew(t, cfg)
					for range at {
						inject(a)
						step(t, a, rosenbrock)
					}
					if injectFirst {
						inject(a) // the queue is marshalled
					}
					blob, _ := marshal(a)
					b, err := DecodeCMAES(blob)
					if err != nil {
						t.Fatalf("at %d: %v", at, err)
					}
					if again, _ := marshal(b); !bytes.Equal(again, blob) {
						t.Fatalf("at %d: the restored state encodes differently", at)
					}
					if a.Injected() != b.Injected() || a.InjectedInBatch() != b.InjectedInBatch() {
						t.Fatalf("at %d: injected %d/%d, restored %d/%d", at, a.Injected(), a.InjectedInBatch(), b.Injected(), b.InjectedInBatch())
					}
					for g := range 40 {
						if !sameBitsRows(a.Ask(), b.Ask()) {
							t.Fatalf("at %d: generation +%d differs", at, g)
						}
						if a.Stopped() != nil {
							break
						}
						if g > 0 || !injectFirst {
							inject(a)
							inject(b)
						}
						ra, rb := step(t, a, rosenbrock), step(t, b, rosenbrock)
						if ra.Injected != rb.Injected || ra.Sigma != rb.Sigma {
							t.Fatalf("at %d: generation +%d: records differ", at, g)
						}
					}
					ba, _ := marshal(a)
					bb, _ := marshal(b)
					if !bytes.Equal(ba, bb) {
						t.Fatalf("at %d: states differ after 40 generations", at)
					}
					restarted = restarted || a.Run() > 0
				}
			}
			if cfg.Restarts.IPOP && !restarted {
				t.Fatal("the IPOP case never restarted")
			}
		})
	}
}

func TestUnmarshalRejectsCorruptState(t *testing.T) {
	e := mustNew(t, cmaes.Config{X0: constVec(3, 1), Sigma0: 1, Seed: 1})
	step(t, e, sphere)
	blob, _ := marshal(e)
	if _, err := DecodeCMAES(blob); err != nil {
		t.Fatalf("valid blob: %v", err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		bad := bytes.Clone(blob)
		k := r.IntN(len(bad))
		bad[k] ^= byte(1 + r.IntN(255))
		if _, err := DecodeCMAES(bad); err == nil {
			t.Fatalf("flipped byte %d: no error", k)
		}
	}
	for _, n := range []int{0, 3, 10, len(blob) / 2, len(blob) - 1} {
		if _, err := DecodeCMAES(blob[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: no error", n)
		}
	}
	if _, err := DecodeCMAES([]byte("{\"not\": \"a state\"}")); err == nil {
		t.Fatal("foreign blob: no error")
	}
}

// TestAppendBinary: AppendCMAES writes after dst's bytes exactly what it
// writes into nil, into a reused buffer too, and the blob decodes.
func TestAppendBinary(t *testing.T) {
	e := mustNew(t, cmaes.Config{X0: constVec(6, 1), Sigma0: 1, Seed: 4, Bounds: &cmaes.Bounds{Lower: constVec(6, -2), Upper: constVec(6, 3)}})
	var buf []byte
	for g := range 4 {
		want, err := marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendES(e, []byte("prefix"))
		if err != nil || string(got[:6]) != "prefix" || !bytes.Equal(got[6:], want) {
			t.Fatalf("generation %d: AppendBinary after a prefix differs from MarshalBinary (%v)", g, err)
		}
		if buf, err = appendES(e, buf[:0]); err != nil || !bytes.Equal(buf, want) {
			t.Fatalf("generation %d: AppendBinary into a reused buffer differs (%v)", g, err)
		}
		if _, err := DecodeCMAES(got[6:]); err != nil {
			t.Fatalf("generation %d: %v", g, err)
		}
		step(t, e, sphere)
	}
}

// stateFixture reads the state written by an earlier version at path,
// checks that it has the given encoding version, and decodes it.
func stateFixture(t *testing.T, path string, version uint32) ([]byte, *cmaes.ES) {
	t.Helper()
	blob, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, v, err := binenc.NewReaderVersions(blob, cmaesMagic, 1, cmaesVersion); err != nil || v != version {
		t.Fatalf("%s has version %d (%v), want %d", path, v, err, version)
	}
	e, err := DecodeCMAES(blob)
	if err != nil {
		t.Fatal(err)
	}
	return blob, e
}

func BenchmarkCMAESMarshal(b *testing.B) {
	for _, c := range benchCases {
		b.Run(c.String(), func(b *testing.B) {
			e, _ := benchES(b, c)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := marshal(e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
