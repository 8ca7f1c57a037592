package symeig

// The secular-equation solvers of LAPACK's divide and conquer: dlaed4 (the
// I-th root of 1 + ρ Σ z_j²/(d_j − λ) = 0), dlaed5 (its 2×2 case) and dlaed6
// (one Newton-like step from three poles). Ported from Reference LAPACK
// 3.12 (SRC/dlaed4.f, dlaed5.f, dlaed6.f; BSD-3-Clause, Copyright (c)
// 1992-2023 The University of Tennessee and The University of Tennessee
// Research Foundation, The University of California Berkeley, The
// University of Colorado Denver), statement for statement, with indices
// from 0: i, ii, ip1 below are LAPACK's I, II, IP1 minus one.

import "math"

// laed4Maxit is MAXIT of dlaed4.
const laed4Maxit = 30

// laed4 is dlaed4: it finds the i-th (from 0) eigenvalue dlam of
// diag(d) + ρ z zᵀ, d strictly increasing, ‖z‖ = 1, ρ > 0, and sets
// delta[j] = d[j] − dlam (or, for n ≤ 2, the eigenvector). It returns false
// if the iteration did not converge (dlaed4's INFO = 1; dlam is then the
// last iterate).
func laed4(n, i int, d, z, delta []float64, rho float64) (dlam float64, ok bool) {
	if n == 1 {
		delta[0] = 1
		return d[0] + rho*z[0]*z[0], true
	}
	if n == 2 {
		return laed5(i, d, z, delta, rho), true
	}
	eps := dlamchE
	rhoinv := 1 / rho
	var a, b, c, del, dltlb, dltub, dphi, dpsi, dw, erretm, eta, midpt, phi, prew, psi, tau, temp, temp1, w float64
	var zz [3]float64

	if i == n-1 {
		// The last eigenvalue: λ lies in (d[n−1], d[n−1] + ρ).
		ii := n - 2
		niter := 1
		midpt = rho / 2
		for j := range n {
			delta[j] = (d[j] - d[i]) - midpt
		}
		psi = 0
		for j := 0; j < n-2; j++ {
			psi += z[j] * z[j] / delta[j]
		}
		c = rhoinv + psi
		w = c + z[ii]*z[ii]/delta[ii] + z[n-1]*z[n-1]/delta[n-1]
		if w <= 0 {
			temp = z[n-2]*z[n-2]/(d[n-1]-d[n-2]+rho) + z[n-1]*z[n-1]/rho
			if c <= temp {
				tau = rho
			} else {
				del = d[n-1] - d[n-2]
				a = -c*del + z[n-2]*z[n-2] + z[n-1]*z[n-1]
				b = z[n-1] * z[n-1] * del
				if a < 0 {
					tau = 2 * b / (math.Sqrt(a*a+4*b*c) - a)
				} else {
					tau = (a + math.Sqrt(a*a+4*b*c)) / (2 * c)
				}
			}
			dltlb = midpt
			dltub = rho
		} else {
			del = d[n-1] - d[n-2]
			a = -c*del + z[n-2]*z[n-2] + z[n-1]*z[n-1]
			b = z[n-1] * z[n-1] * del
			if a < 0 {
				tau = 2 * b / (math.Sqrt(a*a+4*b*c) - a)
			} else {
				tau = (a + math.Sqrt(a*a+4*b*c)) / (2 * c)
			}
			dltlb = 0
			dltub = midpt
		}
		for j := range n {
			delta[j] = (d[j] - d[i]) - tau
		}
		// ψ, ψ' and the error bound.
		sums := func() {
			dpsi, psi, erretm = 0, 0, 0
			for j := 0; j <= ii; j++ {
				temp = z[j] / delta[j]
				psi += z[j] * temp
				dpsi += temp * temp
				erretm += psi
			}
			erretm = math.Abs(erretm)
			temp = z[n-1] / delta[n-1]
			phi = z[n-1] * temp
			dphi = temp * temp
			erretm = 8*(-phi-psi) + erretm - phi + rhoinv + math.Abs(tau)*(dpsi+dphi)
			w = rhoinv + phi + psi
		}
		sums()
		if math.Abs(w) <= eps*erretm {
			return d[i] + tau, true
		}
		if w <= 0 {
			dltlb = max(dltlb, tau)
		} else {
			dltub = min(dltub, tau)
		}
		niter++
		c = w - delta[n-2]*dpsi - delta[n-1]*dphi
		a = (delta[n-2]+delta[n-1])*w - delta[n-2]*delta[n-1]*(dpsi+dphi)
		b = delta[n-2] * delta[n-1] * w
		if c < 0 {
			c = math.Abs(c)
		}
		switch {
		case c == 0:
			eta = -w / (dpsi + dphi)
		case a >= 0:
			eta = (a + math.Sqrt(math.Abs(a*a-4*b*c))) / (2 * c)
		default:
			eta = 2 * b / (a - math.Sqrt(math.Abs(a*a-4*b*c)))
		}
		if w*eta > 0 {
			eta = -w / (dpsi + dphi)
		}
		temp = tau + eta
		if temp > dltub || temp < dltlb {
			eta1 := -w / (dpsi + dphi)
			temp = tau + eta1
			var eta2 float64
			if w < 0 {
				eta2 = (dltub - tau) / 2
			} else {
				eta2 = (dltlb - tau) / 2
			}
			if dltlb <= temp && temp <= dltub {
				eta = math.Copysign(1, eta1) * math.Sqrt(math.Abs(eta1)) * math.Sqrt(math.Abs(eta2))
			} else {
				eta = eta2
			}
		}
		for j := range n {
			delta[j] -= eta
		}
		tau += eta
		sums()
		for niter = niter + 1; niter <= laed4Maxit; niter++ {
			if math.Abs(w) <= eps*erretm {
				return d[i] + tau, true
			}
			if w <= 0 {
				dltlb = max(dltlb, tau)
			} else {
				dltub = min(dltub, tau)
			}
			c = w - delta[n-2]*dpsi - delta[n-1]*dphi
			a = (delta[n-2]+delta[n-1])*w - delta[n-2]*delta[n-1]*(dpsi+dphi)
			b = delta[n-2] * delta[n-1] * w
			if a >= 0 {
				eta = (a + math.Sqrt(math.Abs(a*a-4*b*c))) / (2 * c)
			} else {
				eta = 2 * b / (a - math.Sqrt(math.Abs(a*a-4*b*c)))
			}
			if w*eta > 0 {
				eta = -w / (dpsi + dphi)
			}
			temp = tau + eta
			if temp > dltub || temp < dltlb {
				if w < 0 {
					eta = (dltub - tau) / 2
				} else {
					eta = (dltlb - tau) / 2
				}
			}
			for j := range n {
				delta[j] -= eta
			}
			tau += eta
			sums()
		}
		return d[i] + tau, false
	}

	// λ lies in (d[i], d[i+1]).
	niter := 1
	ip1 := i + 1
	del = d[ip1] - d[i]
	midpt = del / 2
	for j := range n {
		delta[j] = (d[j] - d[i]) - midpt
	}
	psi = 0
	for j := 0; j < i; j++ {
		psi += z[j] * z[j] / delta[j]
	}
	phi = 0
	for j := n - 1; j >= i+2; j-- {
		phi += z[j] * z[j] / delta[j]
	}
	c = rhoinv + psi + phi
	w = c + z[i]*z[i]/delta[i] + z[ip1]*z[ip1]/delta[ip1]

	// orgati: the root is closer to d[i] than to d[i+1]; τ is measured from
	// the closer pole.
	var orgati bool
	if w > 0 {
		orgati = true
		a = c*del + z[i]*z[i] + z[ip1]*z[ip1]
		b = z[i] * z[i] * del
		if a > 0 {
			tau = 2 * b / (a + math.Sqrt(math.Abs(a*a-4*b*c)))
		} else {
			tau = (a - math.Sqrt(math.Abs(a*a-4*b*c))) / (2 * c)
		}
		dltlb = 0
		dltub = midpt
	} else {
		orgati = false
		a = c*del - z[i]*z[i] - z[ip1]*z[ip1]
		b = z[ip1] * z[ip1] * del
		if a < 0 {
			tau = 2 * b / (a - math.Sqrt(math.Abs(a*a+4*b*c)))
		} else {
			tau = -(a + math.Sqrt(math.Abs(a*a+4*b*c))) / (2 * c)
		}
		dltlb = -midpt
		dltub = 0
	}
	var ii int
	if orgati {
		for j := range n {
			delta[j] = (d[j] - d[i]) - tau
		}
		ii = i
	} else {
		for j := range n {
			delta[j] = (d[j] - d[ip1]) - tau
		}
		ii = i + 1
	}
	iim1, iip1 := ii-1, ii+1
	root := func() float64 {
		if orgati {
			return d[i] + tau
		}
		return d[ip1] + tau
	}
	// ψ, φ, their derivatives and the error bound, without the ii term.
	sums := func() {
		dpsi, psi, erretm = 0, 0, 0
		for j := 0; j <= iim1; j++ {
			temp = z[j] / delta[j]
			psi += z[j] * temp
			dpsi += temp * temp
			erretm += psi
		}
		erretm = math.Abs(erretm)
		dphi, phi = 0, 0
		for j := n - 1; j >= iip1; j-- {
			temp = z[j] / delta[j]
			phi += z[j] * temp
			dphi += temp * temp
			erretm += phi
		}
	}
	sums()
	w = rhoinv + phi + psi

	// swtch3: use the three-pole model (dlaed6).
	swtch3 := false
	if orgati {
		if w < 0 {
			swtch3 = true
		}
	} else if w > 0 {
		swtch3 = true
	}
	if ii == 0 || ii == n-1 {
		swtch3 = false
	}
	temp = z[ii] / delta[ii]
	dw = dpsi + dphi + temp*temp
	temp = z[ii] * temp
	w += temp
	erretm = 8*(phi-psi) + erretm + 2*rhoinv + 3*math.Abs(temp) + math.Abs(tau)*dw
	if math.Abs(w) <= eps*erretm {
		return root(), true
	}
	if w <= 0 {
		dltlb = max(dltlb, tau)
	} else {
		dltub = min(dltub, tau)
	}
	niter++
	if !swtch3 {
		if orgati {
			t := z[i] / delta[i]
			c = w - delta[ip1]*dw - (d[i]-d[ip1])*(t*t)
		} else {
			t := z[ip1] / delta[ip1]
			c = w - delta[i]*dw - (d[ip1]-d[i])*(t*t)
		}
		a = (delta[i]+delta[ip1])*w - delta[i]*delta[ip1]*dw
		b = delta[i] * delta[ip1] * w
		switch {
		case c == 0:
			if a == 0 {
				if orgati {
					a = z[i]*z[i] + delta[ip1]*delta[ip1]*(dpsi+dphi)
				} else {
					a = z[ip1]*z[ip1] + delta[i]*delta[i]*(dpsi+dphi)
				}
			}
			eta = b / a
		case a <= 0:
			eta = (a - math.Sqrt(math.Abs(a*a-4*b*c))) / (2 * c)
		default:
			eta = 2 * b / (a + math.Sqrt(math.Abs(a*a-4*b*c)))
		}
	} else {
		temp = rhoinv + psi + phi
		if orgati {
			temp1 = z[iim1] / delta[iim1]
			temp1 *= temp1
			c = temp - delta[iip1]*(dpsi+dphi) - (d[iim1]-d[iip1])*temp1
			zz[0] = z[iim1] * z[iim1]
			zz[2] = delta[iip1] * delta[iip1] * ((dpsi - temp1) + dphi)
		} else {
			temp1 = z[iip1] / delta[iip1]
			temp1 *= temp1
			c = temp - delta[iim1]*(dpsi+dphi) - (d[iip1]-d[iim1])*temp1
			zz[0] = delta[iim1] * delta[iim1] * (dpsi + (dphi - temp1))
			zz[2] = z[iip1] * z[iip1]
		}
		zz[1] = z[ii] * z[ii]
		var ok bool
		if eta, ok = laed6(niter, orgati, c, delta[iim1:iim1+3], zz[:], w); !ok {
			return root(), false
		}
	}
	if w*eta >= 0 {
		eta = -w / dw
	}
	temp = tau + eta
	if temp > dltub || temp < dltlb {
		if w < 0 {
			eta = (dltub - tau) / 2
		} else {
			eta = (dltlb - tau) / 2
		}
	}
	prew = w
	for j := range n {
		delta[j] -= eta
	}
	sums()
	temp = z[ii] / delta[ii]
	dw = dpsi + dphi + temp*temp
	temp = z[ii] * temp
	w = rhoinv + phi + psi + temp
	erretm = 8*(phi-psi) + erretm + 2*rhoinv + 3*math.Abs(temp) + math.Abs(tau+eta)*dw

	// swtch: switch to the other interpolation when w does not shrink.
	swtch := false
	if orgati {
		if -w > math.Abs(prew)/10 {
			swtch = true
		}
	} else if w > math.Abs(prew)/10 {
		swtch = true
	}
	tau += eta

	for niter = niter + 1; niter <= laed4Maxit; niter++ {
		if math.Abs(w) <= eps*erretm {
			return root(), true
		}
		if w <= 0 {
			dltlb = max(dltlb, tau)
		} else {
			dltub = min(dltub, tau)
		}
		if !swtch3 {
			if !swtch {
				if orgati {
					t := z[i] / delta[i]
					c = w - delta[ip1]*dw - (d[i]-d[ip1])*(t*t)
				} else {
					t := z[ip1] / delta[ip1]
					c = w - delta[i]*dw - (d[ip1]-d[i])*(t*t)
				}
			} else {
				temp = z[ii] / delta[ii]
				if orgati {
					dpsi += temp * temp
				} else {
					dphi += temp * temp
				}
				c = w - delta[i]*dpsi - delta[ip1]*dphi
			}
			a = (delta[i]+delta[ip1])*w - delta[i]*delta[ip1]*dw
			b = delta[i] * delta[ip1] * w
			switch {
			case c == 0:
				if a == 0 {
					if !swtch {
						if orgati {
							a = z[i]*z[i] + delta[ip1]*delta[ip1]*(dpsi+dphi)
						} else {
							a = z[ip1]*z[ip1] + delta[i]*delta[i]*(dpsi+dphi)
						}
					} else {
						a = delta[i]*delta[i]*dpsi + delta[ip1]*delta[ip1]*dphi
					}
				}
				eta = b / a
			case a <= 0:
				eta = (a - math.Sqrt(math.Abs(a*a-4*b*c))) / (2 * c)
			default:
				eta = 2 * b / (a + math.Sqrt(math.Abs(a*a-4*b*c)))
			}
		} else {
			temp = rhoinv + psi + phi
			if swtch {
				c = temp - delta[iim1]*dpsi - delta[iip1]*dphi
				zz[0] = delta[iim1] * delta[iim1] * dpsi
				zz[2] = delta[iip1] * delta[iip1] * dphi
			} else if orgati {
				temp1 = z[iim1] / delta[iim1]
				temp1 *= temp1
				c = temp - delta[iip1]*(dpsi+dphi) - (d[iim1]-d[iip1])*temp1
				zz[0] = z[iim1] * z[iim1]
				zz[2] = delta[iip1] * delta[iip1] * ((dpsi - temp1) + dphi)
			} else {
				temp1 = z[iip1] / delta[iip1]
				temp1 *= temp1
				c = temp - delta[iim1]*(dpsi+dphi) - (d[iip1]-d[iim1])*temp1
				zz[0] = delta[iim1] * delta[iim1] * (dpsi + (dphi - temp1))
				zz[2] = z[iip1] * z[iip1]
			}
			var ok bool
			if eta, ok = laed6(niter, orgati, c, delta[iim1:iim1+3], zz[:], w); !ok {
				return root(), false
			}
		}
		if w*eta >= 0 {
			eta = -w / dw
		}
		temp = tau + eta
		if temp > dltub || temp < dltlb {
			eta1 := -w / dw
			temp = tau + eta1
			var eta2 float64
			if w < 0 {
				eta2 = (dltub - tau) / 2
			} else {
				eta2 = (dltlb - tau) / 2
			}
			if dltlb <= temp && temp <= dltub {
				eta = math.Copysign(1, eta1) * math.Sqrt(math.Abs(eta1)) * math.Sqrt(math.Abs(eta2))
			} else {
				eta = eta2
			}
		}
		for j := range n {
			delta[j] -= eta
		}
		tau += eta
		prew = w
		sums()
		temp = z[ii] / delta[ii]
		dw = dpsi + dphi + temp*temp
		temp = z[ii] * temp
		w = rhoinv + phi + psi + temp
		erretm = 8*(phi-psi) + erretm + 2*rhoinv + 3*math.Abs(temp) + math.Abs(tau)*dw
		if w*prew > 0 && math.Abs(w) > math.Abs(prew)/10 {
			swtch = !swtch
		}
	}
	return root(), false
}

// laed5 is dlaed5: the i-th (0 or 1) eigenvalue of diag(d) + ρ z zᵀ of
// order 2, and its eigenvector in delta.
func laed5(i int, d, z, delta []float64, rho float64) (dlam float64) {
	del := d[1] - d[0]
	var b, c, tau float64
	if i == 0 {
		w := 1 + 2*rho*(z[1]*z[1]-z[0]*z[0])/del
		if w > 0 {
			b = del + rho*(z[0]*z[0]+z[1]*z[1])
			c = rho * z[0] * z[0] * del
			// b > 0 always.
			tau = 2 * c / (b + math.Sqrt(math.Abs(b*b-4*c)))
			dlam = d[0] + tau
			delta[0] = -z[0] / tau
			delta[1] = z[1] / (del - tau)
		} else {
			b = -del + rho*(z[0]*z[0]+z[1]*z[1])
			c = rho * z[1] * z[1] * del
			if b > 0 {
				tau = -2 * c / (b + math.Sqrt(b*b+4*c))
			} else {
				tau = (b - math.Sqrt(b*b+4*c)) / 2
			}
			dlam = d[1] + tau
			delta[0] = -z[0] / (del + tau)
			delta[1] = -z[1] / tau
		}
	} else {
		b = -del + rho*(z[0]*z[0]+z[1]*z[1])
		c = rho * z[1] * z[1] * del
		if b > 0 {
			tau = (b + math.Sqrt(b*b+4*c)) / 2
		} else {
			tau = 2 * c / (-b + math.Sqrt(b*b+4*c))
		}
		dlam = d[1] + tau
		delta[0] = -z[0] / (del + tau)
		delta[1] = -z[1] / tau
	}
	temp := math.Sqrt(delta[0]*delta[0] + delta[1]*delta[1])
	delta[0] /= temp
	delta[1] /= temp
	return dlam
}

// laed6Maxit is MAXIT of dlaed6.
const laed6Maxit = 40

// Scaling constants of dlaed6: small1 = 2^⌊log₂(safe minimum)/3⌋ (toward
// zero), small2 = small1².
const (
	laed6Small1 = 0x1p-340
	laed6Sminv1 = 0x1p340
	laed6Small2 = 0x1p-680
	laed6Sminv2 = 0x1p680
)

// laed6 is dlaed6: one root τ of f(x) = ρ + Σ_{j<3} z_j/(d_j − x) near
// the origin, from finit = f(0), in (d[1], d[2]) if orgati and (d[0], d[1])
// otherwise. It returns false if it did not converge (dlaed6's INFO = 1).
func laed6(kniter int, orgati bool, rho float64, d, z []float64, finit float64) (tau float64, ok bool) {
	var lbd, ubd float64
	if orgati {
		lbd, ubd = d[1], d[2]
	} else {
		lbd, ubd = d[0], d[1]
	}
	if finit < 0 {
		lbd = 0
	} else {
		ubd = 0
	}
	var a, b, c, temp float64
	if kniter == 2 {
		if orgati {
			temp = (d[2] - d[1]) / 2
			c = rho + z[0]/((d[0]-d[1])-temp)
			a = c*(d[1]+d[2]) + z[1] + z[2]
			b = c*d[1]*d[2] + z[1]*d[2] + z[2]*d[1]
		} else {
			temp = (d[0] - d[1]) / 2
			c = rho + z[2]/((d[2]-d[1])-temp)
			a = c*(d[0]+d[1]) + z[0] + z[1]
			b = c*d[0]*d[1] + z[0]*d[1] + z[1]*d[0]
		}
		temp = max(math.Abs(a), math.Abs(b), math.Abs(c))
		a /= temp
		b /= temp
		c /= temp
		switch {
		case c == 0:
			tau = b / a
		case a <= 0:
			tau = (a - math.Sqrt(math.Abs(a*a-4*b*c))) / (2 * c)
		default:
			tau = 2 * b / (a + math.Sqrt(math.Abs(a*a-4*b*c)))
		}
		if tau < lbd || tau > ubd {
			tau = (lbd + ubd) / 2
		}
		if d[0] == tau || d[1] == tau || d[2] == tau {
			tau = 0
		} else {
			temp = finit + tau*z[0]/(d[0]*(d[0]-tau)) +
				tau*z[1]/(d[1]*(d[1]-tau)) +
				tau*z[2]/(d[2]*(d[2]-tau))
			if temp <= 0 {
				lbd = tau
			} else {
				ubd = tau
			}
			if math.Abs(finit) <= math.Abs(temp) {
				tau = 0
			}
		}
	}

	eps := dlamchE
	if orgati {
		temp = min(math.Abs(d[1]-tau), math.Abs(d[2]-tau))
	} else {
		temp = min(math.Abs(d[0]-tau), math.Abs(d[1]-tau))
	}
	var dscale, zscale [3]float64
	scale := false
	var sclinv float64
	if temp <= laed6Small1 {
		scale = true
		sclfac := laed6Sminv1
		sclinv = laed6Small1
		if temp <= laed6Small2 {
			sclfac = laed6Sminv2
			sclinv = laed6Small2
		}
		for k := range 3 {
			dscale[k] = d[k] * sclfac
			zscale[k] = z[k] * sclfac
		}
		tau *= sclfac
		lbd *= sclfac
		ubd *= sclfac
	} else {
		copy(dscale[:], d[:3])
		copy(zscale[:], z[:3])
	}
	unscale := func(tau float64) float64 {
		if scale {
			return tau * sclinv
		}
		return tau
	}

	var fc, df, ddf float64
	for k := range 3 {
		temp = 1 / (dscale[k] - tau)
		temp1 := zscale[k] * temp
		temp2 := temp1 * temp
		temp3 := temp2 * temp
		fc += temp1 / dscale[k]
		df += temp2
		ddf += temp3
	}
	f := finit + tau*fc
	if math.Abs(f) <= 0 {
		return unscale(tau), true
	}
	if f <= 0 {
		lbd = tau
	} else {
		ubd = tau
	}
	for niter := 2; niter <= laed6Maxit; niter++ {
		var temp1, temp2 float64
		if orgati {
			temp1 = dscale[1] - tau
			temp2 = dscale[2] - tau
		} else {
			temp1 = dscale[0] - tau
			temp2 = dscale[1] - tau
		}
		a = (temp1+temp2)*f - temp1*temp2*df
		b = temp1 * temp2 * f
		c = f - (temp1+temp2)*df + temp1*temp2*ddf
		temp = max(math.Abs(a), math.Abs(b), math.Abs(c))
		a /= temp
		b /= temp
		c /= temp
		var eta float64
		switch {
		case c == 0:
			eta = b / a
		case a <= 0:
			eta = (a - math.Sqrt(math.Abs(a*a-4*b*c))) / (2 * c)
		default:
			eta = 2 * b / (a + math.Sqrt(math.Abs(a*a-4*b*c)))
		}
		if f*eta >= 0 {
			eta = -f / df
		}
		tau += eta
		if tau < lbd || tau > ubd {
			tau = (lbd + ubd) / 2
		}
		fc, df, ddf = 0, 0, 0
		erretm := 0.0
		for k := range 3 {
			if dscale[k]-tau == 0 {
				return unscale(tau), true
			}
			temp = 1 / (dscale[k] - tau)
			temp1 := zscale[k] * temp
			temp2 := temp1 * temp
			temp3 := temp2 * temp
			temp4 := temp1 / dscale[k]
			fc += temp4
			erretm += math.Abs(temp4)
			df += temp2
			ddf += temp3
		}
		f = finit + tau*fc
		erretm = 8*(math.Abs(finit)+math.Abs(tau)*erretm) + math.Abs(tau)*df
		if math.Abs(f) <= 4*eps*erretm || (ubd-lbd) <= 4*eps*math.Abs(tau) {
			return unscale(tau), true
		}
		if f <= 0 {
			lbd = tau
		} else {
			ubd = tau
		}
	}
	return unscale(tau), false
}
