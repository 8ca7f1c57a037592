package catcma

// MemoryBytes returns about how many bytes the optimizer holds: its state,
// the pending batch and the derived tables, not counting the scratch of a
// Tell (a few copies of the batch and of C, freed after it).
func (o *CatCMA) MemoryBytes() int { return memoryBytes(o.Space, o.Params) }

// MemoryBytesFor is MemoryBytes of an optimizer of space sp and population
// size λ (0: DefaultLambda), before it exists: what a service charges for
// its creation. A space or λ that New refuses gives an error.
func MemoryBytesFor(sp Space, lambda int) (int, error) {
	if err := sp.validate(); err != nil {
		return 0, err
	}
	p, err := newParams(sp, lambda)
	if err != nil {
		return 0, err
	}
	return memoryBytes(sp, p), nil
}

func memoryBytes(sp Space, p Params) int {
	n := p.NMi
	floats := 2*n*n + 5*n + // C, B; mean, D, p_σ, p_c, A
		2*p.NIn + p.IQHistTerm + 2*p.FunHistTerm + // p_mut, int_succ (as words), histories
		p.ParamSum + p.NCa + p.NCa + // s, q (Σ K_i), q_min
		p.Lambda*(n+p.NCa) + // the pending batch
		p.Lambda + // weights
		2*(n+p.NCa) // the best candidate
	for _, k := range p.K {
		floats += k
	}
	kmax := 0
	for _, row := range sp.Z {
		kmax = max(kmax, len(row))
	}
	floats += 2 * p.NIn * kmax // padded values and thresholds
	const overhead = 512       // headers, the random stream, scalars
	return 8*floats + overhead
}
