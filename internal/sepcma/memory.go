package sepcma

// MemoryBytes is the memory an ES holds for dimension n and population size
// λ, in bytes, to within the fixed overhead of its structs: the pending
// batch (λn values), the diagonal of C, D, m, p_σ, p_c, the best point and
// six buffers of the update (12n), the histories of the termination
// criteria (at most 2·20000 + 10 + ⌈30n/λ⌉ values and 10 + n generation
// numbers) and the ranking (2λ). Ask's copy of the batch (another λn) is
// the caller's. Nothing is O(n²).
func MemoryBytes(n, lambda int) int64 {
	funHist := 10 + (30*n+lambda-1)/lambda
	values := int64(lambda)*int64(n) + 12*int64(n) + 2*stagMax + int64(funHist) + int64(10+n) + 2*int64(lambda)
	return 8 * values
}

// HeldBytes bounds what a service that keeps an ES of dimension n and
// population size λ holds for it, as cmaes.HeldBytes does for CMA-ES:
// MemoryBytes, x0 (n), with bounds the bounds (2n) and the images of the
// batch (λn), Ask's copy of the
// batch that the service keeps to hand out (λn), and 64 KiB for the
// structs and small slices (measured against runtime.MemStats:
// inject_test.go). A tell with clipped injected points copies the batch
// for its update (λn more while it runs).
func HeldBytes(n, lambda int, bounded bool) int64 {
	batches, vectors := int64(1), int64(1)
	if bounded {
		batches, vectors = 2, 3
	}
	return MemoryBytes(n, lambda) + 8*(batches*int64(lambda)+vectors)*int64(n) + 64<<10
}

// MemoryBytes is MemoryBytes(n, λ) for the current run.
func (e *ES) MemoryBytes() int64 { return MemoryBytes(e.p.N, e.p.Lambda) }

// HeldBytes is HeldBytes of the current run (λ changes at a restart).
func (e *ES) HeldBytes() int64 {
	return HeldBytes(e.p.N, e.p.Lambda, e.s.Config.Bounds != nil)
}

// HeldBytes is HeldBytes of the first run of an ES of this
// configuration: what a create takes.
func (c Config) HeldBytes() int64 {
	return HeldBytes(len(c.X0), c.firstLambda(), c.Bounds != nil)
}

// MaxMemoryBytes is MemoryBytes for the largest λ its restarts can reach.
func (e *ES) MaxMemoryBytes() int64 { return MemoryBytes(e.p.N, e.s.Config.MaxLambda()) }
