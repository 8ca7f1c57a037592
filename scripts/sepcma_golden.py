#!/usr/bin/env python3
"""Golden vectors for internal/sepcma: CyberAgentAILab/cmaes 0.13.1's SepCMA
fed fixed samples and values, its state after each tell.

  PYTHONPATH=<dir holding the cmaes package> /usr/bin/python3 \
      scripts/sepcma_golden.py > internal/sepcma/testdata/golden.json

The peer is never imported from the repository: PYTHONPATH points at a
vendored copy. Each case draws its points with SepCMA's own ask (seeded),
evaluates a fixed function, tells, and records the points, the values and
m, sigma, diag(C), p_sigma, p_c after the tell; TestGolden tells the same
points and values to an ES and compares. Floats are written with repr, so
they read back exactly.
"""
import json, math, sys

import numpy as np
import cmaes
from cmaes import SepCMA


def ellipsoid(x):
    n = len(x)
    return float(sum(10 ** (6 * i / (n - 1)) * x[i] ** 2 for i in range(n)))


def linear(x):
    return float(np.sum(x))


def rosenbrock(x):
    return float(sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(len(x) - 1)))


CASES = [
    # name, n, lambda (None = default), sigma0, function, generations
    ("ellipsoid-n5", 5, None, 0.5, ellipsoid, 40),
    ("rosenbrock-n12-l20", 12, 20, 0.3, rosenbrock, 15),
    # a small sigma on a slope: |p_sigma| grows and h_sigma turns 0
    ("linear-n8", 8, None, 1e-3, linear, 15),
]


def run(name, n, lam, sigma0, fun, gens):
    rng = np.random.RandomState(7)
    x0 = rng.uniform(-2, 2, n)
    es = SepCMA(mean=x0.copy(), sigma=sigma0, seed=11, population_size=lam)
    out = {"name": name, "n": n, "lambda": es.population_size, "x0": x0.tolist(), "sigma0": sigma0,
           "params": {"mu_eff": es._mu_eff, "c1": es._c1, "cmu": es._cmu, "cc": es._cc,
                      "c_sigma": es._c_sigma, "d_sigma": es._d_sigma, "chi_n": es._chi_n,
                      "weights": es._weights.tolist()},
           "generations": []}
    for _ in range(gens):
        xs = [es.ask() for _ in range(es.population_size)]
        fs = [fun(x) for x in xs]
        es.tell(list(zip([x.copy() for x in xs], fs)))
        out["generations"].append({
            "x": [x.tolist() for x in xs], "f": fs,
            "mean": es._mean.tolist(), "sigma": float(es._sigma), "C": es._C.tolist(),
            "p_sigma": es._p_sigma.tolist(), "pc": es._pc.tolist()})
    return out


def main():
    doc = {"generator": "scripts/sepcma_golden.py", "peer": "cmaes " + cmaes.__version__ + " SepCMA",
           "cases": [run(*c) for c in CASES]}
    json.dump(doc, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
