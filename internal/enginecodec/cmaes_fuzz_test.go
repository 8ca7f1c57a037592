package enginecodec

import (
	"bytes"
	"testing"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/cmaes"
)

// FuzzDecodeCMAES: no blob makes the decoder panic; one it accepts encodes back
// to the same bytes (a state of an older version: to bytes that decode and
// encode to themselves) and can be told.
func FuzzDecodeCMAES(f *testing.F) {
	e, _ := cmaes.New(cmaes.Config{X0: []float64{1, 2}, Sigma0: 1, Seed: 1, Bounds: &cmaes.Bounds{Lower: []float64{-5, -5}, Upper: []float64{5, 5}}})
	blob, _ := marshal(e)
	f.Add(blob)
	old, _ := cmaes.New(cmaes.Config{X0: []float64{1, 2}, Sigma0: 1, Seed: 1, Bounds: &cmaes.Bounds{Lower: []float64{-5, -5}, Upper: []float64{5, 5}}, Numerics: cmaes.NumericsDsyev})
	oldBlob, _ := marshal(old)
	f.Add(asVersion1(f, oldBlob))
	step(f, e, sphere)
	blob, _ = marshal(e)
	f.Add(blob)
	// Injected points, waiting and in the pending batch.
	_ = e.Inject([][]float64{{0, 1}, {4.5, -5}}, true)
	blob, _ = marshal(e)
	f.Add(blob)
	step(f, e, sphere)
	_ = e.Inject([][]float64{{1, 1}}, false)
	blob, _ = marshal(e)
	f.Add(blob)
	f.Add(asVersion4(f, blob))
	// Stopped by a tell: the batch written (version 5).
	stopped, _ := cmaes.New(cmaes.Config{X0: []float64{1, 2}, Sigma0: 1, Seed: 2, Termination: cmaes.Termination{MaxEvaluations: 1}})
	step(f, stopped, sphere)
	blob, _ = marshal(stopped)
	f.Add(blob)
	// BIPOP in a small run, uniform restart points in a region (version 7).
	bipop, _ := cmaes.New(cmaes.Config{X0: []float64{1, 2}, Sigma0: 1, Seed: 3, Restarts: cmaes.Restarts{BIPOP: true, Max: 3,
		Point: cmaes.RestartPoint{Uniform: true, Region: &cmaes.Bounds{Lower: []float64{0, 0}, Upper: []float64{3, 3}}}},
		Termination: cmaes.Termination{TolX: 0.1}})
	for g := 0; g < 500 && bipop.Regime() != cmaes.RegimeSmall; g++ {
		step(f, bipop, sphere)
	}
	blob, _ = marshal(bipop)
	f.Add(blob)
	// A mirrored first run, its batch pending (version 12).
	mirrored, _ := cmaes.New(cmaes.Config{X0: []float64{1, 2, 3}, Sigma0: 1, Seed: 4, Lambda: 5, MirroredFirstRun: true})
	step(f, mirrored, sphere)
	mirrored.Ask()
	blob, _ = marshal(mirrored)
	f.Add(blob)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		// As given (the checksum refuses almost all), then resealed so the
		// decoder's own checks are reached.
		e, err := DecodeCMAES(b)
		if err != nil {
			b = binenc.Reseal(b)
			if e, err = DecodeCMAES(b); err != nil {
				return
			}
		}
		again, _ := marshal(e)
		if _, v, _ := binenc.NewReaderVersions(b, cmaesMagic, 1, cmaesVersion); v == cmaesVersion && !bytes.Equal(again, b) {
			t.Fatal("accepted blob does not encode back to itself")
		}
		e2, err := DecodeCMAES(again)
		if err != nil {
			t.Fatalf("the re-encoded state does not decode: %v", err)
		}
		if again2, _ := marshal(e2); !bytes.Equal(again2, again) {
			t.Fatal("the re-encoded state does not encode back to itself")
		}
		if e.Stopped() == nil {
			v := make([]float64, len(e.Ask()))
			_, _ = e.Tell(v)
		}
	})
}
