package session

import (
	"fmt"
	"math"
	"slices"

	"github.com/selfcma/selfcma/internal/catcma"
	"github.com/selfcma/selfcma/internal/cmaes"
	"github.com/selfcma/selfcma/internal/enginecodec"
	"gonum.org/v1/gonum/mat"
)

// AlgorithmCatCMA is CatCMA with margin (internal/catcma): continuous,
// integer and categorical variables in one distribution. A create that
// declares integers or categories gets it (naming another algorithm is an
// error); it may also be named for a continuous space.
const AlgorithmCatCMA = "catcma"

// The limits of a mixed space beside Limits' (variables: MaxDimension;
// λ times variables: MaxBatch).
const (
	MaxIntegerValues = 10000 // values of one integer variable
	MaxCategories    = 10000 // choices of one categorical variable
)

// MixedView is a mixed session's space and categorical distribution.
type MixedView struct {
	Continuous int         // n_x, the continuous coordinates
	Integers   [][]float64 // each integer variable's values, sorted
	Categories []int       // each categorical variable's number of choices
	// Q[i][k] is the probability of category k of variable i in the
	// pending generation's distribution.
	Q [][]float64
}

// A mixed session's points are flat inside the session (the pending
// batch, claims, best points, the augmented Lagrangian): n_x continuous
// coordinates, then n_z integer values, then n_c categories as numbers;
// they are split into x, z and c where a client sees them.

// isMixed reports whether p asks for CatCMA with margin.
func isMixed(p CreateParams) bool {
	return p.Algorithm == AlgorithmCatCMA || len(p.Integers) > 0 || len(p.Categories) > 0
}

// mixedConfig checks a mixed create and returns the engine's
// configuration (without the seed) and the flat dimension. Each message
// names its field.
func (l Limits) mixedConfig(p CreateParams) (catcma.Config, int, error) {
	var cfg catcma.Config
	if p.Algorithm != "" && p.Algorithm != AlgorithmCatCMA {
		return cfg, 0, errorf(CodeOutOfRange, "integers and categories need algorithm %q (or none), not %q", AlgorithmCatCMA, p.Algorithm)
	}
	if err := checkMixedUnsupported(p); err != nil {
		return cfg, 0, err
	}
	nx := len(p.X0)
	if p.X0 == nil && p.Bounds != nil {
		nx = len(p.Bounds.Lower)
	}
	n := nx + len(p.Integers) + len(p.Categories)
	if n < 1 || n > l.MaxDimension {
		return cfg, 0, errorf(CodeOutOfRange, "x0, integers and categories have %d variables together, want 1 to %d", n, l.MaxDimension)
	}
	if err := checkIntegers(p.Integers); err != nil {
		return cfg, 0, err
	}
	if err := checkCategories(p.Categories); err != nil {
		return cfg, 0, err
	}
	x, mean, err := mixedContinuous(p, nx)
	if err != nil {
		return cfg, 0, err
	}
	cfg.Space = catcma.Space{X: x, Z: p.Integers, C: p.Categories}
	if mean != nil {
		for _, row := range p.Integers { // the centre of each list, as the engine's default
			mean = append(mean, (row[0]+row[len(row)-1])/2)
		}
		cfg.Mean = mean
	}
	if p.Sigma0 != 0 {
		if err := checkSigma0(p.Sigma0); err != nil {
			return cfg, 0, err
		}
	}
	cfg.Sigma = p.Sigma0
	lambda := p.PopulationSize
	if lambda == 0 {
		lambda = catcma.DefaultLambda(cfg.Space)
	}
	if lambda < 2 || lambda > l.MaxPopulation {
		return cfg, 0, errorf(CodeOutOfRange, "population_size %d, want 2 to %d", p.PopulationSize, l.MaxPopulation)
	}
	if lambda > l.MaxBatch/n {
		return cfg, 0, errorf(CodeOutOfRange, "population_size %d times %d variables is over the limit of %d numbers per batch", lambda, n, l.MaxBatch)
	}
	cfg.Lambda = lambda
	if cfg.Termination, err = mixedTermination(p.Termination); err != nil {
		return cfg, 0, err
	}
	if err := checkConstraints(p.Constraints, n, p.Termination); err != nil {
		return cfg, 0, err
	}
	if err := l.checkName(p.Name); err != nil {
		return cfg, 0, err
	}
	if err := l.checkMetadata(p.Metadata); err != nil {
		return cfg, 0, err
	}
	return cfg, n, nil
}

// checkMixedUnsupported refuses the settings that CatCMA with margin has
// no use for.
func checkMixedUnsupported(p CreateParams) error {
	const na = "does not apply to algorithm " + `"` + AlgorithmCatCMA + `"`
	switch {
	case p.WarmStart != "":
		return errorf(CodeOutOfRange, "warm_start %s", na)
	case p.Init != "" || p.SNR != nil:
		return errorf(CodeOutOfRange, "hyperparameters %s", na)
	case p.Active != nil:
		return errorf(CodeOutOfRange, "active %s (its update is active by its reference)", na)
	case p.Mirrored != nil:
		return errorf(CodeOutOfRange, "mirrored %s", na)
	case p.MeanRate != nil:
		return errorf(CodeOutOfRange, "mean_rate %s", na)
	case p.Restarts.Strategy != "" && p.Restarts.Strategy != RestartsNone || p.Restarts.Max != nil && *p.Restarts.Max != 0 ||
		p.Restarts.IncPopSize != nil || p.Restarts.Point != "" || p.Restarts.Region != nil || p.Restarts.SpareBestSmall != nil:
		return errorf(CodeOutOfRange, "restarts %s", na)
	}
	return nil
}

// checkIntegers checks integers: lists of 2 to MaxIntegerValues finite
// values, strictly increasing.
func checkIntegers(z [][]float64) error {
	for i, row := range z {
		if len(row) < 2 || len(row) > MaxIntegerValues {
			return errorf(CodeOutOfRange, "integers[%d] has %d values, want 2 to %d", i, len(row), MaxIntegerValues)
		}
		for j, v := range row {
			switch {
			case !finite(v):
				return errorf(CodeOutOfRange, "integers[%d][%d] is not a finite number", i, j)
			case j > 0 && v == row[j-1]:
				return errorf(CodeOutOfRange, "integers[%d][%d] = %v repeats the value before it, want distinct values", i, j, v)
			case j > 0 && v < row[j-1]:
				return errorf(CodeOutOfRange, "integers[%d][%d] = %v is below integers[%d][%d] = %v, want the values sorted", i, j, v, i, j-1, row[j-1])
			}
		}
	}
	return nil
}

// checkCategories checks categories: 2 to MaxCategories choices each.
func checkCategories(c []int) error {
	for i, k := range c {
		if k < 2 || k > MaxCategories {
			return errorf(CodeOutOfRange, "categories[%d] is %d, want 2 to %d choices", i, k, MaxCategories)
		}
	}
	return nil
}

// mixedContinuous checks x0 and bounds of a mixed create and returns the
// engine's box of the nx continuous coordinates (±Inf without bounds) and
// the initial mean's continuous part (nil: x0 left out, the engine's
// default: the centre of the box).
func mixedContinuous(p CreateParams, nx int) ([][2]float64, []float64, error) {
	x := make([][2]float64, nx)
	for i := range x {
		x[i] = [2]float64{math.Inf(-1), math.Inf(1)}
	}
	if p.X0 != nil {
		for i, v := range p.X0 {
			if !finite(v) {
				return nil, nil, errorf(CodeOutOfRange, "x0[%d] is not a finite number", i)
			}
		}
	}
	if p.Bounds != nil {
		ref := p.X0
		if ref == nil { // the bounds' own centre passes their check
			ref = make([]float64, nx)
			for i := range ref {
				if i < len(p.Bounds.Lower) && i < len(p.Bounds.Upper) {
					ref[i] = p.Bounds.Lower[i]
				}
			}
		}
		b, err := checkBounds(p.Bounds, ref)
		if err != nil {
			return nil, nil, err
		}
		for i := range x {
			x[i] = [2]float64{b.Lower[i], b.Upper[i]}
		}
	}
	if p.X0 == nil {
		return x, nil, nil
	}
	return x, slices.Clone(p.X0), nil
}

// mixedTermination checks termination for CatCMA with margin: a budget
// and a target; it stops by its reference's should_stop besides.
func mixedTermination(t Termination) (catcma.Termination, error) {
	var c catcma.Termination
	if t.MaxEvaluations < 0 {
		return c, errorf(CodeOutOfRange, "termination.max_evaluations %d, want at least 0", t.MaxEvaluations)
	}
	c.MaxEvaluations = t.MaxEvaluations
	if t.TargetFitness != nil {
		if !finite(*t.TargetFitness) {
			return c, errorf(CodeOutOfRange, "termination.target_fitness is not finite")
		}
		c.HasTarget, c.TargetFitness = true, *t.TargetFitness
	}
	rest := t
	rest.MaxEvaluations, rest.TargetFitness = 0, nil
	if rest != (Termination{}) {
		return c, errorf(CodeOutOfRange, "termination: algorithm %q takes max_evaluations and target_fitness only (it stops by its reference's criteria besides)", AlgorithmCatCMA)
	}
	return c, nil
}

// mixedCreateBytes is what the create of mixed session p takes while it
// runs: what the engine holds, twice (the engine and its encoding).
func mixedCreateBytes(p CreateParams) int64 {
	nx := len(p.X0)
	if p.X0 == nil && p.Bounds != nil {
		nx = len(p.Bounds.Lower)
	}
	sp := catcma.Space{X: make([][2]float64, nx), Z: p.Integers, C: p.Categories}
	for i := range sp.X {
		sp.X[i] = [2]float64{0, 1}
	}
	b, err := catcma.MemoryBytesFor(sp, p.PopulationSize)
	if err != nil {
		return CreateBytes(1) // the create will be refused
	}
	return 2*int64(b) + 64<<10
}

// mixedES is CatCMA with margin as a session's optimizer.
type mixedES struct{ *catcma.CatCMA }

func newMixed(cfg *catcma.Config, seed uint64) (optimizer, error) {
	c := *cfg
	c.Seed = seed
	o, err := catcma.New(c)
	if err != nil {
		return nil, err
	}
	return mixedES{o}, nil
}

func decodeMixed(state []byte) (optimizer, error) {
	o, err := enginecodec.DecodeCatCMA(state)
	if err != nil {
		return nil, err
	}
	return mixedES{o}, nil
}

// isMixedSession reports whether l is a mixed session.
func isMixedSession(l *loaded) bool {
	_, ok := mixedSpace(l.opt)
	return ok
}

// mixedSpace is the space of a mixed session's optimizer.
func mixedSpace(o optimizer) (flatSpace, bool) {
	e, ok := o.(mixedES)
	if !ok {
		return flatSpace{}, false
	}
	nx, nz, nc := e.Space.Dims()
	return flatSpace{nx, nz, nc}, true
}

// flatSpace splits and joins a mixed session's flat points.
type flatSpace struct{ nx, nz, nc int }

func (f flatSpace) join(c catcma.Candidate) []float64 {
	v := make([]float64, 0, f.nx+f.nz+f.nc)
	v = append(append(v, c.X...), c.Z...)
	for _, k := range c.C {
		v = append(v, float64(k))
	}
	return v
}

// split returns the parts of flat point v (x and z share its array).
func (f flatSpace) split(v []float64) (x, z []float64, c []int) {
	if len(v) != f.nx+f.nz+f.nc {
		return v, nil, nil
	}
	x, z = v[:f.nx:f.nx], v[f.nx:f.nx+f.nz:f.nx+f.nz]
	c = make([]int, f.nc)
	for i := range c {
		c[i] = int(v[f.nx+f.nz+i])
	}
	return x, z, c
}

// splitBatch returns b with a mixed session's candidates split.
func splitBatch(o optimizer, b Batch) Batch {
	f, ok := mixedSpace(o)
	if !ok {
		return b
	}
	out := Batch{Generation: b.Generation, Candidates: make([][]float64, len(b.Candidates)),
		Z: make([][]float64, len(b.Candidates)), C: make([][]int, len(b.Candidates))}
	for k, v := range b.Candidates {
		out.Candidates[k], out.Z[k], out.C[k] = f.split(v)
	}
	return out
}

// viewMixed splits a mixed session's best points in s and describes its
// space.
func viewMixed(o optimizer, s *Session) {
	e, ok := o.(mixedES)
	if !ok {
		return
	}
	f, _ := mixedSpace(o)
	if b := s.Best; b != nil {
		b.X, b.Z, b.C = f.split(b.X)
	}
	if b := s.BestFeasible; b != nil {
		b.X, b.Z, b.C = f.split(b.X)
	}
	v := &MixedView{Continuous: f.nx, Categories: slices.Clone(e.Space.C)}
	for _, row := range e.Space.Z {
		v.Integers = append(v.Integers, slices.Clone(row))
	}
	for _, q := range e.State.Q {
		v.Q = append(v.Q, slices.Clone(q))
	}
	s.Mixed = v
}

func (e mixedES) Ask() [][]float64 {
	f, _ := mixedSpace(e)
	batch := e.CatCMA.Ask()
	out := make([][]float64, len(batch))
	for k, c := range batch {
		out[k] = f.join(c)
	}
	return out
}

func (e mixedES) Tell(fit []float64) (HistoryRecord, error) {
	g := e.State.Generation
	if err := e.CatCMA.Tell(fit); err != nil {
		if err == catcma.ErrStopped {
			return HistoryRecord{}, cmaes.ErrStopped
		}
		return HistoryRecord{}, err
	}
	s, p := &e.State, e.Params
	h := HistoryRecord{Generation: g, Lambda: p.Lambda, Evaluations: s.Evaluations,
		Sigma: s.Sigma, C1: p.C1, CMu: p.CMu, Cc: p.Cc, AxisRatio: math.NaN(), OverallStep: math.NaN(), BestSoFar: math.NaN()}
	h.Best, h.Median = rawStats(fit)
	if s.HasBest {
		h.BestSoFar = s.Best.F
	}
	if n := p.NMi; n > 0 {
		h.AxisRatio = slices.Max(s.D) / slices.Min(s.D)
		h.OverallStep = s.Sigma * slices.Max(s.D)
		if n <= HistoryMaxCoordinates {
			// The Gaussian's, over the continuous then the integer
			// coordinates, kept where HistoryKeepsCoordinates says so.
			h.Mean, h.AxisLengths, h.Stds = slices.Clone(s.Mean), slices.Clone(s.D), make([]float64, n)
			slices.Sort(h.AxisLengths)
			for i := range n {
				h.Stds[i] = s.Sigma * s.A[i] * math.Sqrt(s.C[i*n+i])
			}
		}
	}
	return h, nil
}

func (e mixedES) Inject([][]float64, bool) error {
	return fmt.Errorf("%w: algorithm %q takes no injected points", cmaes.ErrInvalidInjection, AlgorithmCatCMA)
}

func (e mixedES) Status() cmaes.Status {
	s, p := &e.State, e.Params
	f, _ := mixedSpace(e)
	n := f.nx + f.nz + f.nc
	st := cmaes.Status{
		Config: cmaes.Config{Sigma0: s.Sigma0, Lambda: p.Lambda, Seed: s.Seed, Active: true}, // negative weights, as its reference
		Params: cmaes.Params{N: n, Lambda: p.Lambda, Mu: p.Mu, Weights: p.Weights, MuW: p.MuEff,
			CSigma: p.CSigma, DSigma: p.DSigma, Cc: p.Cc, C1: p.C1, CMu: p.CMu, ChiN: p.ChiN},
		Hyper:      cmaes.Hyper{C1: p.C1, CMu: p.CMu, Cc: p.Cc},
		Generation: s.Generation, Evaluations: s.Evaluations, Regime: cmaes.RegimeDefault,
		Mean: s.Mean, Sigma: s.Sigma, AxisRatio: math.NaN(),
		HasBest: s.HasBest,
	}
	if m := p.NMi; m > 0 {
		// The distribution sampled: N(m, σ² A C A).
		c := mat.NewSymDense(m, nil)
		for i := range m {
			for j := i; j < m; j++ {
				c.SetSym(i, j, s.A[i]*s.C[i*m+j]*s.A[j])
			}
		}
		st.C = c
		st.AxisRatio = slices.Max(s.D) / slices.Min(s.D)
	}
	if s.HasBest {
		st.Best = cmaes.Best{X: f.join(s.Best.Candidate), F: s.Best.F, Generation: s.Best.Generation}
	}
	for _, r := range s.Stop {
		st.Stop = append(st.Stop, cmaes.StopReason{Name: r.Name, Value: r.Value})
	}
	return st
}

func (e mixedES) AppendBinary(dst []byte) ([]byte, error) {
	return enginecodec.AppendCatCMA(dst, e.CatCMA), nil
}

func (e mixedES) HeldBytes() int64 { return int64(e.MemoryBytes()) }
