// Package catcma implements CatCMA with margin (CatCMAwM): Hamano, Nomura,
// Saito, Uchida, Shirakawa, "CatCMA with Margin: Stochastic Optimization for
// Continuous, Integer, and Categorical Variables", GECCO 2025
// (arXiv:2504.07884v5), as its reference implementation, CyberAgentAILab/cmaes
// 0.13.1 `cmaes/_catcmawm.py`, states it, line for line: the joint
// distribution of a Gaussian over the continuous and integer coordinates and
// independent categorical distributions, the integer centering and the margin
// correction of the integer coordinates, the ASNG update of the categorical
// parameters (Akimoto et al., ICML 2019) with its margin, the penalty for
// continuous box bounds (Hansen et al., IEEE TEC 2009), the learning rates and
// the initialisation. CMA-ES with margin (Hamano et al., GECCO 2022) is the
// case without categories.
//
// The optimizer is used ask/tell: New samples the first batch; Ask hands it
// out (the same points until it is told); Tell ranks the told values,
// updates the distribution and samples the next batch. The whole state, the
// random stream (math/rand/v2 PCG) and the pending batch included, is the
// plain exported State; internal/enginecodec encodes it exactly with a
// version and Restore rebuilds the optimizer from it, so a restored
// optimizer continues bit for bit. For a service the State also counts the
// evaluations, keeps the best candidate told and the termination (a
// budget, a target, the reference's should_stop; StopNow), track.go.
//
// Departures from the reference, each for a service that must not fail on
// request data: a NaN fitness ranks worst (+Inf); a categorical sample whose
// uniform number falls past the rounded cumulative sum takes the last
// category (the reference would leave its one-hot row empty).
//
// The package imports math, math/rand/v2 and gonum only; it is
// deterministic given its state and the told values.
package catcma
