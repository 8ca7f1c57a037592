#!/usr/bin/env python3
"""Time one pycma generation (ask + tell, sphere) at λ = 100.

The peer of `BenchmarkGeneration/n=N/λ=100` in internal/cmaes
(docs/performance.md, "Lazy decomposition"): `cma.CMAEvolutionStrategy(
n*[1], 1, {'popsize': 100})`, five generations to warm up, then the time
of k generations, best of `-repeats`. Run it with pycma 4.4.0 on the path
and OPENBLAS_NUM_THREADS set to 1 or 2:

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=DIR python3 scripts/pycma_generation.py 200 400 1000

prints one line per n: n, milliseconds per generation.
"""
import argparse
import time

import numpy as np
import cma


def per_generation(n, k, repeats, popsize):
    best = float("inf")
    for r in range(repeats):
        es = cma.CMAEvolutionStrategy(n * [1], 1, {"popsize": popsize, "seed": 1 + r, "verbose": -9})
        for _ in range(5):
            X = es.ask()
            es.tell(X, [float(np.dot(x, x)) for x in X])
        t0 = time.perf_counter()
        for _ in range(k):
            X = es.ask()
            es.tell(X, [float(np.dot(x, x)) for x in X])
        best = min(best, (time.perf_counter() - t0) / k)
    return best


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dims", nargs="+", type=int)
    p.add_argument("-k", type=int, default=20, help="generations timed per repeat")
    p.add_argument("-repeats", type=int, default=2)
    p.add_argument("-popsize", type=int, default=100)
    a = p.parse_args()
    for n in a.dims:
        print(n, "%.2f" % (1e3 * per_generation(n, a.k, a.repeats, a.popsize)), flush=True)


if __name__ == "__main__":
    main()
