#!/usr/bin/env python3
"""Times one generation of CyberAgentAILab/cmaes 0.13.1's SepCMA at the
default population size, as internal/sepcma's BenchmarkGeneration times
ours: the lambda points asked, the sphere evaluated, tell.

  PYTHONPATH=<dir holding the cmaes package> /usr/bin/python3 \
      scripts/sepcma_timing.py -dims 10000,100000 -generations 20 -repeats 5

Prints, per dimension, the median and the minimum over the repeats of the
mean time of a generation (after two generations of warm-up), and the
numpy BLAS configuration (SepCMA's generation uses no BLAS: elementwise
numpy only).
"""
import argparse, math, statistics, time

import numpy as np
from cmaes import SepCMA


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-dims", default="10000,100000")
    p.add_argument("-generations", type=int, default=20)
    p.add_argument("-repeats", type=int, default=5)
    a = p.parse_args()
    print("numpy", np.__version__)
    for n in [int(d) for d in a.dims.split(",")]:
        es = SepCMA(mean=np.ones(n), sigma=0.5, seed=1)
        lam = es.population_size

        def generation():
            X = [es.ask() for _ in range(lam)]
            es.tell([(x, float(x @ x)) for x in X])

        for _ in range(2):
            generation()
        per = []
        for _ in range(a.repeats):
            t = time.perf_counter()
            for _ in range(a.generations):
                generation()
            per.append((time.perf_counter() - t) / a.generations)
        print(f"n={n} lambda={lam} median {statistics.median(per) * 1e3:.2f} ms/generation, min {min(per) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
