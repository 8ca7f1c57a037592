package enginecodec

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"os"
	"testing"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/cmaes"
)

// The count of failed generations is part of the state.
func TestFailedGenerationsSurviveMarshal(t *testing.T) {
	e := mustNew(t, cmaes.Config{X0: constVec(3, 1), Sigma0: 0.5, Seed: 3})
	for range 6 {
		tellFailed(t, e)
	}
	blob, _ := marshal(e)
	r, err := DecodeCMAES(blob)
	if err != nil {
		t.Fatal(err)
	}
	for g := 7; g <= cmaes.DefaultMaxFailedGenerations; g++ {
		if r.Stopped() != nil {
			t.Fatalf("restored run stopped after %d failed generations", g-1)
		}
		tellFailed(t, r)
	}
	if _, ok := hasReason(r.Stopped(), cmaes.StopFailedEvaluations); !ok {
		t.Fatalf("restored run: stopped by %v, want %s", reasonNames(r.Stopped()), cmaes.StopFailedEvaluations)
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
	at := 8 + len(cmaesMagic)
	block := body[len(body)-tail:]
	for _, b := range block[:4*8] {
		if b != 0 {
			tb.Fatal("the state has a non-empty version-2 block")
		}
	}
	if got := binary.LittleEndian.Uint64(block[4*8:]); got != cmaes.NumericsDsyev {
		tb.Fatalf("the state has numerics %d, version 1 had only %d", got, cmaes.NumericsDsyev)
	}
	binary.LittleEndian.PutUint32(body[at:], 1)
	return binenc.Reseal(append(body[:len(body)-tail], 0, 0, 0, 0))
}

// asVersion4 turns a blob of the current version into the version-4 blob
// of the same state: B, D, the batch and the stream after it written.
func asVersion4(tb testing.TB, blob []byte) []byte {
	tb.Helper()
	e, err := DecodeCMAES(blob)
	if err != nil {
		tb.Fatal(err)
	}
	w := binenc.NewWriter(cmaesMagic, versionPacked)
	encodeAsVersion(w, versionPacked, e.State(), nil)
	return w.Finish()
}

// asVersion3 turns a blob of the current version into the version-3 blob
// of the same state: that of version 4 (asVersion4) with C written in
// full, n² values, rather than as its upper triangle.
func asVersion3(tb testing.TB, blob []byte) []byte {
	tb.Helper()
	blob = asVersion4(tb, blob)
	r, err := binenc.NewReader(blob, cmaesMagic, versionPacked)
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
	binary.LittleEndian.PutUint32(out[8+len(cmaesMagic):], 3)
	return binenc.Reseal(append(out, 0, 0, 0, 0))
}

// A version-1 state decodes with MaxFailedGenerations at its default and
// continues as the current state it equals.
func TestVersion1StateDecodes(t *testing.T) {
	e := mustNew(t, cmaes.Config{X0: constVec(3, 1), Sigma0: 0.5, Seed: 4, Bounds: &cmaes.Bounds{Lower: constVec(3, -2), Upper: constVec(3, 2)}, Numerics: cmaes.NumericsDsyev})
	for range 5 {
		step(t, e, rosenbrock)
	}
	blob, _ := marshal(e)
	old, err := DecodeCMAES(asVersion1(t, blob))
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := marshal(old); !bytes.Equal(asVersion4(t, again), asVersion4(t, blob)) {
		t.Fatal("the version-1 state does not encode as the current one")
	}
	for range cmaes.DefaultMaxFailedGenerations - 1 {
		tellFailed(t, old)
	}
	if old.Stopped() != nil {
		t.Fatal("stopped early")
	}
	tellFailed(t, old)
	if _, ok := hasReason(old.Stopped(), cmaes.StopFailedEvaluations); !ok {
		t.Fatalf("version-1 state: stopped by %v, want %s at its default", reasonNames(old.Stopped()), cmaes.StopFailedEvaluations)
	}
}

// continueHash runs gens generations on the ellipsoid and returns the
// SHA-256 of the bits of every point asked.
func continueHash(tb testing.TB, e *cmaes.ES, gens int) string {
	tb.Helper()
	h := sha256.New()
	for range gens {
		X := e.Ask()
		v := make([]float64, len(X))
		for k, x := range X {
			v[k] = ellipsoid(x)
			for _, xi := range x {
				h.Write(binary.LittleEndian.AppendUint64(nil, math.Float64bits(xi)))
			}
		}
		if _, err := e.Tell(v); err != nil {
			tb.Fatal(err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// numerics1State is testdata/cmaes/numerics1-n40.state: written by the code
// before numerics versions (state encoding 1, commit b8986da) after 30
// generations of New(Config{X0: uniformX0(3, 40), Sigma0: 0.5, Lambda: 10,
// Seed: 7}) on the ellipsoid; numerics1Continuation is continueHash(e, 20)
// by that same code.
const numerics1Continuation = "76b5805ffab624227e7c854c8d93b115b87a2cbd057575eb4bd3a4f143f14f71"

// TestUpgradeKeepsNumerics1 checks that an ES encoded before numerics
// versions existed decodes with NumericsDsyev and continues bit for bit
// as the old code did, also through an encoding by the new code, and that
// the latest numerics would have sampled other points (so the test sees a
// wrong version).
func TestUpgradeKeepsNumerics1(t *testing.T) {
	blob, err := os.ReadFile("testdata/cmaes/numerics1-n40.state")
	if err != nil {
		t.Fatal(err)
	}
	e, err := DecodeCMAES(blob)
	if err != nil {
		t.Fatal(err)
	}
	if e.Config().Numerics != cmaes.NumericsDsyev {
		t.Fatalf("numerics %d, want %d", e.Config().Numerics, cmaes.NumericsDsyev)
	}
	again, err := marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if got := continueHash(t, e, 20); got != numerics1Continuation {
		t.Fatalf("continuation %s, the old code's %s", got, numerics1Continuation)
	}
	e2, err := DecodeCMAES(again)
	if err != nil {
		t.Fatal(err)
	}
	if e2.Config().Numerics != cmaes.NumericsDsyev {
		t.Fatalf("re-encoded: numerics %d", e2.Config().Numerics)
	}
	if got := continueHash(t, e2, 20); got != numerics1Continuation {
		t.Fatalf("re-encoded continuation %s, want %s", got, numerics1Continuation)
	}
	if got := continueHash(t, withLatestNumerics(t, blob), 20); got == numerics1Continuation {
		t.Fatal("the latest numerics continue the same: the fixture does not tell versions apart")
	}
}

// TestUpgradeKeepsNumerics2 checks that an ES of numerics version 2,
// written before version 3 existed, decodes with NumericsBlocked and
// continues bit for bit as the old code did, also through an encoding by
// the new code, and that the latest numerics would have sampled other
// points (n = 40 is above the order where versions 2 and 3 agree).
func TestUpgradeKeepsNumerics2(t *testing.T) {
	blob, err := os.ReadFile("testdata/cmaes/numerics2-n40.state")
	if err != nil {
		t.Fatal(err)
	}
	e, err := DecodeCMAES(blob)
	if err != nil {
		t.Fatal(err)
	}
	if e.Config().Numerics != cmaes.NumericsBlocked {
		t.Fatalf("numerics %d, want %d", e.Config().Numerics, cmaes.NumericsBlocked)
	}
	again, err := marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if got := continueHash(t, e, 20); got != numerics2Continuation {
		t.Fatalf("continuation %s, the old code's %s", got, numerics2Continuation)
	}
	e2, err := DecodeCMAES(again)
	if err != nil {
		t.Fatal(err)
	}
	if e2.Config().Numerics != cmaes.NumericsBlocked {
		t.Fatalf("re-encoded: numerics %d", e2.Config().Numerics)
	}
	if got := continueHash(t, e2, 20); got != numerics2Continuation {
		t.Fatalf("re-encoded continuation %s, want %s", got, numerics2Continuation)
	}
	if got := continueHash(t, withLatestNumerics(t, blob), 20); got == numerics2Continuation {
		t.Fatal("the latest numerics continue the same: the fixture does not tell versions apart")
	}
}

// TestDecodeRejectsNumerics checks that a blob naming no known numerics
// version (in version 6 the last field before the checksum) does not
// decode.
func TestDecodeRejectsNumerics(t *testing.T) {
	e := mustNew(t, cmaes.Config{X0: uniformX0(1, 3), Sigma0: 1})
	blob := encodeAs(e, versionStepDerived)
	for _, v := range []int64{0, 4, -1} {
		bad := append([]byte(nil), blob...)
		binary.LittleEndian.PutUint64(bad[len(bad)-12:], uint64(v))
		if _, err := DecodeCMAES(binenc.Reseal(bad)); err == nil {
			t.Errorf("numerics %d decoded", v)
		}
	}
	good := append([]byte(nil), blob...)
	binary.LittleEndian.PutUint64(good[len(good)-12:], uint64(cmaes.NumericsDsyev))
	if d, err := DecodeCMAES(binenc.Reseal(good)); err != nil || d.Config().Numerics != cmaes.NumericsDsyev {
		t.Errorf("numerics %d: %v", cmaes.NumericsDsyev, err)
	}
}

// TestVersion6IPOPDecodesAsBefore checks that an IPOP state written in
// version 6 (no block of version 7) decodes as the ES it was, the first
// run default and the others large from σ0, without a generation limit,
// continues as the ES does, and encodes back to its bytes in version 6.
func TestVersion6IPOPDecodesAsBefore(t *testing.T) {
	cfg := cmaes.Config{X0: constVec(3, 2), Sigma0: 1, Seed: 12, Restarts: cmaes.Restarts{IPOP: true, Max: 4}, Termination: cmaes.Termination{TolX: 1e-2}}
	e := mustNew(t, cfg)
	for e.Run() < 2 {
		step(t, e, rastrigin)
	}
	step(t, e, rastrigin)
	v6 := encodeAs(e, versionStepDerived)
	d, err := DecodeCMAES(v6)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encodeAs(d, versionStepDerived), v6) {
		t.Fatal("the version-6 state does not encode back to its bytes")
	}
	ends := d.RunEnds()
	if d.Regime() != cmaes.RegimeLarge || d.State().RunSigma0 != 1 || d.State().GenLimit != 0 || len(ends) != 2 ||
		ends[0].Regime != cmaes.RegimeDefault || ends[1].Regime != cmaes.RegimeLarge || ends[0].Sigma0 != 1 || ends[1].Sigma0 != 1 {
		t.Fatalf("decoded regime %s, σ0 %v, limit %d, run ends %+v", d.Regime(), d.State().RunSigma0, d.State().GenLimit, ends)
	}
	if largeRuns(d) != 2 {
		t.Fatalf("decoded large runs %d, want 2", largeRuns(d))
	}
	for g := 0; e.Stopped() == nil; g++ {
		if !samePoints(e.Ask(), d.Ask()) {
			t.Fatalf("+%d: the decoded ES asks other points", g)
		}
		ra, rb := step(t, e, rastrigin), step(t, d, rastrigin)
		if ra.Restarted != rb.Restarted || ra.Lambda != rb.Lambda {
			t.Fatalf("+%d: records differ", g)
		}
	}
	if d.Stopped() == nil || e.Run() != 4 || !bytes.Equal(encodeAs(e, versionStepDerived), encodeAs(d, versionStepDerived)) {
		t.Fatalf("the decoded ES ended elsewhere (runs %d)", e.Run())
	}
}

// TestVersion7RefusesBadBlock checks that a version-7 block naming an
// unknown regime, the first run's regime after a restart, a run σ0 that is
// not > 0, a negative generation limit or a bad config is refused.
func TestVersion7RefusesBadBlock(t *testing.T) {
	cfg := cmaes.Config{X0: constVec(2, 1), Sigma0: 1, Seed: 3, Restarts: cmaes.Restarts{BIPOP: true, Max: 2}, Termination: cmaes.Termination{TolX: 1e-2}}
	e := mustNew(t, cfg)
	for e.Run() < 3 {
		step(t, e, rastrigin)
	}
	for name, mutate := range map[string]func(*cmaes.State){
		"regime":            func(s *cmaes.State) { s.Regime = "bogus" },
		"default restarted": func(s *cmaes.State) { s.Regime = cmaes.RegimeDefault },
		"σ0 negative":       func(s *cmaes.State) { s.RunSigma0 = -1 },
		"limit":             func(s *cmaes.State) { s.GenLimit = -1 },
		"bipop and ipop":    func(s *cmaes.State) { s.Config.Restarts.IPOP = true },
		"uniform, no box":   func(s *cmaes.State) { s.Config.Restarts.Point.Uniform = true },
		"region dimension": func(s *cmaes.State) {
			s.Config.Restarts.Point.Region = &cmaes.Bounds{Lower: []float64{0}, Upper: []float64{1}}
		},
	} {
		d, err := DecodeCMAES(mustMarshal(t, e))
		if err != nil {
			t.Fatal(err)
		}
		st := d.State()
		mutate(st)
		if _, err := DecodeCMAES(AppendCMAES(nil, st)); err == nil {
			t.Errorf("%s: the blob decoded", name)
		}
	}
}

func mustMarshal(tb testing.TB, e *cmaes.ES) []byte {
	tb.Helper()
	b, err := marshal(e)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestVersion7KeepsActive checks that the Active flag survives an encoding
// (its arithmetic is the update's; here only its persistence), and that a
// state of version 6 decodes with Active false.
func TestVersion7KeepsActive(t *testing.T) {
	for _, active := range []bool{false, true} {
		e := mustNew(t, cmaes.Config{X0: constVec(3, 1), Sigma0: 1, Seed: 5, Active: active})
		step(t, e, sphere)
		blob := mustMarshal(t, e)
		d, err := DecodeCMAES(blob)
		if err != nil {
			t.Fatal(err)
		}
		if d.Config().Active != active || !bytes.Equal(mustMarshal(t, d), blob) {
			t.Fatalf("Active %v: decoded %v", active, d.Config().Active)
		}
		if v6, err := DecodeCMAES(encodeAs(e, versionStepDerived)); err != nil || v6.Config().Active {
			t.Fatalf("Active %v: the version-6 blob decodes with Active %v (%v)", active, v6 != nil && v6.Config().Active, err)
		}
	}
}

// numerics2State is testdata/cmaes/numerics2-n40.state: written by the code of
// commit 0e9253e (numerics version 2 the latest) after 30 generations of
// New(Config{X0: uniformX0(3, 40), Sigma0: 0.5, Lambda: 10, Seed: 7}) on
// the ellipsoid; numerics2Continuation is continueHash(e, 20) by that same
// code.
const numerics2Continuation = "2f7da3300e58b293bf63ca321da51c1376ba2951f3d0f0e339c86a4ab001bf6c"

// withLatestNumerics decodes blob and restores its ES with the latest
// numerics in place of its own: its batch as drawn, every later one by
// the latest decomposition and product.
func withLatestNumerics(t *testing.T, blob []byte) *cmaes.ES {
	t.Helper()
	e, err := DecodeCMAES(blob)
	if err != nil {
		t.Fatal(err)
	}
	st := e.State()
	st.Config.Numerics = cmaes.NumericsLatest
	if e, err = cmaes.Restore(st); err != nil {
		t.Fatal(err)
	}
	return e
}
