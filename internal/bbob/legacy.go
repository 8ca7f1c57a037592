package bbob

import "math"

// This file reproduces the random number generation of the original
// BBOB-2009 code (bbob2009_unif, bbob2009_gauss, bbob2009_compute_rotation,
// bbob2009_compute_xopt and bbob2009_compute_fopt in COCO's
// suite_bbob_legacy_code.c). The operations are kept in the same order as
// the C code so that the generated numbers agree with it to the last bit
// wherever the math library does (log and cos in gauss may differ by an ulp).

// unif returns n uniform numbers in (0, 1] from the legacy Park–Miller
// generator with a 32 entry shuffle table, seeded with seed.
func unif(n int, seed int64) []float64 {
	r := make([]float64, n)
	if seed < 0 {
		seed = -seed
	}
	if seed < 1 {
		seed = 1
	}
	var table [32]int64
	akt := seed
	for i := 39; i >= 0; i-- {
		tmp := akt / 127773
		akt = 16807*(akt-tmp*127773) - 2836*tmp
		if akt < 0 {
			akt += 2147483647
		}
		if i < 32 {
			table[i] = akt
		}
	}
	rnd := table[0]
	for i := range r {
		tmp := akt / 127773
		akt = 16807*(akt-tmp*127773) - 2836*tmp
		if akt < 0 {
			akt += 2147483647
		}
		k := rnd / 67108865
		rnd = table[k]
		table[k] = akt
		r[i] = float64(rnd) / 2.147483647e9
		if r[i] == 0 {
			r[i] = 1e-99
		}
	}
	return r
}

// gauss returns n standard normal numbers computed by the Box–Muller
// transform from 2n legacy uniform numbers.
func gauss(n int, seed int64) []float64 {
	u := unif(2*n, seed)
	g := make([]float64, n)
	for i := range g {
		g[i] = math.Sqrt(-2*crLog(u[i])) * crCos(2*math.Pi*u[n+i])
		if g[i] == 0 {
			g[i] = 1e-99
		}
	}
	return g
}

// rotation returns the legacy n×n orthogonal matrix for seed, in row-major
// order: n² normal numbers filled column by column, orthonormalized column
// by column with classical Gram–Schmidt.
func rotation(n int, seed int64) []float64 {
	g := gauss(n*n, seed)
	b := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			b[i*n+j] = g[j*n+i]
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			var prod float64
			for k := 0; k < n; k++ {
				prod += b[k*n+i] * b[k*n+j]
			}
			for k := 0; k < n; k++ {
				b[k*n+i] -= prod * b[k*n+j]
			}
		}
		var prod float64
		for k := 0; k < n; k++ {
			prod += b[k*n+i] * b[k*n+i]
		}
		s := math.Sqrt(prod)
		for k := 0; k < n; k++ {
			b[k*n+i] /= s
		}
	}
	return b
}

// computeXOpt returns the legacy optimum location: uniform on a grid of
// step 8e-4 in [-4, 4), with 0 replaced by -1e-5.
func computeXOpt(n int, seed int64) []float64 {
	x := unif(n, seed)
	for i := range x {
		x[i] = 8*math.Floor(1e4*x[i])/1e4 - 4
		if x[i] == 0 {
			x[i] = -1e-5
		}
	}
	return x
}

// computeFOpt returns the legacy optimal value of function fn, instance
// inst: a ratio of two normal numbers, rounded to 2 decimals and clipped to
// [-1000, 1000].
func computeFOpt(fn, inst int) float64 {
	rseed := int64(fn)
	switch fn {
	case 4:
		rseed = 3
	case 18:
		rseed = 17
	}
	rrseed := rseed + 10000*int64(inst)
	g1 := gauss(1, rrseed)[0]
	g2 := gauss(1, rrseed+1)[0]
	return math.Min(1000, math.Max(-1000, round(100.*100.*g1/g2)/100.))
}

// round rounds half up, as floor(x+0.5) in the legacy code.
func round(x float64) float64 { return math.Floor(x + 0.5) }
