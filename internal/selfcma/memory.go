package selfcma

import (
	"runtime"

	"github.com/selfcma/selfcma/internal/cmaes"
)

// HeldBytes is about the bytes a self-CMA-ES of dimension n and population
// size λ holds in memory, an upper bound as cmaes.HeldBytes is: the
// primary's (cmaes.HeldBytes), the auxiliary's, and, in a run that
// self-adapts (adapting), what h_t needs (Algorithm 3): the kept step of
// the update t−1 → t (C^t, C_μ^t and for active CMA-ES C_μ^-, its λ
// points) and per goroutine that scores candidates (min(GOMAXPROCS, λ_h))
// the replayed C', its Cholesky panels (n²/2) and the λ×n solve. A run
// that does not self-adapt holds no step and no workspace (the buffers of
// an earlier run that did are kept: adapting is then true for the bound).
func HeldBytes(n, lambda int, active, bounded bool, numerics int, adapting bool) int64 {
	b := cmaes.HeldBytes(n, lambda, active, bounded, numerics) + cmaes.HeldBytes(3, AuxLambda, false, false, numerics)
	if !adapting {
		return b
	}
	nn, ln := int64(n)*int64(n), int64(lambda)*int64(n)
	step := 2 * nn
	if active {
		step += nn
	}
	step += ln
	workers := int64(min(runtime.GOMAXPROCS(0), AuxLambda))
	return b + 8*(step+workers*(nn+nn/2+ln+2*int64(n+lambda)))
}

// HeldBytes is what the self-CMA-ES holds in memory now (HeldBytes of its
// current run; adapting if the run self-adapts or an earlier one left its
// buffers).
func (s *ES) HeldBytes() int64 {
	p, cfg := s.primary.Params(), s.primary.Config()
	adapting := s.Adapting() || s.prev != nil || len(s.work) > 0
	b := HeldBytes(p.N, p.Lambda, p.Active, cfg.Bounds != nil, cfg.Numerics, adapting)
	if s.snr != nil {
		b += snrHeldBytes(p.N)
	}
	if s.woodbury && adapting {
		b += woodburyHeldBytes(p.N, p.Lambda)
	}
	return b
}

// woodburyHeldBytes bounds what h_t by the Woodbury identity adds at
// dimension n and population size λ (woodbury.go): the generation's basis
// (C^{t−1}'s factor, the n × (m + λ) solve, G, H and the eigenbasis, m ≤
// λ + 2) and per goroutine the k × k and k × λ buffers (k < m).
func woodburyHeldBytes(n, lambda int) int64 {
	nf, m, l := int64(n), int64(lambda)+2, int64(lambda)
	workers := int64(min(runtime.GOMAXPROCS(0), AuxLambda))
	return 8 * (nf*nf + nf*(m+l) + m*(m+l) + m*m + m*l + 2*m*m + m*l + workers*(m*m+m*l+3*m+l))
}

// snrHeldBytes is what the signal-to-noise rule holds at dimension n
// (snr.go): E's upper triangle, and C^t, B, D and three n×n buffers
// while a generation is told.
func snrHeldBytes(n int) int64 {
	nn := int64(n) * int64(n)
	return 8 * (nn/2 + int64(n) + 5*nn + int64(n))
}

// HeldBytes is HeldBytes of the first run of a self-CMA-ES of this
// configuration: what a create takes.
func (cfg Config) HeldBytes() int64 {
	n, lambda := len(cfg.CMA.X0), cfg.CMA.Lambda
	if lambda == 0 {
		lambda = DefaultLambda(n)
	}
	minLambda, err := minLambdaOf(cfg.MinLambda, n, cfg.SNR)
	adapting := err == nil && lambda >= minLambda
	c := cfg.CMA
	woodbury := resolveNumerics(&c) // the primary's numerics
	b := HeldBytes(n, lambda, c.Active, c.Bounds != nil, c.Numerics, adapting)
	if cfg.SNR && !adapting && n <= SNRMaxDim {
		b += snrHeldBytes(n)
	}
	if woodbury && adapting {
		b += woodburyHeldBytes(n, lambda)
	}
	return b
}
