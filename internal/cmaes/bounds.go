package cmaes

import "math"

// Box constraints by pycma's BoxConstraintsLinQuadTransformation
// (cma/transformations.py): the ES samples unconstrained genotypes x; the
// points handed out are their images under a map that is the identity well
// inside [l, u], quadratic in a margin a_l (a_u) at each bound and periodic
// (mirrored) beyond, so it is continuous, onto [l, u], and smooth inside.
// The update uses the untransformed points, as pycma does.
//
// Margins: a_l = min((u − l)/2, (1 + |l|)/20), a_u = min((u − l)/2, (1 + |u|)/20).

func margins(lo, up float64) (al, au float64) {
	al = math.Min((up-lo)/2, (1+math.Abs(lo))/20)
	au = math.Min((up-lo)/2, (1+math.Abs(up))/20)
	return al, au
}

// transform1 maps one coordinate x into [lo, up].
func transform1(x, lo, up float64) float64 {
	al, au := margins(lo, up)
	// Shift by whole periods, then mirror, into [lo − al, up + au].
	if x < lo-2*al-(up-lo)/2 || x > up+2*au+(up-lo)/2 {
		r := 2 * (up - lo + al + au)
		s := lo - 2*al - (up-lo)/2
		x -= r * math.Floor((x-s)/r)
	}
	if x > up+au {
		x -= 2 * (x - up - au)
	}
	if x < lo-al {
		x += 2 * (lo - al - x)
	}
	switch {
	case x < lo+al:
		x = lo + (x-(lo-al))*(x-(lo-al))/(4*al)
	case x > up-au:
		x = up - (x-(up+au))*(x-(up+au))/(4*au)
	}
	// Rounding may leave a point an ulp outside; clamp so that every point
	// handed out lies inside.
	return math.Min(math.Max(x, lo), up)
}

func transformInto(dst, x []float64, b *Bounds) {
	for i, v := range x {
		dst[i] = transform1(v, b.Lower[i], b.Upper[i])
	}
}

// Image returns the point of the box that genotype x is handed out as:
// its image under the transformation, coordinate by coordinate.
func (b *Bounds) Image(x []float64) []float64 {
	dst := make([]float64, len(x))
	transformInto(dst, x, b)
	return dst
}

// inverse1 is the preimage of y ∈ [lo, up] under transform1 in
// [lo − al, up + au] (pycma's BoxConstraintsLinQuadTransformation._inverse_i):
// the genotype of an injected point.
func inverse1(y, lo, up float64) float64 {
	al, au := margins(lo, up)
	switch {
	case y < lo+al:
		return lo - al + 2*math.Sqrt(al*(y-lo))
	case y < up-au:
		return y
	}
	return up + au - 2*math.Sqrt(au*(up-y))
}

// ImageInto writes the image of genotype x into dst (len(x) values): Image
// without allocating, for engines that share this transformation
// (internal/sepcma).
func (b *Bounds) ImageInto(dst, x []float64) { transformInto(dst, x, b) }

// GenotypeInto writes into dst the genotype of point y of the box (every
// y_i in [Lower_i, Upper_i]): its preimage under the transformation in
// [l − a_l, u + a_u], as an injected point's.
func (b *Bounds) GenotypeInto(dst, y []float64) {
	for i, v := range y {
		dst[i] = inverse1(v, b.Lower[i], b.Upper[i])
	}
}
