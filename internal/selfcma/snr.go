package selfcma

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// The signal-to-noise rule: how a first run below MinLambda adapts its
// rates when Config.SNR is set (docs/algorithm.md §2, tables 9 and 10);
// with no MinLambda named, every first run (NoLikelihood, table 16).
//
// Below MinLambda the likelihood h_t is too noisy to choose rates (gate.go,
// table 8). The rule of LRA-CMA-ES (Nomura, Akimoto, Ono, "CMA-ES with
// Learning Rate Adaptation", GECCO 2023, Algorithm 1; CyberAgentAILab/cmaes
// _cma.py _lr_adaptation) measures progress instead: E, a moving average of
// C's update in the coordinates of C^t, and V, of its squared norm, give a
// signal-to-noise ratio; where the update keeps its direction the SNR is
// high and a larger factor η of the rates pays. We differ from LRA in five
// places, each measured (tables 9, 10, 14): the update measured is C's alone
// (CSA keeps σ); η multiplies c_μ alone (SNRRatesCMu; c_1 at its default,
// whose larger values cost the attractive sector and Rosenbrock), where
// sessions before multiplied c_1 too (SNRRatesBoth); η lies in
// [SNREtaMin, SNREtaMax] = [1, 3] (above the default λ [1, SNREtaMaxAbove]
// = [1, 1.5] and η·c_μ ≤ SNRCMuMax: tables 15 and 17) and starts at 2 (or
// at that bound), so the rule only ever speeds CMA-ES up (an η that fell
// below 1 stalled the bent cigar for thousands of generations: LRA's step
// γη vanishes with η); the target SNR/η is α = 0.01 (SNRRatesBoth: 0.02,
// or 0.01 for n from 15 to 28 in an unmirrored run; snrAlphaOf; LRA's 1.4
// is for σ²C's update; tables 11, 12 and 14); and only the first run uses
// it (restarts look for another basin, at the defaults). A session keeps
// the parameters it was created with (State.SNRParams).
const (
	SNRAlpha  = 0.02 // α of SNRRatesBoth, the target of SNR/η (but snrAlphaOf)
	SNRBeta   = 0.03 // β, the smoothing of E and V (LRA's β_Σ)
	SNRGamma  = 0.1  // γ, LRA's bound on the step of ln η
	SNREtaMin = 1.0  // smallest η: never slower than CMA-ES
	SNREtaMax = 3.0  // largest η
)

// SNRAlphaFor is the default α of a run at dimension n: the α measured
// best at the measured dimension nearest n in ln n (table 12). At n = 20
// half of SNRAlpha speeds the ellipsoids up by another 10 % (held out,
// 60 instances) at no measured cost; at n = 10 it gains nothing; at
// n = 40 and 100 it costs the attractive sector (f6) 1.25 and 1.57 times
// CMA-ES's evaluations, against 1.02 and 1.11 with SNRAlpha. So n from 15
// to 28 (between the geometric means of 10, 20 and 40) gets SNRAlpha/2,
// every other n SNRAlpha. A session records the α it was created with
// (State.SNRParams): those created before keep 0.02.
func SNRAlphaFor(n int) float64 {
	if n >= 15 && n <= 28 {
		return SNRAlpha / 2
	}
	return SNRAlpha
}

// snrAlphaOf is the default α of a new run at dimension n: SNRAlphaFor(n),
// or SNRAlpha at every n when the first run samples mirrored pairs
// (cmaes.Config.MirroredFirstRun; docs/algorithm.md §5, "Mirrored sampling
// in the first run"): with mirrors the half target's gain on the
// ellipsoids at n = 20 (4–8 %) costs the attractive sector a third of its
// evaluations (f6: 1.33 times SNRAlpha's), where without them it cost 9 %.
func snrAlphaOf(n int, mirrored bool) float64 {
	if mirrored {
		return SNRAlpha
	}
	return SNRAlphaFor(n)
}

// The defaults of the rule on c_μ alone (SNRRatesCMu; table 14): the
// target α and the η a run starts from.
const (
	SNRAlphaCMu = 0.01
	SNREta0CMu  = 2.0
)

// SNRCMuMax bounds the c_μ the rule on c_μ alone may reach: η ≤
// SNRCMuMax/c_μ (table 15). c_μ's default grows with λ (0.024 at n = 10,
// λ = 10; 0.24 at λ = 80; 0.32 at n = 5, λ = 40), and at η·c_μ above about
// 0.5 the bent cigar's runs stopped on tol_up_sigma short of the optimum:
// C's scale drifted down as σ's drifted up (pycma's CMA-ES at c_μ 0.57
// does so too); a bound of 0.4 cost the ellipsoids at n = 2 and 3. At
// every n the default λ's c_μ is below SNRCMuMax/SNREtaMax, so the bound
// binds only where a client asks for a larger λ.
const SNRCMuMax = 0.5

// SNREtaMaxAbove is the largest η of the rule on c_μ alone in a first run
// whose λ is above the default (table 17). There a CMA-ES's first run finds
// the global basin of a rugged function more often than at the default λ,
// and a larger c_μ took that from it: on Schaffers' F7 (BBOB f17) at n = 10,
// λ = 60 the first run succeeded in 16 of 50 instances with η ≤ 3, 39 with
// η ≤ 2, 47 with η ≤ 1.5, CMA-ES's in 49; at the default λ a first run
// rarely does, and η ≤ 3 measured no such loss.
const SNREtaMaxAbove = 1.5

// SNREtaMaxFor is the largest η, before the bound on η·c_μ, of the rule on
// c_μ alone in a first run of λ at dimension n: SNREtaMax up to the
// default λ, SNREtaMaxAbove above it.
func SNREtaMaxFor(lambda, n int) float64 {
	if lambda > cmaes.DefaultLambda(n) {
		return SNREtaMaxAbove
	}
	return SNREtaMax
}

// SNREtaMaxOf is the largest η that keeps η·c_μ ≤ cmuMax for a first run
// whose default c_μ is cmu, within [SNREtaMin, etaMax] (at SNREtaMin the
// rule keeps c_μ's default). New sessions' rule on c_μ alone gets
// SNREtaMaxOf(c_μ, SNRCMuMax, SNREtaMaxFor(λ, n)).
func SNREtaMaxOf(cmu, cmuMax, etaMax float64) float64 {
	return max(SNREtaMin, min(etaMax, cmuMax/cmu))
}

// SNRRates names the default rates that the rule's factor η multiplies.
type SNRRates uint8

const (
	// SNRRatesDefault selects the default: SNRRatesCMu.
	SNRRatesDefault SNRRates = iota
	// SNRRatesBoth: η multiplies c_1 and c_μ (tables 9–13), as in every
	// state written before SNRRates (encodings 8 to 15).
	SNRRatesBoth
	// SNRRatesCMu: η multiplies c_μ alone, c_1 stays its default (table
	// 14): the default since state encoding 16.
	SNRRatesCMu
)

// String returns the name cmd/bench uses: "both" or "cmu".
func (r SNRRates) String() string {
	switch r {
	case SNRRatesBoth:
		return "both"
	case SNRRatesCMu:
		return "cmu"
	case SNRRatesDefault:
		return "default"
	}
	return fmt.Sprintf("SNRRates(%d)", uint8(r))
}

// ParseSNRRates returns the SNRRates that String names: "both", "cmu" or
// "default".
func ParseSNRRates(name string) (SNRRates, error) {
	for _, r := range []SNRRates{SNRRatesDefault, SNRRatesBoth, SNRRatesCMu} {
		if r.String() == name {
			return r, nil
		}
	}
	return 0, fmt.Errorf("snr: rates %q, want cmu, both or default", name)
}

// SNRParamsV8 are the rule's parameters in the states written before they
// were persisted (state encodings 8 to 10): α = 0.02, β = 0.03, η ∈ [1, 3]
// from 1, on c_1 and c_μ, the first run only.
var SNRParamsV8 = SNRParams{Alpha: 0.02, Beta: 0.03, EtaMax: 3, Eta0: 1, Rates: SNRRatesBoth}

// SNRParams are the rule's parameters; a zero field selects its default
// (the constants above).
type SNRParams struct {
	Alpha  float64  // α; 0 = SNRAlphaCMu for SNRRatesCMu, else snrAlphaOf(n, mirrored) at New, SNRAlpha at Restore
	Beta   float64  // β; 0 = SNRBeta
	EtaMax float64  // largest η; 0 = SNREtaMax (SNRRatesCMu: SNREtaMaxOf at New)
	Eta0   float64  // η at the start of a run; 0 = SNREta0CMu for SNRRatesCMu, else 1
	Rates  SNRRates // the rates η multiplies; 0 = SNRRatesCMu
	// RestartMaxLambda: a restart whose λ is at most this uses the rule
	// too, from a fresh state (η = Eta0, E = 0, V = 0); 0 = the first run only.
	RestartMaxLambda int
	// SmallRestarts: BIPOP's small runs use the rule too, each from a fresh
	// state.
	SmallRestarts bool
}

// resolved returns p with its zero fields set to the defaults.
func (p SNRParams) resolved() SNRParams {
	if p.Rates == SNRRatesDefault {
		p.Rates = SNRRatesCMu
	}
	if p.Alpha == 0 {
		p.Alpha = SNRAlpha
		if p.Rates == SNRRatesCMu {
			p.Alpha = SNRAlphaCMu
		}
	}
	if p.Beta == 0 {
		p.Beta = SNRBeta
	}
	if p.EtaMax == 0 {
		p.EtaMax = SNREtaMax
	}
	if p.Eta0 == 0 {
		p.Eta0 = 1
		if p.Rates == SNRRatesCMu {
			p.Eta0 = min(SNREta0CMu, p.EtaMax)
		}
	}
	return p
}

// check reports parameters the rule cannot run with.
func (p SNRParams) check() error {
	switch {
	case !(p.Alpha > 0) || math.IsInf(p.Alpha, 0):
		return fmt.Errorf("snr: α %v, want > 0", p.Alpha)
	case !(p.Beta > 0 && p.Beta < 1):
		return fmt.Errorf("snr: β %v, want in (0, 1)", p.Beta)
	case !(p.EtaMax >= SNREtaMin) || math.IsInf(p.EtaMax, 0):
		return fmt.Errorf("snr: largest η %v, want ≥ %v", p.EtaMax, SNREtaMin)
	case !(p.Eta0 >= SNREtaMin && p.Eta0 <= p.EtaMax):
		return fmt.Errorf("snr: initial η %v outside [%v, %v]", p.Eta0, SNREtaMin, p.EtaMax)
	case p.Rates != SNRRatesBoth && p.Rates != SNRRatesCMu:
		return fmt.Errorf("snr: rates %v, want both or cmu", p.Rates)
	case p.RestartMaxLambda < 0:
		return fmt.Errorf("snr: restart max λ %d, want ≥ 0", p.RestartMaxLambda)
	}
	return nil
}

// SNRState is the rule's state in a run: η, the factor of the default c_1
// and c_μ the next update uses; E, the moving average of the update at
// η = 1 in the coordinates of the distribution, symmetric, its upper
// triangle packed by rows (n(n+1)/2 values); V, the moving average of the
// update's squared Frobenius norm.
type SNRState struct {
	Eta float64
	E   []float64
	V   float64
}

// newSNR returns the rule's state at the start of a run of dimension n,
// η = eta0.
func newSNR(n int, eta0 float64) *SNRState {
	return &SNRState{Eta: eta0, E: make([]float64, n*(n+1)/2)}
}

// check reports a state no run of dimension n could have.
func (r *SNRState) check(n int, etaMax float64) error {
	switch {
	case len(r.E) != n*(n+1)/2:
		return fmt.Errorf("snr: %d values of E, want %d", len(r.E), n*(n+1)/2)
	case !(r.Eta >= SNREtaMin && r.Eta <= etaMax):
		return fmt.Errorf("snr: η %v outside [%v, %v]", r.Eta, SNREtaMin, etaMax)
	case !(r.V >= 0) || math.IsInf(r.V, 0):
		return fmt.Errorf("snr: V %v", r.V)
	}
	return nil
}

// hyper returns the default rates h with η times the rates named by
// rates (c_c unchanged), c_1 + c_μ capped at Scale = 0.9 as the
// auxiliary's θ is: SNRRatesBoth keeps their ratio, SNRRatesCMu keeps c_1.
func (r *SNRState) hyper(h cmaes.Hyper, rates SNRRates) cmaes.Hyper {
	if rates == SNRRatesCMu {
		h.CMu = min(r.Eta*h.CMu, Scale-h.C1)
		return h
	}
	h.C1, h.CMu = r.Eta*h.C1, r.Eta*h.CMu
	if s := h.C1 + h.CMu; s > Scale {
		h.C1, h.CMu = h.C1*Scale/s, h.CMu*Scale/s
	}
	return h
}

// snrWork holds what observe needs between the generation's start and its
// end: C^t and its eigendecomposition. Not state.
type snrWork struct {
	c0       *mat.SymDense
	b        *mat.Dense
	d        []float64
	isq, tmp *mat.Dense
	bd       *mat.Dense
}

// before keeps C^t = B D² Bᵀ of the primary's state st (copied: the tell
// overwrites them).
func (w *snrWork) before(st *cmaes.State) {
	n := len(st.D)
	if w.c0 == nil || w.c0.SymmetricDim() != n {
		*w = snrWork{c0: mat.NewSymDense(n, nil), b: mat.NewDense(n, n, nil), d: make([]float64, n),
			isq: mat.NewDense(n, n, nil), tmp: mat.NewDense(n, n, nil), bd: mat.NewDense(n, n, nil)}
	}
	w.c0.CopySym(st.C)
	w.b.Copy(st.B)
	copy(w.d, st.D)
}

// observe updates η from C^t (kept by before) and C^{t+1} = c1, the update
// having used η times the default c_1 and c_μ (LRA, Algorithm 1, lines
// 9–13 with Σ = C alone), with the parameters p (resolved).
func (r *SNRState) observe(w *snrWork, c1 *mat.SymDense, p SNRParams) {
	n := len(w.d)
	// C^{−1/2} = B D^{−1} Bᵀ (D: the axis lengths, the roots of C's
	// eigenvalues).
	for i := range n {
		for k := range n {
			w.bd.Set(i, k, w.b.At(i, k)/w.d[k])
		}
	}
	w.isq.Mul(w.bd, w.b.T())
	// ΔC = C^{t+1} − C^t, then Δ = C^{−1/2} ΔC C^{−1/2}.
	for i := range n {
		for j := range n {
			w.tmp.Set(i, j, c1.At(i, j)-w.c0.At(i, j))
		}
	}
	w.bd.Mul(w.isq, w.tmp)
	w.tmp.Mul(w.bd, w.isq)
	// The update at η = 1 (it is linear in c_1 and c_μ), in LRA's scale
	// 1/√2 of a symmetric matrix; E and V as moving averages, ‖·‖ the
	// Frobenius norm (an off-diagonal entry counts twice).
	k := 1 / (r.Eta * math.Sqrt2)
	var sq, e2 float64
	beta := p.Beta
	q := 0
	for i := range n {
		for j := i; j < n; j++ {
			x := (w.tmp.At(i, j) + w.tmp.At(j, i)) / 2 * k
			r.E[q] = (1-beta)*r.E[q] + beta*x
			m := 2.0
			if i == j {
				m = 1
			}
			sq += m * x * x
			e2 += m * r.E[q] * r.E[q]
			q++
		}
	}
	r.V = (1-beta)*r.V + beta*sq
	// SNR = (‖E‖² − β/(2 − β) V) / (V − ‖E‖²); η ← η exp(min(γη, β)
	// clip(SNR/(αη) − 1, −1, 1)), then bounded to [SNREtaMin, SNREtaMax].
	ratio := beta / (2 - beta)
	if beta == SNRBeta {
		ratio = SNRBeta / (2 - SNRBeta) // the constant: bit for bit as before SNRParams
	}
	snr := (e2 - ratio*r.V) / (r.V - e2)
	if math.IsNaN(snr) {
		return // no update (V = ‖E‖² = 0): no evidence
	}
	rel := max(-1, min(1, snr/(p.Alpha*r.Eta)-1))
	r.Eta = max(SNREtaMin, min(p.EtaMax, r.Eta*math.Exp(min(SNRGamma*r.Eta, beta)*rel)))
}
