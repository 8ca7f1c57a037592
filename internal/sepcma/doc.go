// Package sepcma implements sep-CMA-ES: CMA-ES with a diagonal covariance
// matrix, after R. Ros and N. Hansen, "A Simple Modification in CMA-ES
// Achieving Linear Time and Space Complexity", PPSN X, LNCS 5199, 2008,
// pp. 296–305 (inria-00287367). C is restricted to its diagonal, so each
// coordinate is sampled independently: a sample costs O(n), an update
// O(μn), and the state holds O(n) numbers besides the pending λ×n batch.
// Because the model has n parameters instead of n(n+1)/2, its learning
// rates are larger: the paper's c_cov times (n + 2)/3 (Params).
//
// The update is that of CyberAgentAILab/cmaes 0.13.1's SepCMA
// (cmaes/_sepcma.py), the implementation it is measured against, line for
// line; its equation numbers are those of Hansen's tutorial
// (arXiv:1604.00772v2), which the comments cite as "tutorial eq. N". Its
// golden vectors (testdata/golden.json, scripts/sepcma_golden.py) check the
// update on the same samples and values. Where it departs from the paper,
// Params says how and RatesPaper gives the paper's rates.
//
// Termination criteria, IPOP and BIPOP restarts mirror internal/cmaes
// (docs/algorithm.md §1) with C's diagonal in place of its
// eigendecomposition; their configuration types are cmaes's. So are the
// bounds (cmaes's transformation, pycma's BoxConstraintsLinQuadTransformation)
// and the injected points (Hansen 2011, arXiv:1110.4181; inject.go), the
// Mahalanobis norm of a clipped step taken with the diagonal C. There is no
// active update (SepCMA has none; pycma's CMA_diagonal has one).
//
// The ES is used ask/tell like cmaes.ES. Its whole state is plain exported
// data (State), encoded exactly by internal/enginecodec (AppendSepCMA,
// DecodeSepCMA), so a restored ES continues bit for bit. The package is
// deterministic given its state and the told values; it imports no HTTP,
// JSON, storage, logging or codec.
package sepcma
