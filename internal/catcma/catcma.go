package catcma

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Config sets up a run. Zero values take the reference's defaults.
type Config struct {
	Space Space
	// Lambda is the population size λ; 0: DefaultLambda.
	Lambda int
	// Mean is the Gaussian's initial mean (N_mi values); nil: the centre
	// of each bounded coordinate, bound ∓ 1 for a half-bounded one, 0.
	Mean []float64
	// Sigma is σ⁽⁰⁾ (> 0); 0: 1.
	Sigma float64
	// Cov is the initial C (N_mi × N_mi, row-major); nil: diagonal with
	// the squares of width/6 (continuous) and width/5 (integer), width the
	// distance from the mean to the nearer bound, 1 when unbounded.
	Cov []float64
	// Q is the initial categorical distribution (N_ca rows of K_i
	// probabilities summing to 1); nil: uniform.
	Q           [][]float64
	Seed        uint64
	Termination Termination
}

// Candidate is one point of a batch.
type Candidate struct {
	X []float64 // continuous coordinates, clipped to the bounds
	Z []float64 // one value of each integer variable's list
	C []int     // 0-based category of each categorical variable
}

// CatCMA is the optimizer: its Space, Params and State.
type CatCMA struct {
	Space  Space
	Params Params
	State  State

	grid grid
	rnd  *rand.Rand
	// rates, when set, replace c_1, c_μ and the weights of the Gaussian's
	// next update (not the categorical one's): an experiment's hook
	// (rates_test.go, docs/mixed.md), never set by the package, not state.
	rates *Params
}

const streamPCG = 0xca7c3a // the PCG's second word, fixed

// New returns an optimizer with its first batch sampled.
func New(cfg Config) (*CatCMA, error) {
	if err := cfg.Space.validate(); err != nil {
		return nil, err
	}
	o := &CatCMA{Space: cfg.Space.clone()}
	p, err := newParams(o.Space, cfg.Lambda)
	if err != nil {
		return nil, err
	}
	o.Params = p
	o.grid = newGrid(o.Space.Z)
	o.State.Termination, o.State.Seed = cfg.Termination, cfg.Seed
	o.State.RNG = *rand.NewPCG(cfg.Seed, streamPCG)
	o.rnd = rand.New(&o.State.RNG)
	if p.NMi > 0 {
		if err := o.initGaussian(cfg); err != nil {
			return nil, err
		}
	}
	if p.NCa > 0 {
		if err := o.initCategorical(cfg.Q); err != nil {
			return nil, err
		}
	}
	o.sample()
	return o, nil
}

// bounds returns the Gaussian's coordinate bounds: the continuous ones, then
// each integer variable's smallest and largest value.
func (o *CatCMA) bounds() (lo, hi []float64) {
	for _, b := range o.Space.X {
		lo, hi = append(lo, b[0]), append(hi, b[1])
	}
	for _, row := range o.Space.Z {
		lo, hi = append(lo, row[0]), append(hi, row[len(row)-1])
	}
	return lo, hi
}

func (o *CatCMA) initGaussian(cfg Config) error {
	p, s := o.Params, &o.State
	n := p.NMi
	lo, hi := o.bounds()
	if cfg.Mean == nil {
		s.Mean = make([]float64, n)
		for i := range n {
			switch {
			case !math.IsInf(lo[i], -1) && !math.IsInf(hi[i], 1):
				s.Mean[i] = (lo[i] + hi[i]) / 2
			case math.IsInf(lo[i], -1) && !math.IsInf(hi[i], 1):
				s.Mean[i] = hi[i] - 1
			case !math.IsInf(lo[i], -1) && math.IsInf(hi[i], 1):
				s.Mean[i] = lo[i] + 1
			}
		}
	} else {
		if len(cfg.Mean) != n {
			return fmt.Errorf("catcma: mean: %d values, want %d", len(cfg.Mean), n)
		}
		s.Mean = slices.Clone(cfg.Mean)
	}
	for i, m := range s.Mean {
		if !(math.Abs(m) < meanMax) {
			return fmt.Errorf("catcma: mean[%d]: %v is not finite and below %g in magnitude", i, m, meanMax)
		}
	}
	s.Sigma = 1
	if cfg.Sigma != 0 {
		if !(cfg.Sigma > 0) || math.IsInf(cfg.Sigma, 1) {
			return fmt.Errorf("catcma: sigma: %v, want a finite value > 0", cfg.Sigma)
		}
		s.Sigma = cfg.Sigma
	}
	s.Sigma0 = s.Sigma
	if cfg.Cov == nil {
		s.C = make([]float64, n*n)
		for i := range n {
			w := math.Min(s.Mean[i]-lo[i], hi[i]-s.Mean[i])
			if i < p.NCo {
				w /= 6
			} else {
				w /= 5
			}
			v := 1.0
			if !math.IsInf(w, 0) && !math.IsNaN(w) {
				v = w * w
			}
			s.C[i*n+i] = v
		}
	} else {
		if len(cfg.Cov) != n*n {
			return fmt.Errorf("catcma: cov: %d values, want %d", len(cfg.Cov), n*n)
		}
		s.C = slices.Clone(cfg.Cov)
	}
	s.B, s.D = make([]float64, n*n), make([]float64, n)
	if !o.decompose() {
		return fmt.Errorf("catcma: cov: not a symmetric matrix with finite eigenvalues")
	}
	s.PSigma, s.PC = make([]float64, n), make([]float64, n)
	s.A = make([]float64, n)
	for i := range s.A {
		s.A[i] = 1
	}
	s.PMut = make([]float64, p.NIn)
	for i := range s.PMut {
		s.PMut[i] = 0.5 - eps
	}
	s.IntSucc = make([]bool, p.NIn)
	s.FunHist = make([]float64, 2*p.FunHistTerm)
	return nil
}

func (o *CatCMA) initCategorical(q [][]float64) error {
	p, s := o.Params, &o.State
	s.Q = make([][]float64, p.NCa)
	for i, k := range p.K {
		s.Q[i] = make([]float64, k)
		if q == nil {
			for j := range k {
				s.Q[i][j] = 1 / float64(k)
			}
			continue
		}
		if len(q) != p.NCa || len(q[i]) != k {
			return fmt.Errorf("catcma: q: want %d rows of %v probabilities", p.NCa, p.K)
		}
		sum := 0.0
		for j, v := range q[i] {
			if !(v >= 0 && v <= 1) {
				return fmt.Errorf("catcma: q[%d][%d]: %v is not in [0, 1]", i, j, v)
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-8 {
			return fmt.Errorf("catcma: q[%d]: sums to %v, want 1", i, sum)
		}
		copy(s.Q[i], q[i])
	}
	s.S = make([]float64, p.ParamSum)
	s.Delta, s.TrustDelta = 1, deltaInit
	return nil
}

// sample draws the next batch: per candidate N_mi normal numbers, then N_ca
// uniform ones (the reference's ask).
func (o *CatCMA) sample() {
	p, s := o.Params, &o.State
	n := p.NMi
	s.V = make([][]float64, p.Lambda)
	s.Cat = make([][]int, p.Lambda)
	xi := make([]float64, n)
	for k := range p.Lambda {
		if n > 0 {
			for i := range xi {
				xi[i] = o.rnd.NormFloat64()
			}
			v := make([]float64, n)
			for i := range n {
				y := 0.0 // y = B D ξ ~ N(0, C)
				for j := range n {
					y += s.B[i*n+j] * s.D[j] * xi[j]
				}
				v[i] = s.Mean[i] + s.Sigma*s.A[i]*y // ~ N(m, σ² A C A)
			}
			s.V[k] = v
		}
		if p.NCa > 0 {
			c := make([]int, p.NCa)
			for i, q := range s.Q {
				c[i] = sampleCategory(q, o.rnd.Float64())
			}
			s.Cat[k] = c
		}
	}
}

// sampleCategory returns the k with Σ_{j<k} q_j ≤ u < Σ_{j≤k} q_j, the last
// one when rounding leaves u past the sum.
func sampleCategory(q []float64, u float64) int {
	cum := 0.0
	for k, v := range q {
		cum += v
		if u < cum {
			return k
		}
	}
	return len(q) - 1
}

// Ask returns the pending batch (fresh copies): the same points until Tell.
func (o *CatCMA) Ask() []Candidate {
	p, s := o.Params, &o.State
	out := make([]Candidate, p.Lambda)
	for k := range out {
		c := Candidate{}
		if p.NCo > 0 {
			c.X = make([]float64, p.NCo)
			for i := range c.X {
				c.X[i] = min(max(s.V[k][i], o.Space.X[i][0]), o.Space.X[i][1])
			}
		}
		if p.NIn > 0 {
			c.Z = make([]float64, p.NIn)
			for i := range c.Z {
				c.Z[i] = o.grid.discretize(i, s.V[k][p.NCo+i])
			}
		}
		if p.NCa > 0 {
			c.C = slices.Clone(s.Cat[k])
		}
		out[k] = c
	}
	return out
}

// Tell takes the fitness of the pending batch, in its order (smaller is
// better; NaN ranks worst), updates the distribution and samples the next
// batch.
func (o *CatCMA) Tell(fitness []float64) error {
	p, s := o.Params, &o.State
	if len(s.Stop) > 0 {
		return ErrStopped
	}
	if len(fitness) != p.Lambda {
		return fmt.Errorf("catcma: fitness: %d values, want %d", len(fitness), p.Lambda)
	}
	o.track(o.Ask(), fitness)
	f := make([]float64, p.Lambda)
	for i, v := range fitness {
		if math.IsNaN(v) {
			v = math.Inf(1)
		}
		f[i] = v
	}
	order, sortedF := o.rank(f)
	s.Generation++
	if p.NMi > 0 {
		t := 2 * (s.Generation % p.FunHistTerm)
		s.FunHist[t], s.FunHist[t+1] = sortedF[0], sortedF[p.Lambda-1]
	}
	var sv [][]float64
	if p.NMi > 0 {
		sv = make([][]float64, p.Lambda)
		for r, k := range order {
			sv[r] = slices.Clone(s.V[k])
		}
	}
	if p.NIn > 0 {
		o.integerCentering(sv)
	}
	if p.NMi > 0 {
		o.updateGaussian(sv)
	}
	if p.NIn > 0 {
		o.marginCorrection()
	}
	if p.NCa > 0 {
		sc := make([][]int, p.Lambda)
		for r, k := range order {
			sc[r] = s.Cat[k]
		}
		o.updateCategorical(sc)
	}
	if name, v := o.criterion(); len(s.Stop) == 0 && name != "" && !s.Termination.NoShouldStop {
		s.Stop = append(s.Stop, StopReason{Name: name, Value: v})
	}
	o.sample()
	return nil
}
