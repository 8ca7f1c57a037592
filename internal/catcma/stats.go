package catcma

import "math"

// normCDF is Φ((x − loc)/scale), as cmaes/_stats.py computes it.
func normCDF(x, loc, scale float64) float64 {
	x = (x - loc) / scale
	x /= math.Sqrt2
	z := math.Abs(x)
	if z < 1/math.Sqrt2 {
		return 0.5 + 0.5*math.Erf(x)
	}
	y := 0.5 * math.Erfc(z)
	if x > 0 {
		y = 1 - y
	}
	return y
}

// chi2PPF is the q-quantile of χ² with one degree of freedom, by the
// bisection of cmaes/_stats.py (100 halvings of [0, 100]: to the last bit
// of the erf it inverts).
func chi2PPF(q float64) float64 {
	if q == 0 {
		return 0
	}
	if q == 1 {
		return math.Inf(1)
	}
	a, b, m := 0.0, 100.0, 0.0
	for range 100 {
		m = (a + b) / 2
		var below bool
		if q < 0.9 {
			below = math.Erf(math.Sqrt(m/2)) < q
		} else {
			below = math.Erfc(math.Sqrt(m/2)) > 1-q
		}
		if below {
			a = m
		} else {
			b = m
		}
	}
	return m
}
