package cmaes

import "math"

// What an ES holds in memory, as a LAPACK routine reports its workspace:
// the service bounds its cache and its creates by it (internal/session,
// internal/httpapi), and checks a restart schedule against its limits by
// MaxLambda.

// HeldBytes is about the bytes an ES of dimension n and population size λ
// holds in memory, an upper bound within about 30 % (measured with
// runtime.MemStats after a few generations: memory_test.go):
//
//   - C, B, the update's new C, the decomposition's input and output, and
//     the kept Step's C^t and C_μ: 6 n×n matrices, 7 for active CMA-ES
//     (the Step's C_μ^-);
//   - the eigendecomposition's workspace: about 1.5 n² by numerics 1 and 2,
//     4 n² by NumericsDC, which also packs B for the sampling product
//     (1 n²);
//   - the batch, its z and y, the Step's points, C_μ's factor and the
//     injected batch: 6 λ×n matrices, 7 with bounds (the images);
//   - O(n) vectors and histories.
//
// numerics 0 is NumericsLatest.
func HeldBytes(n, lambda int, active, bounded bool, numerics int) int64 {
	nn, ln := float64(n)*float64(n), float64(lambda)*float64(n)
	mats := 6.0
	if active {
		mats++
	}
	batches := 6.0
	if bounded {
		batches++
	}
	var eig float64
	switch numerics {
	case NumericsDsyev, NumericsBlocked:
		eig = 1.5*nn + 256*float64(n)
		if active {
			eig += math.Min(256, float64(n)) * float64(n) // cMuNegInto's product packs B
		}
	default:
		eig = 5*nn + 1024*float64(n)
	}
	floats := mats*nn + eig + batches*ln + 64*float64(n)
	return int64(math.Ceil(8*floats)) + 64<<10
}

// HeldBytes is what the ES holds in memory now (HeldBytes of its n, λ,
// active update, bounds and numerics): λ changes at a restart.
func (e *ES) HeldBytes() int64 {
	return HeldBytes(e.p.N, e.p.Lambda, e.p.Active, e.s.Config.Bounds != nil, e.s.Config.Numerics)
}

// HeldBytes is HeldBytes of the first run of an ES of this
// configuration: what a create takes.
func (c Config) HeldBytes() int64 {
	lambda := c.Lambda
	if lambda == 0 {
		lambda = DefaultLambda(len(c.X0))
	}
	return HeldBytes(len(c.X0), lambda, c.Active, c.Bounds != nil, c.Numerics)
}

// MaxLambda is the largest population size an ES of this configuration
// reaches over its restart schedule: λ0 without restarts, else that of the
// last large run, ⌊popsize0·IncPopSize^Max⌋ (restart.go: BIPOP's small
// runs are smaller), or of the last one within the ES's own bound on λn
// if Max would pass it (restart ends the ES instead). Restarts.Max and
// IncPopSize 0 are their defaults, as New resolves them; the
// configuration is not checked.
func (c Config) MaxLambda() int {
	e := ES{s: State{Config: c}}
	lambda := e.lambda0()
	rs := c.Restarts
	if !rs.IPOP && !rs.BIPOP {
		return lambda
	}
	k := rs.Max
	if k == 0 {
		k = DefaultMaxRestarts
	}
	n := len(c.X0)
	for ; k > 0; k-- {
		if l, ok := largeLambda(e.popsize0(), e.incPopSize(), k, n); ok {
			return max(lambda, l)
		}
	}
	return lambda
}
