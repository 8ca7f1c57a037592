package enginecodec

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
	"gonum.org/v1/gonum/mat"
)

// selfSameUpperBits reports whether a and b have the same upper triangle, bit
// for bit.
func selfSameUpperBits(a, b *mat.SymDense) bool {
	ra, rb := a.RawSymmetric(), b.RawSymmetric()
	if ra.N != rb.N {
		return false
	}
	for i := range ra.N {
		for j := i; j < ra.N; j++ {
			if math.Float64bits(ra.Data[i*ra.Stride+j]) != math.Float64bits(rb.Data[i*rb.Stride+j]) {
				return false
			}
		}
	}
	return true
}

// stepReplaysTo reports whether the step's replay with its own rates gives c.
func stepReplaysTo(st *cmaes.Step, c *mat.SymDense) bool {
	n := len(st.PC)
	replayed := mat.NewSymDense(n, nil)
	st.Replay(st.Hyper, make([]float64, n), replayed)
	return selfSameUpperBits(replayed, c)
}

// TestSelfCMAKeptStepDecodesWithItsCMu checks, after every generation of runs with
// injected points, bounds, failed evaluations and IPOP restarts, that the
// decoded state's kept step has the C_μ and C of the original bit for bit,
// though its C_μ is not in the blob (the blob is smaller than with it by
// its upper triangle).
func TestSelfCMAKeptStepDecodesWithItsCMu(t *testing.T) {
	n := 5
	cfgs := map[string]selfcma.Config{
		"default": {CMA: cmaes.Config{X0: uniformX0(7, n), Sigma0: 1, Lambda: 16, Seed: 31}},
		"uniform, ipop, bounds": {Init: selfcma.InitUniform, CMA: cmaes.Config{X0: make([]float64, n), Sigma0: 1, Seed: 32, Lambda: 8,
			Bounds:   &cmaes.Bounds{Lower: []float64{-2, -2, -2, -2, -2}, Upper: []float64{3, 3, 3, 3, 3}},
			Restarts: cmaes.Restarts{IPOP: true, Max: 3}, Termination: cmaes.Termination{TolX: 0.05}}},
	}
	for name, cfg := range cfgs {
		t.Run(name, func(t *testing.T) {
			s := selfMustNew(t, cfg)
			checked, cWritten, lambdas := 0, 0, map[int]bool{}
			for g := range 250 {
				if s.Primary().Stopped() != nil {
					break
				}
				if g%4 == 1 {
					a := []float64{2.5, -1.5, 0.1 * float64(g%9), 2.9, -1.9}
					if err := s.Inject([][]float64{a}, g%8 == 1); err != nil {
						t.Fatal(err)
					}
				}
				X := s.Ask()
				v := make([]float64, len(X))
				for k, x := range X {
					v[k] = rosenbrock(x)
					if g%9 == 4 && k == 2 {
						v[k] = math.NaN()
					}
				}
				if _, err := s.Tell(v); err != nil {
					t.Fatal(err)
				}
				blob, _ := marshalSelf(s)
				d, err := DecodeSelfCMA(blob)
				if err != nil {
					t.Fatalf("generation %d: %v", g, err)
				}
				if (d.State().Prev != nil) != (s.State().Prev != nil) {
					t.Fatalf("generation %d: hasPrev %v, want %v", g, (d.State().Prev != nil), (s.State().Prev != nil))
				}
				if !(s.State().Prev != nil) {
					continue
				}
				if !selfSameUpperBits(d.State().Prev.CMu, s.State().Prev.CMu) || !selfSameUpperBits(d.State().Prev.C, s.State().Prev.C) {
					t.Fatalf("generation %d: the decoded step's C_μ or C differs from the update's", g)
				}
				// With a C_μ that no update made, the step writes it.
				var odd cmaes.Step
				odd.CopyFrom(s.State().Prev)
				odd.CMu.SetSym(0, 0, math.Nextafter(odd.CMu.At(0, 0), 2))
				oddState := s.State()
				oddState.Prev = &odd
				oddBlob := AppendSelfCMA(nil, oddState)
				// The primary's C too, if the step's replay gave it and the odd
				// step's no longer does (one ulp of C_μ may round away in
				// c_μ C_μ; a safeguard may have changed C after the update).
				want := 8 + 8*n*(n+1)/2
				if stepReplaysTo(s.State().Prev, s.Primary().C()) && !stepReplaysTo(&odd, s.Primary().C()) {
					want *= 2
					cWritten++
				}
				if got := len(oddBlob) - len(blob); got != want {
					t.Fatalf("generation %d: the step's C_μ would take %d bytes, want %d", g, got, want)
				}
				do, err := DecodeSelfCMA(oddBlob)
				if err != nil {
					t.Fatalf("generation %d: the state with a written C_μ: %v", g, err)
				}
				if again, _ := marshalSelf(do); !selfSameUpperBits(do.State().Prev.CMu, odd.CMu) || !bytes.Equal(again, oddBlob) {
					t.Fatalf("generation %d: a written C_μ does not decode as it was", g)
				}
				checked++
				lambdas[s.State().Prev.X.RawMatrix().Rows] = true
			}
			if checked < 40 || cWritten == 0 {
				t.Fatalf("only %d kept steps checked, %d with C written", checked, cWritten)
			}
			if cfg.CMA.Restarts.IPOP && len(lambdas) < 2 {
				t.Fatalf("kept steps of λ %v only: no restart tested", lambdas)
			}
		})
	}
}

// selfEncoding3Continuation is selfContinueHash(s, 6) by the code of state version
// 3 (commit 0e9253e) from testdata/selfcma/encoding3-n8.state, which that code
// wrote after 12 generations on the ellipsoid of New(Config{CMA:
// cmaes.Config{X0: uniformX0(3, 8), Sigma0: 0.5, Lambda: 16, Seed: 17,
// Bounds: [−4, 5]⁸}}), two points injected at generations 1, 5 and 9 (at 1
// and 9 with their steps clipped) and one more waiting.
const selfEncoding3Continuation = "bdd4fc40f91f634dbc4d2f0e32801b8cf14596c1f8eeadfee82f9d957fdb0665"

// TestSelfCMAUpgradeEncoding3 checks that a self-CMA-ES of state version 3 (its
// kept step with C_μ written) continues bit for bit as the code that wrote
// it did, also after it is encoded again in version 4, where the C_μ of
// the kept step is recomputed.
func TestSelfCMAUpgradeEncoding3(t *testing.T) {
	blob, s := selfStateFixture(t, "testdata/selfcma/encoding3-n8.state", 3)
	if !(s.State().Prev != nil) {
		t.Fatal("the fixture keeps no step")
	}
	again, _ := marshalSelf(s)
	n := s.Primary().Dim()
	if saved, least := len(blob)-len(again), 8*(n*(n+1)/2+n*n); saved < least {
		t.Errorf("version 4 and later save %d bytes, want at least %d", saved, least)
	}
	// The C_μ the version-3 blob carried is the one later versions recompute.
	if s2, err := DecodeSelfCMA(again); err != nil || !selfSameUpperBits(s2.State().Prev.CMu, s.State().Prev.CMu) {
		t.Fatalf("the recomputed C_μ differs from the one the version-3 state carried (%v)", err)
	}
	continuesAsWritten(t, s, selfEncoding3Continuation)
}

// BenchmarkSelfCMAMarshal times the encoding and the decoding of a self-CMA-ES
// with a kept step (λ = 100), as a session persists and loads it: the
// encoding checks the step's C_μ and the primary's C, the decoding
// recomputes them and decomposes C.
func BenchmarkSelfCMAMarshal(b *testing.B) {
	for _, n := range []int{10, 100, 400} {
		s := selfMustNew(b, selfcma.Config{CMA: cmaes.Config{X0: uniformX0(1, n), Sigma0: 1, Lambda: 100, Seed: 1}})
		for range 3 {
			selfStep(b, s, rosenbrock)
		}
		blob, _ := marshalSelf(s)
		b.Run(fmt.Sprintf("encode/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(blob)))
			var buf []byte
			var err error
			for b.Loop() {
				if buf, err = appendSelf(s, buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("decode/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(blob)))
			for b.Loop() {
				if _, err := DecodeSelfCMA(blob); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestSelfCMAUnmarshalRejectsCorruptState(t *testing.T) {
	s := selfMustNew(t, selfcma.Config{CMA: cmaes.Config{X0: []float64{1, 2, 3}, Sigma0: 1, Seed: 1}})
	selfStep(t, s, sphere)
	selfStep(t, s, sphere)
	blob, _ := marshalSelf(s)
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		bad := bytes.Clone(blob)
		bad[r.IntN(len(bad))] ^= byte(1 + r.IntN(255))
		if _, err := DecodeSelfCMA(bad); err == nil {
			t.Fatal("flipped byte: no error")
		}
	}
	if _, err := DecodeSelfCMA(blob[:len(blob)/2]); err == nil {
		t.Fatal("truncated: no error")
	}
	plain, _ := cmaes.New(cmaes.Config{X0: []float64{1}, Sigma0: 1})
	pb, _ := marshal(plain)
	if _, err := DecodeSelfCMA(pb); err == nil {
		t.Fatal("a cmaes state decoded as selfcma")
	}
}

// TestSelfCMAAppendBinary: AppendSelfCMA writes after dst's bytes exactly what it
// writes into nil, into a reused buffer too, and the blob decodes.
func TestSelfCMAAppendBinary(t *testing.T) {
	s := selfMustNew(t, selfcma.Config{CMA: cmaes.Config{X0: uniformX0(8, 1), Sigma0: 1, Seed: 4}})
	var buf []byte
	for g := range 4 {
		want, err := marshalSelf(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendSelf(s, []byte("prefix"))
		if err != nil || string(got[:6]) != "prefix" || !bytes.Equal(got[6:], want) {
			t.Fatalf("generation %d: AppendBinary after a prefix differs from MarshalBinary (%v)", g, err)
		}
		if buf, err = appendSelf(s, buf[:0]); err != nil || !bytes.Equal(buf, want) {
			t.Fatalf("generation %d: AppendBinary into a reused buffer differs (%v)", g, err)
		}
		if _, err := DecodeSelfCMA(got[6:]); err != nil {
			t.Fatalf("generation %d: %v", g, err)
		}
		selfStep(t, s, sphere)
	}
}
