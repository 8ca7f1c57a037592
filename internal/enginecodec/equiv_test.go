package enginecodec

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/selfcma"
)

// TestSameBytesAsTheEngines checks, while the engines still carry their own
// codecs, that this package writes their bytes and decodes their fixtures
// to the same states.
func TestSameBytesAsTheEngines(t *testing.T) {
	n := 5
	f := func(x []float64) float64 {
		var s float64
		for i, v := range x {
			s += math.Pow(10, float64(i)) * v * v
		}
		return s
	}
	cfgs := []cmaes.Config{
		{X0: []float64{1, 2, 3, 4, 5}, Sigma0: 1, Seed: 1},
		{X0: []float64{1, 2, 3, 4, 5}, Sigma0: 1, Seed: 2, Active: true, Lambda: 30},
		{X0: []float64{1, 1, 1, 1, 1}, Sigma0: 1, Seed: 3, Bounds: &cmaes.Bounds{Lower: []float64{-2, -2, -2, -2, -2}, Upper: []float64{3, 3, 3, 3, 3}},
			Restarts: cmaes.Restarts{BIPOP: true, Max: 5}, Termination: cmaes.Termination{TolFun: 1e-3}},
	}
	for i, cfg := range cfgs {
		e, err := cmaes.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		s, err := selfcma.New(selfcma.Config{CMA: cfg, MinLambda: selfcma.EveryLambda, AdaptRestarts: true})
		if err != nil {
			t.Fatal(err)
		}
		for g := range 120 {
			if g%17 == 3 {
				_ = e.Inject([][]float64{make([]float64, n)}, g%2 == 0)
				_ = s.Inject([][]float64{make([]float64, n)}, g%2 == 1)
			}
			want, _ := e.MarshalBinary()
			if got := AppendCMAES(nil, e.State()); !bytes.Equal(got, want) {
				t.Fatalf("config %d, generation %d: cmaes bytes differ", i, g)
			}
			d, err := DecodeCMAES(want)
			if err != nil {
				t.Fatalf("config %d, generation %d: %v", i, g, err)
			}
			if again, _ := d.MarshalBinary(); !bytes.Equal(again, want) {
				t.Fatalf("config %d, generation %d: cmaes decodes to another state", i, g)
			}
			want, _ = s.MarshalBinary()
			if got := AppendSelfCMA(nil, s.State()); !bytes.Equal(got, want) {
				t.Fatalf("config %d, generation %d: selfcma bytes differ", i, g)
			}
			ds, err := DecodeSelfCMA(want)
			if err != nil {
				t.Fatalf("config %d, generation %d: %v", i, g, err)
			}
			if again, _ := ds.MarshalBinary(); !bytes.Equal(again, want) {
				t.Fatalf("config %d, generation %d: selfcma decodes to another state", i, g)
			}
			if len(e.Stopped()) == 0 {
				x := e.Ask()
				v := make([]float64, len(x))
				for k := range x {
					v[k] = f(x[k])
				}
				if _, err := e.Tell(v); err != nil {
					t.Fatal(err)
				}
			}
			if len(s.Status().Stop) == 0 {
				x := s.Ask()
				v := make([]float64, len(x))
				for k := range x {
					v[k] = f(x[k])
					if k == 1 {
						v[k] = math.NaN()
					}
				}
				if _, err := s.Tell(v); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, pkg := range []string{"cmaes", "selfcma"} {
		files, _ := filepath.Glob(filepath.Join("..", pkg, "testdata", "*.state"))
		if len(files) < 5 {
			t.Fatalf("%d fixtures of %s", len(files), pkg)
		}
		for _, path := range files {
			blob, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var old, got []byte
			if pkg == "cmaes" {
				a, err1 := cmaes.Unmarshal(blob)
				b, err2 := DecodeCMAES(blob)
				if err1 != nil || err2 != nil {
					t.Fatalf("%s: %v, %v", path, err1, err2)
				}
				old, _ = a.MarshalBinary()
				got = AppendCMAES(nil, b.State())
			} else {
				a, err1 := selfcma.Unmarshal(blob)
				b, err2 := DecodeSelfCMA(blob)
				if err1 != nil || err2 != nil {
					t.Fatalf("%s: %v, %v", path, err1, err2)
				}
				old, _ = a.MarshalBinary()
				got = AppendSelfCMA(nil, b.State())
			}
			if !bytes.Equal(old, got) {
				t.Errorf("%s decodes to another state", path)
			}
		}
	}
}
