#!/usr/bin/env python3
"""The Python side of cmd/mixedbench: CyberAgentAILab/cmaes 0.13.1's
CatCMAwM (for measuring only) on the problems of
internal/mixedfn, with its defaults; evaluations until the best value
reaches 1e-10, one JSON line per run in cmd/mixedbench's fields.

    python3 scripts/catcma_bench.py \
        -n 9,30 -seeds 15 > py.jsonl

The peer, for measuring only (never imported by the service): pip install cmaes==0.13.1 numpy
"""
import argparse
import json
import math
import sys

import numpy as np
from cmaes import CatCMAwM

TARGET = 1e-10
X_LOWER, X_UPPER = -1.0, 5.0
Z_VALUES = list(range(-2, 9))
K = 5


def com(c):
    return float(len(c) - np.sum(c[:, 0])) if c is not None else 0.0


def sphere_int_com(x, z, c):
    f = float(np.sum(x * x)) if x is not None else 0.0
    f += float(np.sum(z * z)) if z is not None else 0.0
    return f + com(c)


def ellipsoid_int_com(x, z, c):
    v = np.concatenate([a for a in (x, z) if a is not None])
    n = len(v)
    w = np.array([1000 ** (i / (n - 1)) for i in range(n)]) if n > 1 else np.ones(1)
    return float(np.sum((w * v) ** 2)) + com(c)


def problems(n):
    third, half = n // 3, n // 2
    return [
        (f"SphereIntCOM-{n}", third, third, n - 2 * third, sphere_int_com),
        (f"EllipsoidIntCOM-{n}", third, third, n - 2 * third, ellipsoid_int_com),
        (f"SphereCOM-{n}", half, 0, n - half, sphere_int_com),
        (f"SphereInt-{n}", half, n - half, 0, sphere_int_com),
    ]


def solve(name, nco, nin, nca, f, seed, budget):
    opt = CatCMAwM(
        x_space=[[X_LOWER, X_UPPER]] * nco if nco else None,
        z_space=[Z_VALUES] * nin if nin else None,
        c_space=[K] * nca if nca else None,
        seed=seed,
    )
    evals, best = 0, math.inf
    while evals < budget:
        sols = []
        for _ in range(opt.population_size):
            s = opt.ask()
            v = f(s.x, s.z, s.c)
            evals += 1
            best = min(best, v)
            if best <= TARGET:
                return evals, True, best
            sols.append((s, v))
        opt.tell(sols)
    return evals, False, best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", default="9,30")
    ap.add_argument("-seeds", type=int, default=15)
    ap.add_argument("-budget", type=int, default=0)
    ap.add_argument("-problem", default="")
    a = ap.parse_args()
    for d in a.n.split(","):
        n = int(d)
        for name, nco, nin, nca, f in problems(n):
            if a.problem not in name:
                continue
            budget = a.budget or 20000 * n
            for seed in range(a.seeds):
                evals, ok, best = solve(name, nco, nin, nca, f, seed, budget)
                print(json.dumps({"impl": "cmaes", "problem": name, "seed": seed,
                                  "evals": evals, "reached": ok, "best": best}), flush=True)


if __name__ == "__main__":
    main()
