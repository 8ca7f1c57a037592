package bbob

import "math"

// stackDim is the largest dimension for which Eval needs no heap
// allocation: up to it the work vectors live on the stack.
const stackDim = 64

// pow2 and pow2neg hold 2^j and 2^-j, j = 0..32.
var pow2, pow2neg [33]float64

func init() {
	for j := range pow2 {
		pow2[j] = math.Ldexp(1, j)
		pow2neg[j] = math.Ldexp(1, -j)
	}
}

const (
	weierstrassTerms = 12
	lunacekMu0       = 2.5
)

// work returns a slice of length size, backed by buf if it is long enough.
func work(buf []float64, size int) []float64 {
	if size <= len(buf) {
		return buf[:size]
	}
	return make([]float64, size)
}

// Eval returns the value of the problem at x, f_opt included. It panics if
// len(x) is not the dimension of the problem, and returns NaN if x holds a
// NaN. Eval neither modifies nor retains x.
func (p *Problem) Eval(x []float64) float64 {
	if len(x) != p.n {
		panic("bbob: dimension mismatch")
	}
	for _, v := range x {
		if math.IsNaN(v) {
			return math.NaN()
		}
	}
	switch p.fn {
	case 1:
		return p.sphere(x)
	case 2:
		return p.ellipsoid(x)
	case 3:
		return p.rastrigin(x)
	case 4:
		return p.buecheRastrigin(x)
	case 5:
		return p.linearSlope(x)
	case 6:
		return p.attractiveSector(x)
	case 7:
		return p.stepEllipsoid(x)
	case 8:
		return p.rosenbrock(x)
	case 9:
		return p.rosenbrockRotated(x)
	case 10:
		return p.ellipsoidRotated(x)
	case 11:
		return p.discus(x)
	case 12:
		return p.bentCigar(x)
	case 13:
		return p.sharpRidge(x)
	case 14:
		return p.differentPowers(x)
	case 15:
		return p.rastriginRotated(x)
	case 16:
		return p.weierstrass(x)
	case 17, 18:
		return p.schaffers(x)
	case 19:
		return p.griewankRosenbrock(x)
	case 20:
		return p.schwefel(x)
	case 21, 22:
		return p.gallagher(x)
	case 23:
		return p.katsuura(x)
	case 24:
		return p.lunacek(x)
	}
	panic("bbob: bad function")
}

// tosz is the oscillation T_osz of the BBOB definitions with alpha 0.1,
// sign(x)·exp(x̂ + 0.049·(sin(c1·x̂) + sin(c2·x̂))), x̂ = log|x|. COCO's
// pow(exp(10·x̂ + 0.49·(…)), 0.1) is the same number; this form avoids
// the overflow of the inner exp.
func tosz(x float64) float64 {
	switch {
	case x > 0:
		t := math.Log(x) / 0.1
		return x * math.Exp(0.1*0.49*(math.Sin(t)+math.Sin(0.79*t)))
	case x < 0:
		t := math.Log(-x) / 0.1
		return x * math.Exp(0.1*0.49*(math.Sin(0.55*t)+math.Sin(0.31*t)))
	}
	return 0
}

// tasy is the asymmetric map T_asy for one coordinate with e = beta·i/(n-1).
func tasy(x, e float64) float64 {
	if x > 0 {
		return powPos(x, 1+e*math.Sqrt(x))
	}
	return x
}

// powPos returns x^y for x ≥ 0 and y > 0 as exp(y·log x), more than twice
// as fast as math.Pow, which computes the fractional part of y so too.
// The relative error is about |y·log x|·2⁻⁵³.
func powPos(x, y float64) float64 {
	return math.Exp(y * math.Log(x))
}

// penalty returns Σ max(0, |x_i| - 5)², the BBOB boundary penalty.
func penalty(x []float64) float64 {
	var s float64
	for _, v := range x {
		if c := v - 5; c > 0 {
			s += c * c
		} else if c := -5 - v; c > 0 {
			s += c * c
		}
	}
	return s
}

// sub sets dst = x - y.
func sub(dst, x, y []float64) {
	y = y[:len(x)]
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = v - y[i]
	}
}

// mulVec sets dst = m·x for the row-major len(dst)×len(x) matrix m.
func mulVec(dst, m, x []float64) {
	n := len(x)
	for i := range dst {
		dst[i] = dot(m[i*n:i*n+n], x)
	}
}

// dot returns Σ a_i·b_i, len(b) ≥ len(a).
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// rastriginRaw returns 10·(n - Σ cos(2π z_i)) + Σ z_i².
func rastriginRaw(z []float64) float64 {
	var s1, s2 float64
	for _, v := range z {
		s1 += math.Cos(2 * math.Pi * v)
		s2 += v * v
	}
	if math.IsInf(s2, 0) {
		return s2
	}
	return 10*(float64(len(z))-s1) + s2
}

// f1: Σ z_i², z = x - x_opt.
func (p *Problem) sphere(x []float64) float64 {
	var s float64
	for i, v := range x {
		d := v - p.xs[i]
		s += d * d
	}
	return s + p.fopt
}

// f2: Σ 10^(6·i/(n-1))·z_i², z = T_osz(x - x_opt).
func (p *Problem) ellipsoid(x []float64) float64 {
	var s float64
	for i, v := range x {
		z := tosz(v - p.xs[i])
		s += p.w[i] * z * z
	}
	return s + p.fopt
}

// f3: Rastrigin of z = Λ^10·T_asy^0.2(T_osz(x - x_opt)).
func (p *Problem) rastrigin(x []float64) float64 {
	var s1, s2 float64
	for i, v := range x {
		z := p.w2[i] * tasy(tosz(v-p.xs[i]), p.w[i])
		s1 += math.Cos(2 * math.Pi * z)
		s2 += z * z
	}
	if math.IsInf(s2, 0) {
		return s2
	}
	return 10*(float64(p.n)-s1) + s2 + p.fopt
}

// f4: Rastrigin of z = s ⊙ T_osz(x - x_opt), s_i = 10^(i/(2(n-1))), times
// 10 for positive z_i of odd index (1-based), plus 100·f_pen(x).
func (p *Problem) buecheRastrigin(x []float64) float64 {
	var s1, s2 float64
	for i, v := range x {
		z := tosz(v - p.xs[i])
		f := p.w[i]
		if z > 0 && i%2 == 0 {
			f *= 10
		}
		z *= f
		s1 += math.Cos(2 * math.Pi * z)
		s2 += z * z
	}
	return 10*(float64(p.n)-s1) + s2 + p.fopt + 100*penalty(x)
}

// f5: Σ 5|s_i| - s_i·z_i, z_i = x_i where x_i·x_opt_i < 25 and x_opt_i
// elsewhere.
func (p *Problem) linearSlope(x []float64) float64 {
	var s float64
	for i, v := range x {
		if v*p.xopt[i] < 25 {
			s += p.w2[i] - p.w[i]*v
		} else {
			s += p.w2[i] - p.w[i]*p.xopt[i]
		}
	}
	return s + p.fopt
}

// f6: T_osz(Σ (s_i·z_i)²)^0.9, z = QΛ^10R(x - x_opt), s_i = 100 where
// z_i·x_opt_i > 0 and 1 elsewhere.
func (p *Problem) attractiveSector(x []float64) float64 {
	var buf [2 * stackDim]float64
	n := p.n
	w := work(buf[:], 2*n)
	d, z := w[:n], w[n:]
	sub(d, x, p.xs)
	mulVec(z, p.m, d)
	var s float64
	for i, v := range z {
		if p.xs[i]*v > 0 {
			s += 100.0 * 100.0 * v * v
		} else {
			s += v * v
		}
	}
	return math.Pow(tosz(s), 0.9) + p.fopt
}

// f7: 0.1·max(|ẑ_1|/1e4, Σ 10^(2·i/(n-1))·z_i²) + f_pen(x), z = Q·round(ẑ),
// ẑ = Λ^10·R(x - x_opt).
func (p *Problem) stepEllipsoid(x []float64) float64 {
	var buf [2 * stackDim]float64
	n := p.n
	w := work(buf[:], 2*n)
	d, z := w[:n], w[n:]
	sub(d, x, p.xs)
	mulVec(z, p.m, d)
	x1 := z[0]
	for i, v := range z {
		if math.Abs(v) > 0.5 {
			z[i] = round(v)
		} else {
			z[i] = round(10*v) / 10
		}
	}
	mulVec(d, p.r1, z)
	var s float64
	for i, v := range d {
		s += p.w[i] * v * v
	}
	a := math.Abs(x1) * 1e-4
	if s > a {
		a = s
	}
	return 0.1*a + penalty(x) + p.fopt
}

// rosenbrockRaw returns Σ 100(z_i² - z_{i+1})² + (z_i - 1)².
func rosenbrockRaw(z []float64) float64 {
	var s1, s2 float64
	for i := 0; i+1 < len(z); i++ {
		t := z[i]*z[i] - z[i+1]
		s1 += t * t
		t = z[i] - 1
		s2 += t * t
	}
	return 100*s1 + s2
}

// f8: Rosenbrock of z = max(1, √n/8)·(x - x_opt) + 1.
func (p *Problem) rosenbrock(x []float64) float64 {
	var s1, s2 float64
	zi := p.c*(x[0]-p.xs[0]) + 1
	for i := 1; i < len(x); i++ {
		zn := p.c*(x[i]-p.xs[i]) + 1
		t := zi*zi - zn
		s1 += t * t
		t = zi - 1
		s2 += t * t
		zi = zn
	}
	return 100*s1 + s2 + p.fopt
}

// f9: Rosenbrock of z = max(1, √n/8)·R·x + 0.5.
func (p *Problem) rosenbrockRotated(x []float64) float64 {
	var buf [stackDim]float64
	z := work(buf[:], p.n)
	mulVec(z, p.m, x)
	for i := range z {
		z[i] += 0.5
	}
	return rosenbrockRaw(z) + p.fopt
}

// f10: Σ 10^(6·i/(n-1))·z_i², z = T_osz(R(x - x_opt)).
func (p *Problem) ellipsoidRotated(x []float64) float64 {
	var buf [2 * stackDim]float64
	n := p.n
	w := work(buf[:], 2*n)
	d, z := w[:n], w[n:]
	sub(d, x, p.xs)
	mulVec(z, p.r1, d)
	var s float64
	for i, v := range z {
		v = tosz(v)
		s += p.w[i] * v * v
	}
	return s + p.fopt
}

// f11: 1e6·z_1² + Σ_{i>1} z_i², z = T_osz(R(x - x_opt)).
func (p *Problem) discus(x []float64) float64 {
	var buf [2 * stackDim]float64
	n := p.n
	w := work(buf[:], 2*n)
	d, z := w[:n], w[n:]
	sub(d, x, p.xs)
	mulVec(z, p.r1, d)
	v := tosz(z[0])
	s := 1e6 * v * v
	for _, v := range z[1:] {
		v = tosz(v)
		s += v * v
	}
	return s + p.fopt
}

// f12: z_1² + 1e6·Σ_{i>1} z_i², z = R·T_asy^0.5(R(x - x_opt)).
func (p *Problem) bentCigar(x []float64) float64 {
	var buf [2 * stackDim]float64
	n := p.n
	w := work(buf[:], 2*n)
	d, z := w[:n], w[n:]
	sub(d, x, p.xs)
	mulVec(z, p.r1, d)
	for i, v := range z {
		z[i] = tasy(v, p.w[i])
	}
	mulVec(d, p.r1, z)
	s := d[0] * d[0]
	for _, v := range d[1:] {
		s += 1e6 * v * v
	}
	return s + p.fopt
}

// f13: z_1² + 100·√(Σ_{i>1} z_i²), z = QΛ^10R(x - x_opt).
func (p *Problem) sharpRidge(x []float64) float64 {
	var buf [2 * stackDim]float64
	n := p.n
	w := work(buf[:], 2*n)
	d, z := w[:n], w[n:]
	sub(d, x, p.xs)
	mulVec(z, p.m, d)
	var s float64
	for _, v := range z[1:] {
		s += v * v
	}
	return 100*math.Sqrt(s) + z[0]*z[0] + p.fopt
}

// f14: √(Σ |z_i|^(2+4·i/(n-1))), z = R(x - x_opt).
func (p *Problem) differentPowers(x []float64) float64 {
	var buf [2 * stackDim]float64
	n := p.n
	w := work(buf[:], 2*n)
	d, z := w[:n], w[n:]
	sub(d, x, p.xs)
	mulVec(z, p.r1, d)
	var s float64
	for i, v := range z {
		s += powPos(math.Abs(v), p.w[i])
	}
	return math.Sqrt(s) + p.fopt
}

// f15: Rastrigin of z = QΛ^10R·T_asy^0.2(T_osz(R(x - x_opt))).
func (p *Problem) rastriginRotated(x []float64) float64 {
	var buf [2 * stackDim]float64
	n := p.n
	w := work(buf[:], 2*n)
	d, z := w[:n], w[n:]
	sub(d, x, p.xs)
	mulVec(z, p.r1, d)
	for i, v := range z {
		z[i] = tasy(tosz(v), p.w[i])
	}
	mulVec(d, p.m, z)
	return rastriginRaw(d) + p.fopt
}

// f16: 10·(1/n·Σ_i Σ_k 2^-k·cos(2π·3^k·(z_i + 0.5)) - f0)³ + 10/n·f_pen(x),
// z = QΛ^(1/100)R·T_osz(R(x - x_opt)).
func (p *Problem) weierstrass(x []float64) float64 {
	var buf [2 * stackDim]float64
	n := p.n
	w := work(buf[:], 2*n)
	d, z := w[:n], w[n:]
	sub(d, x, p.xs)
	mulVec(z, p.r1, d)
	for i, v := range z {
		z[i] = tosz(v)
	}
	mulVec(d, p.m, z)
	var s float64
	for _, v := range d {
		// cos(3^k·θ) for k = 0..11 by cubing e^{iθ}: the phase error
		// grows as 3^k, to about 1e-11 rad at k = 11, weighted 2^-11.
		sn, cs := math.Sincos(2 * math.Pi * (v + 0.5))
		a := 1.0
		t := cs
		for k := 1; k < weierstrassTerms; k++ {
			c2, s2 := cs*cs, sn*sn
			cs, sn = cs*(c2-3*s2), sn*(3*c2-s2)
			a *= 0.5
			t += a * cs
		}
		s += t
	}
	v := s/float64(n) - p.c
	return 10*v*v*v + p.fopt + 10/float64(n)*penalty(x)
}

// f17, f18: (1/(n-1)·Σ √s_i + √s_i·sin²(50·s_i^0.2))², s_i = √(z_i² + z_{i+1}²),
// z = Λ^c R·T_asy^0.5(R(x - x_opt)), plus 10·f_pen(x).
func (p *Problem) schaffers(x []float64) float64 {
	var buf [2 * stackDim]float64
	n := p.n
	w := work(buf[:], 2*n)
	d, z := w[:n], w[n:]
	sub(d, x, p.xs)
	mulVec(z, p.r1, d)
	for i, v := range z {
		z[i] = tasy(v, p.w[i])
	}
	mulVec(d, p.m, z)
	var s float64
	for i := 0; i+1 < n; i++ {
		t := d[i]*d[i] + d[i+1]*d[i+1]
		if math.IsInf(t, 1) {
			return t
		}
		sn := math.Sin(50 * powPos(t, 0.1))
		s += math.Sqrt(math.Sqrt(t)) * (1 + sn*sn)
	}
	s /= float64(n) - 1
	return s*s + p.fopt + 10*penalty(x)
}

// f19: 10/(n-1)·Σ (s_i/4000 - cos s_i) + 10, s_i = 100(z_i² - z_{i+1})² +
// (z_i - 1)², z = max(1, √n/8)·R·x + 0.5.
func (p *Problem) griewankRosenbrock(x []float64) float64 {
	var buf [stackDim]float64
	n := p.n
	z := work(buf[:], n)
	mulVec(z, p.m, x)
	for i := range z {
		z[i] += 0.5
	}
	var s float64
	for i := 0; i+1 < n; i++ {
		c1 := z[i]*z[i] - z[i+1]
		c2 := 1.0 - z[i]
		t := 100.0*c1*c1 + c2*c2
		s += t/4000. - math.Cos(t)
	}
	return 10 + 10*s/float64(n-1) + p.fopt
}

// f20: 0.01·(418.9828872724339 - 1/n·Σ z_i·sin(√|z_i|)) + 0.01·Σ max(0,
// |z_i| - 500)², z = 100·(Λ^10(ẑ - 2|x_opt|) + 2|x_opt|), ẑ_1 = x̂_1,
// ẑ_i = x̂_i + 0.25·(x̂_{i-1} - 2|x_opt_{i-1}|), x̂ = 2·sign(x_opt)⊙x.
func (p *Problem) schwefel(x []float64) float64 {
	a := p.c // 2|x_opt_i|, the same for all i
	var pen, s, prev float64
	for i, v := range x {
		xh := 2 * (p.w[i] * v)
		zh := xh
		if i > 0 {
			zh = xh + 0.25*(prev-a)
		}
		prev = xh
		z := 100 * (p.w2[i]*(zh-a) - -a)
		if t := math.Abs(z) - 500; t > 0 {
			pen += t * t
		}
		s += z * math.Sin(math.Sqrt(math.Abs(z)))
	}
	return 0.01*(pen+418.9828872724339-s/float64(p.n)) + p.fopt
}

// f21, f22: T_osz(10 - max_i w_i·exp(-1/(2n)·(z - y_i)ᵀC_i(z - y_i)))² +
// f_pen(x), z = R·x, for the peaks y_i of conditioning C_i and height w_i.
func (p *Problem) gallagher(x []float64) float64 {
	var buf [stackDim]float64
	n := p.n
	z := work(buf[:], n)
	mulVec(z, p.r1, x)
	fac := -0.5 / float64(n)
	// The largest w_i·exp(fac·t_i) is the largest log(w_i) + fac·t_i:
	// one exp instead of one per peak.
	var best, bestT float64
	var bestI int
	for i := 0; i < p.npeaks; i++ {
		sc := p.peakScale[i*n : i*n+n]
		loc := p.peakLoc[i*n : i*n+n]
		var t float64
		for j, v := range z {
			d := v - loc[j]
			t += sc[j] * d * d
		}
		if l := p.peakLog[i] + fac*t; i == 0 || l > best {
			best, bestT, bestI = l, t, i
		}
	}
	f := 10 - p.peakVal[bestI]*math.Exp(fac*bestT)
	f = tosz(f)
	return f*f + penalty(x) + p.fopt
}

// f23: 10/n²·(Π_i (1 + i·Σ_{j=1}^{32} |2^j z_i - round(2^j z_i)|/2^j)^(10/n^1.2)
// - 1) + f_pen(x), z = QΛ^100R(x - x_opt).
func (p *Problem) katsuura(x []float64) float64 {
	var buf [2 * stackDim]float64
	n := p.n
	w := work(buf[:], 2*n)
	d, z := w[:n], w[n:]
	sub(d, x, p.xs)
	mulVec(z, p.m, d)
	// Π t_i^c = exp(c·log Π t_i), t_i ≥ 1, the product scaled by 2^-500
	// e times to stay finite.
	prod, e := 1.0, 0
	for i, v := range z {
		// Σ_{j=1}^{32} |2^j·v - round(2^j·v)|·2^-j, every term exact,
		// in four partial sums.
		var t [4]float64
		for j := 1; j < 33; j += 4 {
			for k := range t {
				u := pow2[j+k] * v
				t[k] += math.Abs(u-math.Floor(u+0.5)) * pow2neg[j+k]
			}
		}
		prod *= 1 + float64(i+1)*((t[0]+t[1])+(t[2]+t[3]))
		if prod > 0x1p500 {
			prod *= 0x1p-500
			e++
		}
	}
	logProd := math.Log(prod) + float64(500*e)*math.Ln2
	nf := float64(n)
	return 10/nf/nf*(-1+math.Exp(p.c*logProd)) + p.fopt + penalty(x)
}

// f24: min(Σ (x̂_i - μ0)², n + s·Σ (x̂_i - μ1)²) + 10·(n - Σ cos(2π z_i)) +
// 1e4·f_pen(x), x̂ = 2·sign(x_opt)⊙x, z = QΛ^100R(x̂ - μ0).
func (p *Problem) lunacek(x []float64) float64 {
	var buf [2 * stackDim]float64
	n := p.n
	w := work(buf[:], 2*n)
	d, z := w[:n], w[n:]
	nf := float64(n)
	s := 1 - 0.5/(math.Sqrt(nf+20)-4.1)
	mu1 := -math.Sqrt((lunacekMu0*lunacekMu0 - 1) / s)
	var s1, s2 float64
	for i, v := range x {
		xh := 2 * v
		if p.xopt[i] < 0 {
			xh = -xh
		}
		d[i] = xh - lunacekMu0
		s1 += d[i] * d[i]
		t := xh - mu1
		s2 += t * t
	}
	mulVec(z, p.m, d)
	var s3 float64
	for _, v := range z {
		s3 += math.Cos(2 * math.Pi * v)
	}
	return math.Min(s1, nf+s*s2) + 10*(nf-s3) + 1e4*penalty(x) + p.fopt
}
