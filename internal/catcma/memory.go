package catcma

// MemoryBytes returns about how many bytes the optimizer holds: its state,
// the pending batch and the derived tables, not counting the scratch of a
// Tell (a few copies of the batch and of C, freed after it).
func (o *CatCMA) MemoryBytes() int {
	p, s := o.Params, &o.State
	n := p.NMi
	floats := 2*n*n + 5*n + // C, B; mean, D, p_σ, p_c, A
		2*p.NIn + len(s.IQHist) + len(s.FunHist) + // p_mut, int_succ (as words), histories
		p.ParamSum + p.NCa + p.NCa + // s, q (Σ K_i), q_min
		p.Lambda*(n+p.NCa) + // the pending batch
		p.Lambda // weights
	for _, k := range p.K {
		floats += k
	}
	for _, row := range o.grid.values {
		floats += 2 * len(row) // padded values and thresholds
	}
	const overhead = 512 // headers, the random stream, scalars
	return 8*floats + overhead
}
