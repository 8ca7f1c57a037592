package catcma_test

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/catcma"
	"github.com/selfcma/selfcma/internal/mixedfn"
)

func newProblem(t testing.TB, p mixedfn.Problem, seed uint64) *catcma.CatCMA {
	t.Helper()
	x, z, c := p.Space()
	o, err := catcma.New(catcma.Config{Space: catcma.Space{X: x, Z: z, C: c}, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// step asks, evaluates with f and tells; it returns the batch's best value.
func step(t testing.TB, o *catcma.CatCMA, f func(x, z []float64, c []int) float64) float64 {
	t.Helper()
	batch := o.Ask()
	vals := make([]float64, len(batch))
	for i, c := range batch {
		vals[i] = f(c.X, c.Z, c.C)
	}
	if err := o.Tell(vals); err != nil {
		t.Fatal(err)
	}
	return slices.Min(vals)
}

// TestInvariants checks after every tell: each categorical distribution
// sums to 1 and respects its margin q_min; every candidate's integers are
// values of their lists, its x within the bounds, its categories in range;
// C symmetric with positive eigenvalues; σ positive and finite.
func TestInvariants(t *testing.T) {
	for _, p := range append(mixedfn.Problems(9), mixedfn.Problems(30)[0]) {
		t.Run(p.Name, func(t *testing.T) {
			o := newProblem(t, p, 3)
			for gen := range 300 {
				for _, c := range o.Ask() {
					for _, v := range c.X {
						if v < p.XLower || v > p.XUpper {
							t.Fatalf("gen %d: x %v outside [%v, %v]", gen, v, p.XLower, p.XUpper)
						}
					}
					for _, v := range c.Z {
						if !slices.Contains(p.ZValues, v) {
							t.Fatalf("gen %d: z %v not in %v", gen, v, p.ZValues)
						}
					}
					for _, v := range c.C {
						if v < 0 || v >= p.K {
							t.Fatalf("gen %d: category %d of %d", gen, v, p.K)
						}
					}
				}
				step(t, o, p.F)
				s, n := &o.State, o.Params.NMi
				for i, q := range s.Q {
					sum := 0.0
					for _, v := range q {
						sum += v
						if v < o.Params.QMin[i]*(1-1e-9) {
							t.Fatalf("gen %d: q[%d] = %v below the margin %v", gen, i, q, o.Params.QMin[i])
						}
					}
					if math.Abs(sum-1) > 1e-12 {
						t.Fatalf("gen %d: q[%d] sums to %v", gen, i, sum)
					}
				}
				if !(s.Sigma > 0) || math.IsInf(s.Sigma, 0) {
					t.Fatalf("gen %d: sigma %v", gen, s.Sigma)
				}
				for i := range n {
					if s.D[i] <= 0 {
						t.Fatalf("gen %d: D[%d] = %v", gen, i, s.D[i])
					}
					for j := range n {
						if s.C[i*n+j] != s.C[j*n+i] {
							t.Fatalf("gen %d: C not symmetric at %d, %d", gen, i, j)
						}
					}
				}
			}
		})
	}
}

// TestConvergence runs the benchmark problems at n = 9 to the target.
func TestConvergence(t *testing.T) {
	for _, p := range mixedfn.Problems(9) {
		t.Run(p.Name, func(t *testing.T) {
			for seed := range uint64(3) {
				o := newProblem(t, p, seed)
				evals, best := 0, math.Inf(1)
				for evals < 50000 && best > mixedfn.Target {
					best = math.Min(best, step(t, o, p.F))
					evals += o.Params.Lambda
				}
				if best > mixedfn.Target {
					t.Errorf("seed %d: best %v after %d evaluations, want ≤ %v", seed, best, evals, mixedfn.Target)
				}
			}
		})
	}
}

// TestSeed: a seed reproduces a run; another seed gives another.
func TestSeed(t *testing.T) {
	p := mixedfn.Problems(9)[0]
	run := func(seed uint64) []byte {
		o := newProblem(t, p, seed)
		for range 20 {
			step(t, o, p.F)
		}
		b, err := o.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if !bytes.Equal(run(5), run(5)) {
		t.Error("two runs with seed 5 differ")
	}
	if bytes.Equal(run(5), run(6)) {
		t.Error("seeds 5 and 6 give the same run")
	}
}

// TestRoundTrip: encode, decode, encode gives the same bytes, and the
// decoded optimizer continues exactly as the original, for every kind of
// space.
func TestRoundTrip(t *testing.T) {
	spaces := map[string]catcma.Space{
		"mixed":    {X: [][2]float64{{-1, 2}, {math.Inf(-1), math.Inf(1)}}, Z: [][]float64{{0, 1, 2, 3}, {0.01, 0.1, 1}}, C: []int{3, 2}},
		"cont_int": {X: [][2]float64{{-1, 2}}, Z: [][]float64{{-3, -2, -1, 0, 1}}},
		"int_cat":  {Z: [][]float64{{0, 1, 2}}, C: []int{4}},
		"cat":      {C: []int{3, 5}},
		"cont":     {X: [][2]float64{{-1, 2}, {-1, 2}}},
	}
	f := func(x, z []float64, c []int) float64 {
		return mixedfn.SphereIntCOM(x, z, c) + 0.3*float64(len(x))
	}
	for name, sp := range spaces {
		t.Run(name, func(t *testing.T) {
			a, err := catcma.New(catcma.Config{Space: sp, Seed: 11})
			if err != nil {
				t.Fatal(err)
			}
			for gen := range 40 {
				blob, err := a.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				b, err := catcma.Unmarshal(blob)
				if err != nil {
					t.Fatalf("gen %d: %v", gen, err)
				}
				again, _ := b.MarshalBinary()
				if !bytes.Equal(blob, again) {
					t.Fatalf("gen %d: re-encoding differs", gen)
				}
				if mb := a.MemoryBytes(); mb < len(blob)/2 {
					t.Fatalf("gen %d: MemoryBytes %d for a %d-byte state", gen, mb, len(blob))
				}
				step(t, a, f)
				step(t, b, f)
				ea, _ := a.MarshalBinary()
				eb, _ := b.MarshalBinary()
				if !bytes.Equal(ea, eb) {
					t.Fatalf("gen %d: the decoded optimizer diverged", gen)
				}
			}
		})
	}
}

func TestDecodeRefuses(t *testing.T) {
	o := newProblem(t, mixedfn.Problems(9)[0], 1)
	blob, _ := o.MarshalBinary()
	for _, bad := range [][]byte{nil, blob[:len(blob)-1], append(slices.Clone(blob), 0)} {
		if _, err := catcma.Unmarshal(bad); err == nil {
			t.Errorf("a %d-byte blob decoded", len(bad))
		}
	}
	flipped := slices.Clone(blob)
	flipped[40] ^= 1
	if _, err := catcma.Unmarshal(flipped); err == nil {
		t.Error("a flipped bit decoded")
	}
}

func TestBadInput(t *testing.T) {
	for name, cfg := range map[string]catcma.Config{
		"empty":       {},
		"bounds":      {Space: catcma.Space{X: [][2]float64{{1, 1}}}},
		"one value":   {Space: catcma.Space{Z: [][]float64{{1}}}},
		"duplicate":   {Space: catcma.Space{Z: [][]float64{{1, 2, 1}}}},
		"one choice":  {Space: catcma.Space{C: []int{1}}},
		"lambda":      {Space: catcma.Space{C: []int{2}}, Lambda: 1},
		"sigma":       {Space: catcma.Space{X: [][2]float64{{0, 1}}}, Sigma: -1},
		"mean length": {Space: catcma.Space{X: [][2]float64{{0, 1}}}, Mean: []float64{0, 0}},
		"q sum":       {Space: catcma.Space{C: []int{2}}, Q: [][]float64{{0.2, 0.2}}},
	} {
		if _, err := catcma.New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
	o := newProblem(t, mixedfn.Problems(9)[0], 1)
	if err := o.Tell([]float64{1}); err == nil {
		t.Error("Tell accepted 1 value for λ values")
	}
	// NaN ranks worst and leaves the state finite.
	vals := make([]float64, o.Params.Lambda)
	vals[0] = math.NaN()
	if err := o.Tell(vals); err != nil {
		t.Fatal(err)
	}
	for _, m := range o.State.Mean {
		if math.IsNaN(m) {
			t.Fatal("NaN fitness made the mean NaN")
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	o, _ := catcma.New(catcma.Config{Space: catcma.Space{X: [][2]float64{{0, 1}}, Z: [][]float64{{0, 1, 2}}, C: []int{3}}})
	blob, _ := o.MarshalBinary()
	f.Add(blob)
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := catcma.Unmarshal(binenc.Reseal(b)) // past the checksum
		if err != nil {
			return
		}
		once, err := o.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		o2, err := catcma.Unmarshal(once)
		if err != nil {
			t.Fatalf("a re-encoded state does not decode: %v", err)
		}
		twice, _ := o2.MarshalBinary()
		if !bytes.Equal(once, twice) {
			t.Fatal("encoding is not stable")
		}
		o2.Ask()
		// Whatever the values, a decoded optimizer takes a Tell without
		// panicking.
		o2.Tell(make([]float64, o2.Params.Lambda))
	})
}
