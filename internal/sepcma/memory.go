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

// MemoryBytes is MemoryBytes(n, λ) for the current run.
func (e *ES) MemoryBytes() int64 { return MemoryBytes(e.p.N, e.p.Lambda) }

// MaxMemoryBytes is MemoryBytes for the largest λ its restarts can reach.
func (e *ES) MaxMemoryBytes() int64 { return MemoryBytes(e.p.N, e.s.Config.MaxLambda()) }
