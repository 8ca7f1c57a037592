// Package selfcma implements self-CMA-ES, Algorithms 2 and 3 of Loshchilov,
// Schoenauer, Sebag and Hansen, "Maximum Likelihood-based Online Adaptation
// of Hyper-parameters in CMA-ES", PPSN XIII, 2014 (arXiv:1406.2623), with the
// open points settled in docs/algorithm.md §2.
//
// A primary CMA-ES optimizes f. After each of its updates t → t+1, an
// auxiliary CMA-ES over u = (c_1, c_μ, c_c)/0.9 ∈ [0, 1]³ (u_1 + u_2 ≤ 1) runs
// one generation of 20 candidates, each scored by h_t (Algorithm 3): replay
// the primary's update t−1 → t with the candidate's rates and measure how
// likely the newest points, ranked by f, are under the replayed
// distribution. The primary's next update uses 0.9 × the auxiliary's mean.
//
// ES has the ask/tell surface of cmaes.ES and its Status, so a session can
// run either; the rest is the primary's (Primary). Its state is plain data
// (State; Restore), encoded by internal/enginecodec.
//
// Injected points (Inject, passed to the primary) are points of their
// generation like the others for h_t: the kept step holds each as the
// primary's update used it, m^t + σ^t y with y clipped to
// c_y = √n + 2n/(n + 2) in the Mahalanobis norm of C^t, and h_t ranks it by
// its likelihood under the replayed C' like any other point. Its distance
// is bounded, so h_t stays finite and in [1, λ] however far the point was,
// and the replay with the rates used still reproduces C^{t+1} and p_c^{t+1}.
//
// Population size: the paper runs self-CMA-ES with λ = 100, "about 10 times
// larger than the default", against CMA-ES at the same λ. At small λ the
// one-step likelihood h_t is too noisy (c_1 climbs to 0.2–0.5 and C
// degenerates), and a restart that self-adapts finds the global optimum of
// a multimodal function less often than one that does not. So a run
// self-adapts only from λ = MinLambda, 10n, up, and by default only the
// first run (gate.go); other runs are plain CMA-ES. The default λ is
// CMA-ES's, 4 + ⌊3 ln n⌋: a self-CMA-ES with neither λ nor MinLambda set
// runs no h_t until a client asks for a large population. With Config.SNR
// its first run adapts c_μ by LRA-CMA-ES's signal-to-noise rule instead,
// below the gate and, unless MinLambda is named, above it too (snr.go;
// docs/algorithm.md §2, "Population size", tables 9, 10 and 16, has the
// measurements).
package selfcma

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// Settings of the auxiliary CMA-ES (docs/algorithm.md §2).
const (
	AuxLambda = 20  // λ_h
	AuxSigma0 = 0.6 // initial step size (saACM-ES's value; not in the paper)
	Scale     = 0.9 // θ = Scale · u, so c_1 + c_μ ≤ 0.9
	// penaltyFactor makes every infeasible candidate rank below every
	// feasible one (−h ≥ −λ for a feasible u).
	penaltyFactor = 1e10
)

// Initial means of the auxiliary CMA-ES.
const (
	InitDefault = "default" // the primary's defaults / 0.9 (our default)
	InitUniform = "uniform" // uniform in [0, 1]³ (the paper's experiment)
)

// Config configures a self-CMA-ES: the primary's configuration and the
// auxiliary's initial mean.
type Config struct {
	CMA  cmaes.Config
	Init string // InitDefault (also for "") or InitUniform
	// MinLambda is the smallest λ at which a run self-adapts its rates
	// by h_t (gate.go); a run with a smaller λ is plain CMA-ES, or runs
	// the signal-to-noise rule (SNR). 0 selects DefaultMinLambda(n) = 10n,
	// or NoLikelihood with SNR at n ≤ SNRMaxDim (the rule at every λ;
	// table 16); EveryLambda (or 2) self-adapts at every λ; negative is
	// an error.
	MinLambda int
	// AdaptRestarts lets the runs after the first (IPOP, BIPOP) self-adapt
	// too when their λ ≥ MinLambda; false (the default) runs them as plain
	// CMA-ES. MinLambda: EveryLambda with AdaptRestarts is the paper's
	// Algorithm 2 in every run.
	AdaptRestarts bool
	// SNR lets a first run below MinLambda (with MinLambda 0: of any λ)
	// adapt a factor η ∈ [1, 3] of its c_μ (above the default λ η ≤
	// SNREtaMaxAbove and η·c_μ ≤ SNRCMuMax; SNRParams.Rates: or of c_1
	// and c_μ), by the signal-to-noise rule (snr.go) for n ≤ SNRMaxDim;
	// false (the zero value, and every state written before the rule)
	// runs it at the defaults, as plain CMA-ES, and self-adapts by h_t
	// from λ = 10n (the paper's self-CMA-ES).
	SNR bool
	// SNRParams are the rule's parameters (α, β, the largest and the
	// initial η, the rates η multiplies, the restarts that use it); a zero
	// field is its default (snr.go). The state records them resolved.
	SNRParams SNRParams
	// SNRCMuMax, if > 0, bounds η·c_μ of the first run in place of the
	// constant SNRCMuMax, and bounds SNRParams.EtaMax when that is given:
	// a measuring knob (cmd/bench -snr-cmu-max), resolved into
	// SNRParams.EtaMax at New, so not state.
	SNRCMuMax float64
}

// Record is a told generation: the primary's record and the auxiliary's
// state after its generation.
type Record struct {
	cmaes.Record
	AuxMean     [3]float64 // u, the auxiliary's mean
	AuxSigma    float64
	AuxFeasible bool // whether 0.9 × AuxMean is the next θ (else the defaults)
	// Adapting is whether the run of the next generation self-adapts its
	// rates (gate.go); if not, the auxiliary is idle and θ is the defaults.
	Adapting bool
}

// ES is a self-CMA-ES. It is not safe for concurrent use.
type ES struct {
	init          string
	minLambda     int       // runs with λ ≥ minLambda self-adapt (gate.go)
	adaptRestarts bool      // and not only the first run
	snrOn         bool      // Config.SNR
	snrP          SNRParams // Config.SNRParams, resolved
	snr           *SNRState // the rule's state while the first run uses it (snr.go)
	snrWork       snrWork   // not state
	primary       *cmaes.ES
	aux           *cmaes.ES
	auxRuns       int // auxiliary CMA-ES started so far (one per primary run)

	// prev is the primary's update t−1 → t, replayed by h_t.
	prev    *cmaes.Step
	hasPrev bool

	work []*workspace // per-goroutine buffers of h_t; not state

	woodbury bool // NumericsWoodbury: h_t by the Woodbury identity (woodbury.go)
}

// PaperLambda is the population size of the paper's experiments.
const PaperLambda = 100

// DefaultLambda is the population size self-CMA-ES uses when none is given:
// CMA-ES's 4 + ⌊3 ln n⌋. (It was max(100, 4 + ⌊3 ln n⌋), the paper's λ,
// before the gate: a client who wants the paper's setting asks for λ =
// PaperLambda.)
func DefaultLambda(n int) int { return cmaes.DefaultLambda(n) }

// New returns a self-CMA-ES with the primary's first batch sampled. A zero
// cfg.CMA.Lambda selects DefaultLambda(n); it is left 0 for the primary,
// which resolves it to the same λ, so that BIPOP's populations come from
// pycma's unrounded popsize0 as a CMA-ES's do (cmaes, restart.go).
func New(cfg Config) (*ES, error) {
	switch cfg.Init {
	case "":
		cfg.Init = InitDefault
	case InitDefault, InitUniform:
	default:
		return nil, fmt.Errorf("selfcma: init %q, want %q or %q", cfg.Init, InitDefault, InitUniform)
	}
	minLambda, err := minLambdaOf(cfg.MinLambda, len(cfg.CMA.X0), cfg.SNR)
	if err != nil {
		return nil, err
	}
	if cmaes.IsLazy(cfg.CMA.Numerics) {
		// The signal-to-noise rule reads C^t from the primary's B and D:
		// self-CMA-ES keeps decomposing C at every update.
		return nil, fmt.Errorf("selfcma: numerics %d (lazy) is for CMA-ES only", cfg.CMA.Numerics)
	}
	woodbury := resolveNumerics(&cfg.CMA) // NumericsWoodbury (woodbury.go)
	p, err := cmaes.New(cfg.CMA)
	if err != nil {
		return nil, err
	}
	snrP := cfg.SNRParams
	if snrP.Alpha == 0 && snrP.Rates == SNRRatesBoth {
		snrP.Alpha = snrAlphaOf(p.Dim(), cfg.CMA.MirroredFirstRun)
	}
	if snrP.EtaMax == 0 && snrP.Rates != SNRRatesBoth || cfg.SNRCMuMax > 0 {
		etaMax := cmp.Or(snrP.EtaMax, SNREtaMaxFor(p.Params().Lambda, p.Dim()))
		snrP.EtaMax = SNREtaMaxOf(p.Params().CMu, cmp.Or(cfg.SNRCMuMax, SNRCMuMax), etaMax)
	}
	snrP = snrP.resolved()
	if err := snrP.check(); err != nil {
		return nil, fmt.Errorf("selfcma: %w", err)
	}
	s := &ES{init: cfg.Init, minLambda: minLambda, adaptRestarts: cfg.AdaptRestarts, snrOn: cfg.SNR, snrP: snrP, primary: p, woodbury: woodbury}
	if s.snrUsed() {
		s.snr = newSNR(p.Dim(), s.snrP.Eta0)
	}
	if err := s.startAux(); err != nil {
		return nil, err
	}
	return s, nil
}

// startAux starts a fresh auxiliary CMA-ES for the primary's current run
// (Algorithm 2, lines 3–4) and sets θ from its mean.
func (s *ES) startAux() error {
	seed := s.primary.Config().Seed
	u0 := make([]float64, 3)
	switch s.init {
	case InitUniform:
		r := rand.New(rand.NewPCG(seed, 0xa0c0000+uint64(s.auxRuns)))
		for i := range u0 {
			u0[i] = r.Float64()
		}
	default:
		h := s.primary.Params().Hyper()
		u0[0], u0[1], u0[2] = h.C1/Scale, h.CMu/Scale, h.Cc/Scale
	}
	aux, err := cmaes.New(cmaes.Config{
		X0: u0, Sigma0: AuxSigma0, Lambda: AuxLambda,
		Seed: seed ^ (0x9e3779b97f4a7c15 + uint64(s.auxRuns)),
		// The primary's numerics, kept by sessions of older versions too.
		Numerics: s.primary.Config().Numerics,
		// The auxiliary CMA-ES runs as long as the primary: no criterion.
		Termination: cmaes.Termination{TolFun: -1, TolX: -1, ConditionCov: -1, TolUpSigma: -1,
			NoEffectAxis: true, NoEffectCoord: true, NoStagnation: true, NoEqualFunVal: true,
			MaxFailedGenerations: -1},
	})
	if err != nil {
		return fmt.Errorf("selfcma: auxiliary CMA-ES: %w", err)
	}
	s.aux = aux
	s.auxRuns++
	s.hasPrev = false
	s.setTheta()
	return nil
}

// infeasibility is 0 for a feasible u, else the sum of the distances of its
// coordinates to [0, 1] plus max(0, u_1 + u_2 − 1).
func infeasibility(u []float64) float64 {
	var d float64
	for _, v := range u {
		d += math.Max(0, -v) + math.Max(0, v-1)
	}
	return d + math.Max(0, u[0]+u[1]-1)
}

// applyAuxMean sets the primary's θ for the next update to 0.9 × the
// auxiliary's mean, or to the defaults if that mean is infeasible
// (Algorithm 2, line 10). It reports whether the mean was feasible.
func (s *ES) applyAuxMean() bool {
	u := s.aux.Mean()
	h := s.primary.Params().Hyper()
	ok := infeasibility(u) == 0
	if ok {
		h = cmaes.Hyper{C1: Scale * u[0], CMu: Scale * u[1], Cc: Scale * u[2]}
	}
	if err := s.primary.SetHyper(h); err != nil {
		// A feasible u gives a valid θ; the defaults are valid.
		panic(fmt.Sprintf("selfcma: θ %+v rejected: %v", h, err))
	}
	return ok
}

// Ask returns the points of the primary's pending generation.
func (s *ES) Ask() [][]float64 { return s.primary.Ask() }

// Inject queues points for the primary's next batch (cmaes.ES.Inject). An
// injected point of generation t is one of its points like the others for
// h_t (Algorithm 3): h_t ranks it by the likelihood, under the replayed C',
// of the step the primary's update used, clipped to c_y = √n + 2n/(n + 2)
// in the Mahalanobis norm unless clip is false, so h_t stays in [1, λ].
func (s *ES) Inject(points [][]float64, clip bool) error { return s.primary.Inject(points, clip) }

// Injected returns the number of points waiting for the primary's next
// batch.
func (s *ES) Injected() int { return s.primary.Injected() }

// Tell takes the fitness of the points Ask returned (NaN for a failed
// evaluation) and runs one generation of self-CMA-ES (Algorithm 2, lines
// 8–10): the primary's update with the θ in use, one generation of the
// auxiliary CMA-ES on h_t when a previous update exists, and θ for the next
// update from the auxiliary's new mean.
func (s *ES) Tell(fitness []float64) (Record, error) {
	snr := s.snr != nil
	if snr {
		s.snrWork.before(s.primary.State())
	}
	rec, err := s.primary.Tell(fitness) // line 8
	if err != nil {
		return Record{}, err
	}
	cur := s.primary.LastStep()
	switch {
	case snr && !rec.Restarted && cur != nil:
		s.snr.observe(&s.snrWork, s.primary.State().C, s.snrP)
	case snr && rec.Restarted:
		s.snr, s.snrWork = nil, snrWork{} // restarts run at the defaults
	}
	if rec.Restarted && s.snrUsed() {
		s.snr = newSNR(s.primary.Dim(), s.snrP.Eta0) // a restart below SNRParams.RestartMaxLambda: a fresh rule
	}
	switch {
	case rec.Restarted:
		// A restart of the primary (IPOP, or BIPOP's small or large run)
		// restarts both strategies: the auxiliary starts at the new run's
		// defaults (its λ's c_1, c_μ, c_c).
		if err := s.startAux(); err != nil {
			return Record{}, err
		}
	case cur == nil || !s.Adapting():
		// No update (every evaluation failed), or a run below MinLambda:
		// nothing to replay next time.
		s.hasPrev = false
	default:
		if s.hasPrev && len(rec.Stop) == 0 {
			if err := s.auxGeneration(cur); err != nil { // line 9
				return Record{}, err
			}
		}
		if s.prev == nil {
			s.prev = new(cmaes.Step)
		}
		s.prev.CopyFrom(cur)
		s.hasPrev = true
	}
	out := Record{Record: rec, AuxSigma: s.aux.Sigma()}
	out.AuxFeasible = s.setTheta() // line 10
	out.Adapting = s.Adapting()
	copy(out.AuxMean[:], s.aux.Mean())
	return out, nil
}

// auxGeneration samples the auxiliary's 20 candidates, scores each by h_t
// (Algorithm 3) in parallel and tells the auxiliary −h (it minimizes).
func (s *ES) auxGeneration(cur *cmaes.Step) error {
	U := s.aux.Ask()
	vals := make([]float64, len(U))
	mu := s.primary.Params().Mu
	workers := min(runtime.GOMAXPROCS(0), len(U))
	for len(s.work) < workers {
		s.work = append(s.work, &workspace{})
	}
	var basis *replayBasis // nil: h_t by the Cholesky factor of C'
	if s.woodbury && slices.ContainsFunc(U, func(u []float64) bool { return infeasibility(u) == 0 }) {
		basis = newReplayBasis(s.prev, cur)
	}
	var wg sync.WaitGroup
	var next atomic.Int64
	for w := range workers {
		wg.Add(1)
		go func(ws *workspace) {
			defer wg.Done()
			ws.basis = basis
			// Each candidate's value depends on nothing but the candidate, so
			// the result does not depend on the schedule. The candidates are
			// handed out one at a time: an infeasible one costs nothing, and
			// a fixed split would leave a worker idle.
			for k := int(next.Add(1) - 1); k < len(U); k = int(next.Add(1) - 1) {
				vals[k] = objective(U[k], s.prev, cur, mu, ws)
			}
		}(s.work[w])
	}
	wg.Wait()
	if _, err := s.aux.Tell(vals); err != nil {
		return fmt.Errorf("selfcma: auxiliary tell: %w", err)
	}
	return nil
}

// objective is what the auxiliary CMA-ES minimizes: −h_t(0.9 u) for a
// feasible u, a penalty ranked below every feasible value otherwise.
func objective(u []float64, prev, cur *cmaes.Step, mu int, ws *workspace) float64 {
	if d := infeasibility(u); d > 0 {
		return penaltyFactor * d
	}
	h, ok := ws.h(cmaes.Hyper{C1: Scale * u[0], CMu: Scale * u[1], Cc: Scale * u[2]}, prev, cur, mu)
	if !ok {
		return penaltyFactor // C' not positive definite: cannot explain the points
	}
	return -h
}

// Status returns the primary's status (cmaes.ES.Status): what a caller
// reads between generations. The auxiliary's mean is AuxMean's.
func (s *ES) Status() cmaes.Status { return s.primary.Status() }

// StopNow ends the run at the caller's request (cmaes.ES.StopNow): the
// primary stops, and the auxiliary CMA-ES, which runs only within a tell,
// with it.
func (s *ES) StopNow() { s.primary.StopNow() }

// Init returns the auxiliary's initialization, InitDefault or InitUniform.
func (s *ES) Init() string { return s.init }

// Primary returns the primary CMA-ES (read it; do not tell it directly).
func (s *ES) Primary() *cmaes.ES { return s.primary }

// AuxMean returns the auxiliary's mean u and step size.
func (s *ES) AuxMean() ([]float64, float64) { return s.aux.Mean(), s.aux.Sigma() }
