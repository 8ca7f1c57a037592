// Package cmaes implements the (μ/μ_w, λ)-CMA-ES exactly as Algorithm 1 of
// Loshchilov, Schoenauer, Sebag and Hansen, "Maximum Likelihood-based Online
// Adaptation of Hyper-parameters in CMA-ES", PPSN XIII, 2014
// (arXiv:1406.2623), with the open points settled in docs/algorithm.md §1:
// no active update, no (1 − h_σ) correction, an eigendecomposition of C every
// generation. Hansen's tutorial (arXiv:1604.00772v2) gives the background;
// the numerical safeguards and the termination criteria follow Hansen's
// cmaes.m and the BIPOP-CMA-ES paper (GECCO 2009).
//
// The ES is used ask/tell: New samples the first batch; Ask hands it out
// (the same points until it is told); Tell ranks the told values, updates the
// distribution, checks termination, restarts (IPOP) if configured, and samples
// the next batch. The whole state, random stream included, is plain data
// (State; Restore), so a restored ES continues bit for bit; its binary
// encoding lives in internal/enginecodec.
//
// External points may be injected (ES.Inject, Config.Inject for the first
// batch; Hansen, "Injecting external solutions into CMA-ES",
// arXiv:1110.4181, 2011): they replace the first candidates of the next
// batch, are handed out as given, and enter the update with their step
// clipped to c_y = √n + 2n/(n + 2) in the Mahalanobis norm, as pycma does
// (ES.Inject).
//
// Besides the criteria of the BIPOP-CMA-ES paper, a run stops on
// failed_evaluations after Termination.MaxFailedGenerations (default 10)
// consecutive generations whose every value was NaN, without an IPOP
// restart: an objective that always fails would otherwise run forever.
//
// For self-CMA-ES (Algorithm 3) an ES keeps what its last update used (a
// Step) so the update can be replayed with other hyper-parameters, and the
// hyper-parameters c1, cmu, cc can be set before every Tell.
//
// The package is deterministic given its state, its random stream and the
// told values; it imports no HTTP, JSON, storage or logging.
package cmaes
