package enginecodec

import (
	"bytes"
	"testing"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/selfcma"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// FuzzDecodeSelfCMA: no blob makes the decoder panic; one it accepts encodes back
// to the same bytes (a state of an older version: to bytes that decode and
// encode to themselves) and can be told.
func FuzzDecodeSelfCMA(f *testing.F) {
	s, _ := selfcma.New(selfcma.Config{CMA: cmaes.Config{X0: []float64{1, 2}, Sigma0: 1, Seed: 1}})
	for g := range 4 {
		if g >= 2 {
			_ = s.Inject([][]float64{{0.5, 0.5}}, g == 2)
		}
		blob, _ := marshalSelf(s)
		f.Add(blob)
		selfStep(f, s, sphere)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// As given (the checksum refuses almost all), then resealed so the
		// decoder's own checks are reached.
		s, err := DecodeSelfCMA(b)
		if err != nil {
			b = binenc.Reseal(b)
			if s, err = DecodeSelfCMA(b); err != nil {
				return
			}
		}
		again, _ := marshalSelf(s)
		if _, v, _ := binenc.NewReaderVersions(b, selfcmaMagic, 1, selfcmaVersion); v == selfcmaVersion && !bytes.Equal(again, b) {
			t.Fatal("accepted blob does not encode back to itself")
		}
		s2, err := DecodeSelfCMA(again)
		if err != nil {
			t.Fatalf("the re-encoded state does not decode: %v", err)
		}
		if again2, _ := marshalSelf(s2); !bytes.Equal(again2, again) {
			t.Fatal("the re-encoded state does not encode back to itself")
		}
		if s.Primary().Stopped() == nil {
			v := make([]float64, len(s.Ask()))
			_, _ = s.Tell(v)
		}
	})
}
