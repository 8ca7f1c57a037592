package enginecodec

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/exactbits"
	"github.com/selfcma/selfcma/internal/selfcma"
)

func selfSameRows(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !exactbits.Same(a[k], b[k]) {
			return false
		}
	}
	return true
}

// selfFloatBytes is v as binenc writes it.
func selfFloatBytes(v []float64) []byte {
	var out []byte
	for _, x := range v {
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(x))
	}
	return out
}

// selfSameES reports where two CMA-ES differ in what versions 5 and 6 may
// leave out of a blob and recompute: C, B, D, the batch (genotypes and
// points handed out); "" if nowhere.
func selfSameES(a, b *cmaes.ES) string {
	ba, da := a.Eigen()
	bb, db := b.Eigen()
	switch {
	case !selfSameUpperBits(a.C(), b.C()):
		return "C"
	case !exactbits.Same(ba.RawMatrix().Data, bb.RawMatrix().Data):
		return "B"
	case !exactbits.Same(da, db):
		return "D"
	case !selfSameRows(a.Genotypes(), b.Genotypes()):
		return "the batch"
	case !selfSameRows(a.Ask(), b.Ask()):
		return "the points handed out"
	}
	return ""
}

// selfTwin is a state decoded from the blob of another, told the same values
// for left more generations.
type selfTwin struct {
	es   *selfcma.ES
	left int
}

// TestSelfCMAVersion5DecodesBitForBit checks, after every generation of runs with
// injected points, bounds, failed evaluations and IPOP restarts, that the
// decoded self-CMA-ES has the B, D and batch of both its CMA-ES and the
// primary's C bit for bit (left out of the blob and recomputed: versions 5
// and 6), encodes back to the same bytes,
// and, told what the original is told for 3 generations, asks the same
// points and stays the same state.
func TestSelfCMAVersion5DecodesBitForBit(t *testing.T) {
	n := 5
	cfgs := map[string]selfcma.Config{
		"default": {CMA: cmaes.Config{X0: uniformX0(7, n), Sigma0: 1, Lambda: 16, Seed: 41}},
		"uniform, ipop, bounds": {Init: selfcma.InitUniform, CMA: cmaes.Config{X0: make([]float64, n), Sigma0: 1, Seed: 42, Lambda: 8,
			Bounds:   &cmaes.Bounds{Lower: []float64{-2, -2, -2, -2, -2}, Upper: []float64{3, 3, 3, 3, 3}},
			Restarts: cmaes.Restarts{IPOP: true, Max: 2}, Termination: cmaes.Termination{TolX: 0.05}}},
	}
	for name, cfg := range cfgs {
		t.Run(name, func(t *testing.T) {
			s := selfMustNew(t, cfg)
			leftOut, checked, restarts, withStep, cLeftOut := 0, 0, 0, 0, 0
			var twins []selfTwin
			for g := range 250 {
				if s.Primary().Stopped() != nil {
					break
				}
				if g%4 == 1 {
					a := []float64{2.5, -1.5, 0.1 * float64(g%9), 2.9, -1.9}
					if err := s.Inject([][]float64{a}, g%8 == 1); err != nil {
						t.Fatal(err)
					}
					for _, tw := range twins {
						if err := tw.es.Inject([][]float64{a}, g%8 == 1); err != nil {
							t.Fatal(err)
						}
					}
				}
				X := s.Ask()
				v := make([]float64, len(X))
				for k, x := range X {
					v[k] = rosenbrock(x)
					if g%9 == 4 && k == 2 || g%13 == 6 {
						v[k] = math.NaN()
					}
				}
				rec, err := s.Tell(v)
				if err != nil {
					t.Fatal(err)
				}
				if rec.Restarted {
					restarts++
				}
				blob, _ := marshalSelf(s)
				kept := twins[:0]
				for _, tw := range twins {
					if !selfSameRows(tw.es.Ask(), X) {
						t.Fatalf("generation %d: a state decoded %d generations ago asks other points", g, 4-tw.left)
					}
					if _, err := tw.es.Tell(v); err != nil {
						t.Fatal(err)
					}
					if again, _ := marshalSelf(tw.es); !bytes.Equal(again, blob) {
						t.Fatalf("generation %d: a state decoded %d generations ago is another state", g, 4-tw.left)
					}
					if tw.left--; tw.left > 0 {
						kept = append(kept, tw)
					}
				}
				twins = kept

				d, err := DecodeSelfCMA(blob)
				if err != nil {
					t.Fatalf("generation %d: %v", g, err)
				}
				if where := selfSameES(d.Primary(), s.Primary()); where != "" {
					t.Fatalf("generation %d: the decoded primary's %s differs", g, where)
				}
				if where := selfSameES(auxOf(t, d), auxOf(t, s)); where != "" {
					t.Fatalf("generation %d: the decoded auxiliary's %s differs", g, where)
				}
				if again, _ := marshalSelf(d); !bytes.Equal(again, blob) {
					t.Fatalf("generation %d: the decoded state encodes to other bytes", g)
				}
				// B's first row and the batch's last point are not in the blob.
				B, _ := s.Primary().Eigen()
				G := s.Primary().Genotypes()
				if !bytes.Contains(blob, selfFloatBytes(B.RawRowView(0))) && !bytes.Contains(blob, selfFloatBytes(G[len(G)-1])) {
					leftOut++
				}
				// Version 6: with a kept step, C's first row is not in it.
				if s.State().Prev != nil {
					withStep++
					if !bytes.Contains(blob, selfFloatBytes(s.Primary().C().RawSymmetric().Data[:n])) {
						cLeftOut++
					}
				}
				twins = append(twins, selfTwin{d, 3})
				checked++
			}
			if checked < 40 || leftOut < checked*3/4 {
				t.Fatalf("%d generations checked, %d with B, D and the batch left out", checked, leftOut)
			}
			if cLeftOut < withStep*3/4 {
				t.Fatalf("%d generations with a kept step, %d with the primary's C left out", withStep, cLeftOut)
			}
			if cfg.CMA.Restarts.IPOP && restarts == 0 {
				t.Fatal("no restart")
			}
		})
	}
}

// selfEncoding4Continuation is selfContinueHash(s, 6) by the code of state version
// 4 (commit 542aea5) from testdata/selfcma/encoding4-n8.state, which that code
// wrote after 12 generations on the ellipsoid of New(Config{CMA:
// cmaes.Config{X0: uniformX0(3, 8), Sigma0: 0.5, Lambda: 16, Seed: 47,
// Bounds: [−4, 5]⁸}}), two points injected at generations 1, 5 and 9 (at 1
// and 9 with their steps clipped) and one more waiting.
const selfEncoding4Continuation = "3d1edade8e2dafe30474944e9c6593ff997946a10716504b809c91f9b1e3d692"

// TestSelfCMAUpgradeEncoding4 checks that a self-CMA-ES of state version 4 (B, D
// and the batches written) continues bit for bit as the code that wrote it
// did, also after it is encoded again in version 5.
func TestSelfCMAUpgradeEncoding4(t *testing.T) {
	blob, s := selfStateFixture(t, "testdata/selfcma/encoding4-n8.state", 4)
	if !(s.State().Prev != nil) {
		t.Fatal("the fixture keeps no step")
	}
	continuesAsWritten(t, s, selfEncoding4Continuation)
	// Its own generations leave B, D and the batch out.
	if again, _ := marshalSelf(s); len(again) >= len(blob)-8*(8*8+16*8) {
		t.Fatalf("version 5 and later take %d bytes, version 4 took %d", len(again), len(blob))
	}
}

// TestSelfCMAVersion6LargeDecodes checks version 6 where C left out is most of
// what the primary would have written (n = 40 and 100): the state
// decodes, encodes back to its bytes, and continues as the original. (A
// bound on the blob's size that counted on C being in it refused such
// states.)
func TestSelfCMAVersion6LargeDecodes(t *testing.T) {
	for _, c := range []struct{ n, lambda int }{{40, 0}, {100, 100}} {
		s := selfMustNew(t, selfcma.Config{CMA: cmaes.Config{X0: uniformX0(3, c.n), Sigma0: 0.5, Lambda: c.lambda, Seed: 61}})
		leftOut := 0
		var last *selfcma.ES
		for g := range 6 {
			X := s.Ask()
			v := make([]float64, len(X))
			for k, x := range X {
				v[k] = rosenbrock(x)
			}
			if _, err := s.Tell(v); err != nil {
				t.Fatal(err)
			}
			blob, _ := marshalSelf(s)
			d, err := DecodeSelfCMA(blob)
			if err != nil {
				t.Fatalf("n=%d, generation %d: %v", c.n, g, err)
			}
			if where := selfSameES(d.Primary(), s.Primary()); where != "" {
				t.Fatalf("n=%d, generation %d: the decoded primary's %s differs", c.n, g, where)
			}
			if again, _ := marshalSelf(d); !bytes.Equal(again, blob) {
				t.Fatalf("n=%d, generation %d: the decoded state encodes to other bytes", c.n, g)
			}
			if !bytes.Contains(blob, selfFloatBytes(s.Primary().C().RawSymmetric().Data[:c.n])) {
				leftOut++
			}
			last = d
		}
		if leftOut < 5 {
			t.Fatalf("n=%d: C left out in %d of 6 generations", c.n, leftOut)
		}
		if got, want := selfContinueHash(t, last, 3), selfContinueHash(t, s, 3); got != want {
			t.Fatalf("n=%d: the last decoded state continues otherwise", c.n)
		}
	}
}

// auxOf is s's auxiliary CMA-ES, restored from a copy of its State.
func auxOf(t *testing.T, s *selfcma.ES) *cmaes.ES {
	t.Helper()
	aux, err := cmaes.Restore(s.State().Aux.Clone())
	if err != nil {
		t.Fatal(err)
	}
	return aux
}
