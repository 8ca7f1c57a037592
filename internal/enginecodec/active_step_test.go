package enginecodec

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/exactbits"
	"gonum.org/v1/gonum/mat"
)

// needActiveEncoding skips a test of the active Step's encoding while the
// ES's encoding is older than versionActiveStep (codec.go's cmaesVersion).
func needActiveEncoding(tb testing.TB) {
	tb.Helper()
	if cmaesVersion < versionActiveStep {
		tb.Skipf("the ES's encoding is version %d; active Steps need %d", cmaesVersion, versionActiveStep)
	}
}

// activeRun runs an active ES on Rosenbrock with injected points (clipped
// and not), failed evaluations and rates changed every other generation,
// calling check with each Step kept.
func activeRun(t *testing.T, n, lambda, gens int, check func(g int, e *cmaes.ES, st *cmaes.Step)) {
	t.Helper()
	e := mustNew(t, cmaes.Config{X0: uniformX0(4, n), Sigma0: 1, Seed: 31, Lambda: lambda, Active: true})
	for g := range gens {
		if g%3 == 0 {
			a := make([]float64, n)
			for i := range a {
				a[i] = 2.5 - 0.4*float64((g+i)%7)
			}
			if err := e.Inject([][]float64{a}, g%2 == 0); err != nil {
				t.Fatal(err)
			}
		}
		X := e.Ask()
		v := make([]float64, len(X))
		for k, x := range X {
			v[k] = rosenbrock(x)
			if g%7 == 3 && k%4 == 1 {
				v[k] = math.NaN()
			}
		}
		if _, err := e.Tell(v); err != nil {
			t.Fatal(err)
		}
		if st := e.LastStep(); st != nil {
			check(g, e, st)
		}
		h := e.Params().Hyper()
		if g%2 == 1 {
			h = cmaes.Hyper{C1: 0.03, CMu: 0.5, Cc: 0.4}
		}
		if err := e.SetHyper(h); err != nil {
			t.Fatal(err)
		}
	}
}

// An active Step decodes with every field bit for bit, its positive C_μ
// recomputed with the active weights and C_μ^- written, encodes back to
// the same bytes, and replays with any rates as the original does.
func TestActiveStepRoundTrip(t *testing.T) {
	needActiveEncoding(t)
	for _, lambda := range []int{10, 13} { // odd λ: the active positive weights differ from the paper's
		n, checked, injected := 6, 0, 0
		activeRun(t, n, lambda, 120, func(g int, e *cmaes.ES, st *cmaes.Step) {
			blob := stepBlob(st)
			got := stepFromBlob(t, blob)
			if !got.Active || got.WNegSum != st.WNegSum || got.AlphaMuWNeg != st.AlphaMuWNeg {
				t.Fatalf("λ=%d generation %d: active %v, Σw° %v, α_μeff %v; want %v, %v", lambda, g, got.Active, got.WNegSum, got.AlphaMuWNeg, st.WNegSum, st.AlphaMuWNeg)
			}
			if i, j := symBitsDiffer(got.CMuNeg, st.CMuNeg); i >= 0 {
				t.Fatalf("λ=%d generation %d: C_μ^-(%d, %d) differs", lambda, g, i, j)
			}
			if i, j := symBitsDiffer(got.CMu, st.CMu); i >= 0 {
				t.Fatalf("λ=%d generation %d: C_μ(%d, %d) differs", lambda, g, i, j)
			}
			if !bytes.Equal(stepBlob(got), blob) {
				t.Fatalf("λ=%d generation %d: the decoded step encodes differently", lambda, g)
			}
			if len(blob) > stepSize(st) {
				t.Fatalf("λ=%d generation %d: %d bytes, EncodedSize %d", lambda, g, len(blob), stepSize(st))
			}
			for _, h := range []cmaes.Hyper{st.Hyper, {C1: 0.2, CMu: 0.3, Cc: 0.1}} {
				pa, pb := make([]float64, n), make([]float64, n)
				ca, cb := mat.NewSymDense(n, nil), mat.NewSymDense(n, nil)
				st.Replay(h, pa, ca)
				got.Replay(h, pb, cb)
				if !sameSymBits(ca, cb) || !exactbits.Same(pa, pb) {
					t.Fatalf("λ=%d generation %d: the decoded step replays differently", lambda, g)
				}
			}
			if st.WNegSum > -1+1e-9 {
				injected++
			}
			checked++
		})
		if checked < 100 || injected == 0 {
			t.Fatalf("λ=%d: %d steps checked, %d with an injected point among the worst", lambda, checked, injected)
		}
	}
}

// A blob whose active part is damaged is refused.
func TestActiveStepCorrupt(t *testing.T) {
	needActiveEncoding(t)
	activeRun(t, 4, 8, 3, func(g int, e *cmaes.ES, st *cmaes.Step) {
		var odd cmaes.Step
		odd.CopyFrom(st)
		for _, v := range []float64{math.NaN(), -1.5, 0.5} {
			odd.WNegSum = v
			r, err := binenc.NewReader(stepBlob(&odd), "step", cmaesVersion)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := decodeStep(r, cmaesVersion); err == nil {
				t.Fatalf("Σw° = %v decoded", v)
			}
		}
	})
}

// The passive Step's version-7 layout is version 6's and one flag: a
// Step of Algorithm 1 costs one byte more, and its fields are as before.
func TestPassiveStepLayout(t *testing.T) {
	e := mustNew(t, cmaes.Config{X0: uniformX0(5, 5), Sigma0: 1, Seed: 2})
	step(t, e, rosenbrock)
	st := e.LastStep()
	enc := func(v uint32) []byte {
		w := binenc.NewWriter("step", v)
		encodeStepVersion(w, v, st)
		return w.Finish()
	}
	v6, v7 := enc(versionStepDerived), enc(versionActiveStep)
	// After the header (magic and version) and before the 4-byte CRC, the
	// payload of v7 is v6's and a 0.
	head := 8 + len("step") + 4
	p6, p7 := v6[head:len(v6)-4], v7[head:len(v7)-4]
	if len(p7) != len(p6)+1 || p7[len(p7)-1] != 0 || !bytes.Equal(p6, p7[:len(p7)-1]) {
		t.Fatalf("version 7 of a passive step: %d bytes, version 6: %d", len(p7), len(p6))
	}
}

// The ES's C left out for the active Step that gives it (version 6's
// derived C, codec.go) decodes bit for bit.
func TestActiveStepDerivedC(t *testing.T) {
	needActiveEncoding(t)
	activeRun(t, 5, 12, 40, func(g int, e *cmaes.ES, st *cmaes.Step) {
		w := binenc.NewWriter(cmaesMagic, cmaesVersion)
		encodeAsVersion(w, cmaesVersion, e.State(), st)
		blob := w.Finish()
		r, err := binenc.NewReader(blob, cmaesMagic, cmaesVersion)
		if err != nil {
			t.Fatal(err)
		}
		d, err := decodeRestore(r, cmaesVersion, stepFromBlob(t, stepBlob(st)))
		if err != nil {
			t.Fatalf("generation %d: %v", g, err)
		}
		if i, j := symBitsDiffer(d.State().C, e.State().C); i >= 0 {
			t.Fatalf("generation %d: C(%d, %d) differs", g, i, j)
		}
		if !d.Params().Active || !slices.Equal(d.Ask()[0], e.Ask()[0]) {
			t.Fatalf("generation %d: the decoded ES is not the active one", g)
		}
	})
}
