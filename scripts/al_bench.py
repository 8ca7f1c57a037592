#!/usr/bin/env python3
"""The Python side of `cmd/mixedbench -constrained`: pycma 4.4.0's
CMAEvolutionStrategy (defaults: active CMA-ES) with ConstrainedFitnessAL
(defaults) on the constrained problems of internal/mixedfn (x0 as there,
sigma0 = 1, no termination criterion but the budget); evaluations until
the best feasible f is within 1e-8 of f*, one JSON line per run in
cmd/mixedbench's fields. It works in a temporary directory, so that
pycma's output files stay out of the repository.

    python3 scripts/al_bench.py \
        -n 10 -seeds 15 > py-al.jsonl

The peer, for measuring only (never imported by the service): pip install cma==4.4.0 numpy
"""
import argparse
import json
import math
import os
import tempfile
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import cma  # noqa: E402

TARGET = 1e-8


def problems(n):
    coef = np.array([10 ** (6 * i / (n - 1)) for i in range(n)])
    h = n // 2
    ones, zeros = [1.0] * n, [0.0] * n

    def sphere(x):
        return float(np.sum(x * x))

    def ellipsoid(x):
        return float(np.sum(coef * x * x))

    def linear(k):
        return lambda x: [float(x[i] + 1) for i in range(k)]

    r = math.sqrt(n) - 1
    return [
        ("sphere-1lin", sphere, linear(1), ones, 1.0),
        ("sphere-halflin", sphere, linear(h), ones, float(h)),
        ("ellipsoid-1lin", ellipsoid, linear(1), ones, 1.0),
        ("ellipsoid-halflin", ellipsoid, linear(h), ones, float(sum(coef[:h]))),
        ("sphere-in-ball", lambda x: float(np.sum((x - 1) ** 2)),
         lambda x: [float(np.sum(x * x)) - 1], zeros, r * r),
    ]


def solve(n, f, g, x0, fopt, seed, budget):
    cfun = cma.ConstrainedFitnessAL(f, g, logging=0, archives=False)
    es = cma.CMAEvolutionStrategy(x0, 1.0, {"seed": seed + 1, "verbose": -9, "verb_log": 0})
    evals, best, xbest = 0, math.inf, None
    while evals < budget:
        X = es.ask()
        vals = []
        for x in X:
            vals.append(cfun(x))
            evals += 1
            fx, gx = cfun.F[-1], cfun.G[-1]
            if all(v <= 0 for v in gx) and fx - fopt < best:
                best, xbest = fx - fopt, np.array(x)
            if best <= TARGET:
                return evals, True, best, all(v <= 0 for v in g(xbest))
        es.tell(X, vals)
        cfun.update(es)
    return evals, False, best, xbest is not None and all(v <= 0 for v in g(xbest))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", default="10")
    ap.add_argument("-seeds", type=int, default=15)
    ap.add_argument("-budget", type=int, default=0)
    ap.add_argument("-problem", default="")
    a = ap.parse_args()
    os.chdir(tempfile.mkdtemp(prefix="al_bench"))
    for d in a.n.split(","):
        n = int(d)
        for name, f, g, x0, fopt in problems(n):
            if a.problem not in name:
                continue
            for seed in range(a.seeds):
                evals, ok, best, feas = solve(n, f, g, x0, fopt, seed, a.budget or 10000 * n)
                print(json.dumps({"impl": "pycma", "problem": f"{name}-{n}", "seed": seed, "evals": evals,
                                  "reached": ok, "best": best, "feasible": bool(feas)}), flush=True)


if __name__ == "__main__":
    main()
