package session

import (
	"fmt"
	"math"
	"slices"

	"github.com/selfcma/selfcma/internal/binenc"
	"github.com/selfcma/selfcma/internal/constraints"
	"github.com/selfcma/selfcma/internal/enginecodec"
)

// Constrained sessions (issue 26): minimise f(x) subject to g_i(x) ≤ 0,
// i = 1…m. Each tell brings, beside the f values, m constraint values per
// candidate; the session hands the engine the augmented Lagrangian of
// internal/constraints (pycma 4.4.0's ConstrainedFitnessAL: Atamna, Auger,
// Hansen, PPSN 2016, FOGA 2017) in place of f, and keeps the AL's state
// in its own record (meta schema 6), not in the engine's state. The raw f
// is what the session reports: its best value, and the best feasible point
// (x, f, g) beside it; the history's best and median are of f.
//
// A candidate with an unknown value, f or any g_i (NaN; null in JSON),
// ranks as a failed evaluation (NaN to the engine) and is left out of the
// AL's iteration: the AL is told the other candidates only (none: it is
// not told), so that one failure does not keep its coefficients from
// being set, as a NaN f would in pycma, which has no unknown values. Its
// f, if known, counts for the best value, never for the best feasible
// point. Without unknown values the AL is pycma's exactly.

// MaxConstraints is the most constraints a session declares, and
// maxALValues bounds the values its augmented Lagrangian keeps, m·(n + 20)
// (the g history of n + 20 iterations), which the session's record holds:
// 2^18 values are 2 MiB.
const (
	MaxConstraints = 1000
	maxALValues    = 1 << 18
)

// Constraints declares a session's constraints.
type Constraints struct {
	Count int // m, 1 ≤ m ≤ MaxConstraints
}

// ConstraintsView is a constrained session's augmented Lagrangian: the
// multipliers λ_i and penalty factors μ_i (nil until the first tell with
// finite values sets them).
type ConstraintsView struct {
	Count       int
	Multipliers []float64
	Penalties   []float64
}

// FeasibleBest is the best feasible point told: every g_i ≤ 0.
type FeasibleBest struct {
	X          []float64
	F          float64
	G          []float64
	Generation int
	Z          []float64 // a mixed session's integer values (mixed.go)
	C          []int     // a mixed session's categories
}

// ConstraintRecord is what a constrained session's history entry adds:
// the candidates with every g_i ≤ 0, the least total violation Σ max(0,
// g_i) among the candidates whose g values are known (0 if one is
// feasible, NaN if none is known), the best feasible f of the generation
// and so far (NaN if none).
type ConstraintRecord struct {
	Feasible          int
	Violation         float64
	BestFeasible      float64
	BestFeasibleSoFar float64
}

// constrainedMeta is a constrained session's part of its record.
type constrainedMeta struct {
	M        int
	AL       []byte        // enginecodec.AppendAL of the AL after the last tell
	Best     *Best         // the best f told, feasible or not; nil = none
	Feasible *FeasibleBest // nil = none yet
}

// checkConstraints checks constraints for a session of dimension n and
// the termination criteria that go with them.
func checkConstraints(c *Constraints, n int, t Termination) error {
	if c == nil {
		return nil
	}
	if c.Count < 1 || c.Count > MaxConstraints {
		return errorf(CodeOutOfRange, "constraints.count %d, want 1 to %d", c.Count, MaxConstraints)
	}
	if v := c.Count * (n + 20); v > maxALValues {
		return errorf(CodeOutOfRange, "constraints.count %d in dimension %d: the augmented Lagrangian would keep m·(n+20) = %d values, at most %d", c.Count, n, v, maxALValues)
	}
	if t.TargetFitness != nil {
		return errorf(CodeOutOfRange, "termination.target_fitness does not go with constraints: the engine ranks augmented Lagrangian values, not f (stop on best_feasible instead)")
	}
	return nil
}

// constrainedStagnation is termination.stagnation's default with
// constraints: off, as pycma's fmin_con2 sets tolstagnation = 0 (the AL
// moves the values under the engine).
func constrainedStagnation(p CreateParams) bool {
	return p.Constraints != nil && p.Termination.Stagnation == nil
}

// newConstrained returns the record part of a new session of dimension n
// with constraints c (checked); nil for none.
func newConstrained(c *Constraints, n int) (*constrainedMeta, error) {
	if c == nil {
		return nil, nil
	}
	al, err := constraints.New(n, c.Count)
	if err != nil {
		return nil, err
	}
	return &constrainedMeta{M: c.Count, AL: enginecodec.AppendAL(nil, al)}, nil
}

// constraintCount is m, 0 for an unconstrained session.
func (m *meta) constraintCount() int {
	if m.Constrained == nil {
		return 0
	}
	return m.Constrained.M
}

// checkConstraintValues checks the constraint values of tell t of a
// session with m constraints (0: none): one row per value told, each of
// m numbers (NaN: unknown) or nil (all unknown), none infinite.
func checkConstraintValues(m int, t TellParams) error {
	switch {
	case m == 0 && t.Constraints != nil:
		return errorf(CodeOutOfRange, "constraint_values given, but the session has no constraints (declare constraints.count at create)")
	case m == 0:
		return nil
	case t.Constraints == nil:
		return errorf(CodeOutOfRange, "constraint_values is required: the session has %d constraints", m)
	case len(t.Constraints) != len(t.Fitness):
		return errorf(CodeOutOfRange, "constraint_values has %d rows and fitness %d values, want one row per value", len(t.Constraints), len(t.Fitness))
	}
	for k, row := range t.Constraints {
		if row == nil {
			continue
		}
		if len(row) != m {
			return errorf(CodeOutOfRange, "constraint_values[%d] has %d values, want %d (the session's constraints.count)", k, len(row), m)
		}
		for i, v := range row {
			if math.IsInf(v, 0) {
				return errorf(CodeOutOfRange, "constraint_values[%d][%d] is infinite, want a finite number or null", k, i)
			}
		}
	}
	return nil
}

// constraintRow is row k of t's constraint values for m constraints: a
// nil row as m NaN.
func constraintRow(t TellParams, k, m int) []float64 {
	if r := t.Constraints[k]; r != nil {
		return r
	}
	r := make([]float64, m)
	for i := range r {
		r[i] = math.NaN()
	}
	return r
}

// sameRow compares two rows of constraint values, NaN equal to NaN.
func sameRow(a, b []float64) bool {
	return slices.EqualFunc(a, b, sameValue)
}

// known reports whether every value of g is known.
func known(g []float64) bool {
	for _, v := range g {
		if math.IsNaN(v) {
			return false
		}
	}
	return true
}

// violation is Σ max(0, g_i).
func violation(g []float64) float64 {
	s := 0.0
	for _, v := range g {
		s += max(0, v)
	}
	return s
}

// tellOptimizer tells the engine of l generation g's values fit (and, for
// a constrained session, their constraint values cons), updates md's
// constrained part and returns the history record.
func tellOptimizer(l *loaded, md *meta, g int, fit []float64, cons [][]float64) (HistoryRecord, error) {
	if md.Constrained == nil {
		return l.opt.Tell(fit)
	}
	c := *md.Constrained
	al, err := enginecodec.DecodeAL(c.AL)
	if err != nil {
		return HistoryRecord{}, fmt.Errorf("augmented Lagrangian: %w", err)
	}
	cand := pending(l).Candidates // before the engine samples the next batch
	ranked, err := rankAL(al, fit, cons)
	if err != nil {
		return HistoryRecord{}, err
	}
	h, err := l.opt.Tell(ranked)
	if err != nil {
		return HistoryRecord{}, err
	}
	c.AL = enginecodec.AppendAL(nil, al)
	rec := ConstraintRecord{Violation: math.NaN(), BestFeasible: math.NaN(), BestFeasibleSoFar: math.NaN()}
	for k, f := range fit {
		if !math.IsNaN(f) && (c.Best == nil || f < c.Best.F) {
			c.Best = &Best{X: slices.Clone(cand[k]), F: f, Generation: g}
		}
		if !known(cons[k]) {
			continue
		}
		if v := violation(cons[k]); !(v >= rec.Violation) {
			rec.Violation = v
		}
		if !constraints.Feasible(cons[k]) {
			continue
		}
		rec.Feasible++
		if math.IsNaN(f) {
			continue
		}
		if !(f >= rec.BestFeasible) {
			rec.BestFeasible = f
		}
		if c.Feasible == nil || f < c.Feasible.F {
			c.Feasible = &FeasibleBest{X: slices.Clone(cand[k]), F: f, G: slices.Clone(cons[k]), Generation: g}
		}
	}
	if c.Feasible != nil {
		rec.BestFeasibleSoFar = c.Feasible.F
	}
	h.Best, h.Median = rawStats(fit)
	h.BestSoFar = math.NaN()
	if c.Best != nil {
		h.BestSoFar = c.Best.F
	}
	h.Constraint = &rec
	md.Constrained = &c
	return h, nil
}

// rankAL tells al the candidates whose f and g are known and returns the
// values the engine ranks: their AL values, NaN for the others.
func rankAL(al *constraints.AL, fit []float64, cons [][]float64) ([]float64, error) {
	ranked := make([]float64, len(fit))
	var idx []int
	for k, f := range fit {
		ranked[k] = math.NaN()
		if !math.IsNaN(f) && known(cons[k]) {
			idx = append(idx, k)
		}
	}
	if len(idx) == 0 {
		return ranked, nil
	}
	if len(idx) == len(fit) {
		return al.Tell(fit, cons)
	}
	f, g := make([]float64, len(idx)), make([][]float64, len(idx))
	for j, k := range idx {
		f[j], g[j] = fit[k], cons[k]
	}
	v, err := al.Tell(f, g)
	if err != nil {
		return nil, err
	}
	for j, k := range idx {
		ranked[k] = v[j]
	}
	return ranked, nil
}

// rawStats is the best and the median of the values of fit that are not
// NaN (NaN, NaN if none), as cmaes computes them of the values it ranks.
func rawStats(fit []float64) (best, median float64) {
	s := make([]float64, 0, len(fit))
	for _, f := range fit {
		if !math.IsNaN(f) {
			s = append(s, f)
		}
	}
	if len(s) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(s)
	k := len(s)
	if k%2 == 1 {
		return s[0], s[k/2]
	}
	return s[0], (s[k/2-1] + s[k/2]) / 2
}

// viewConstraints sets what a constrained session's view shows: its
// coefficients, its best f and its best feasible point.
func viewConstraints(md *meta, s *Session) {
	c := md.Constrained
	if c == nil {
		return
	}
	v := &ConstraintsView{Count: c.M}
	if al, err := enginecodec.DecodeAL(c.AL); err == nil && al.State.Set { // decoded once when loaded: it decodes
		v.Multipliers, v.Penalties = al.State.Lam, al.State.Mu
	}
	s.Constraints = v
	s.Best = nil
	if b := c.Best; b != nil {
		s.Best = &Best{X: slices.Clone(b.X), F: b.F, Generation: b.Generation}
	}
	if b := c.Feasible; b != nil {
		s.BestFeasible = &FeasibleBest{X: slices.Clone(b.X), F: b.F, G: slices.Clone(b.G), Generation: b.Generation}
	}
	if p := md.Partial; p != nil && p.Generation == s.Generation {
		s.Partial.Constraints = cloneRows(p.G)
	}
}

func cloneRows(rows [][]float64) [][]float64 {
	if rows == nil {
		return nil
	}
	out := make([][]float64, len(rows))
	for i, r := range rows {
		out[i] = slices.Clone(r)
	}
	return out
}

// checkConstrained checks a decoded record's constrained part against its
// dimension: the AL decodes, of n and m.
func checkConstrained(md *meta) error {
	c := md.Constrained
	if c == nil {
		return nil
	}
	al, err := enginecodec.DecodeAL(c.AL)
	if err != nil {
		return err
	}
	if al.Params.N != md.Dimension || al.Params.M != c.M {
		return fmt.Errorf("augmented Lagrangian of n = %d, m = %d; the session has n = %d, m = %d", al.Params.N, al.Params.M, md.Dimension, c.M)
	}
	return nil
}

// The encoding of the constrained part in record schema 6: after the
// fields of schema 5, a flag, then m, the AL's blob, the best point
// (flag, x, f, generation), the best feasible point (flag, x, f, g,
// generation), and the constraint values of the last tell and of the
// values held (each a count of rows and their concatenation).

func putConstrained(w *binenc.Writer, m *meta) {
	c := m.Constrained
	w.Bool(c != nil)
	if c == nil {
		return
	}
	w.Int(c.M)
	w.Bytes(c.AL)
	w.Bool(c.Best != nil)
	if b := c.Best; b != nil {
		w.Floats(b.X)
		w.Float(b.F)
		w.Int(b.Generation)
	}
	w.Bool(c.Feasible != nil)
	if b := c.Feasible; b != nil {
		w.Floats(b.X)
		w.Float(b.F)
		w.Floats(b.G)
		w.Int(b.Generation)
	}
	var last, held [][]float64
	if m.LastTell != nil {
		last = m.LastTell.G
	}
	if m.Partial != nil {
		held = m.Partial.G
	}
	for _, rows := range [...][][]float64{last, held} {
		w.Int(len(rows))
		w.FloatRows(rows...)
	}
}

func getConstrained(r *binenc.Reader, m *meta) {
	if !r.Bool() {
		return
	}
	c := &constrainedMeta{M: r.Int(), AL: r.Bytes()}
	if c.M < 1 || c.M > MaxConstraints {
		r.Fail("%d constraints", c.M)
		return
	}
	if r.Bool() {
		c.Best = &Best{X: r.Floats(), F: r.Float(), Generation: r.Int()}
	}
	if r.Bool() {
		c.Feasible = &FeasibleBest{X: r.Floats(), F: r.Float(), G: r.Floats(), Generation: r.Int()}
		if len(c.Feasible.G) != c.M {
			r.Fail("best feasible point with %d constraint values of %d", len(c.Feasible.G), c.M)
		}
	}
	last, held := getRows(r, c.M), getRows(r, c.M)
	if lt := m.LastTell; lt != nil {
		if len(last) != len(lt.Fitness) {
			r.Fail("last tell of %d values and %d rows of constraint values", len(lt.Fitness), len(last))
		}
		lt.G = last
	}
	if p := m.Partial; p != nil {
		if len(held) != len(p.Fitness) {
			r.Fail("%d values held and %d rows of constraint values", len(p.Fitness), len(held))
		}
		p.G = held
	}
	m.Constrained = c
}

// getRows reads k rows of m values written by putConstrained.
func getRows(r *binenc.Reader, m int) [][]float64 {
	k := r.Int()
	flat := r.Floats()
	if r.Err() != nil {
		return nil
	}
	if k < 0 || len(flat) != k*m {
		r.Fail("%d rows of %d constraint values in %d values", k, m, len(flat))
		return nil
	}
	if k == 0 {
		return nil
	}
	rows := make([][]float64, k)
	for i := range rows {
		rows[i] = flat[i*m : (i+1)*m : (i+1)*m]
	}
	return rows
}
