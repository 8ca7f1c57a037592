#!/usr/bin/env python3
"""Golden vectors for internal/constraints: pycma 4.4.0's
ConstrainedFitnessAL (the peer, with its defaults) driven by pycma's
CMA-ES on constrained problems; every iteration's f and g values, the AL
values returned for them, and the coefficients after the update. The Go
test feeds the same f and g and compares.

    python3 scripts/al_golden.py \
        > internal/constraints/testdata/golden.json

The peer, for measuring only (never imported by the service): pip install cma==4.4.0 numpy
"""
import json
import warnings

import numpy as np
import cma

warnings.filterwarnings("ignore")
ITERS = 120

CASES = [
    # name, n, f, g, x0, sigma0
    ("sphere_1lin", 5, lambda x: float(np.sum(x ** 2)), lambda x: [x[0] + 1], 5 * [1.0], 1.0),
    ("ellipsoid_halflin", 6,
     lambda x: float(np.sum(10 ** (6 * np.arange(6) / 5) * x ** 2)),
     lambda x: [x[i] + 1 for i in range(3)], 6 * [1.0], 1.0),
    ("ball", 4, lambda x: float(np.sum((x - 1) ** 2)), lambda x: [float(np.sum(x ** 2)) - 1], 4 * [0.0], 1.0),
]


def main():
    out = []
    for name, n, f, g, x0, s0 in CASES:
        cfun = cma.ConstrainedFitnessAL(f, g, dimension=n, logging=0, archives=False)
        es = cma.CMAEvolutionStrategy(x0, s0, {"verbose": -9, "verb_log": 0, "seed": 3})
        iters = []
        for _ in range(ITERS):
            X = es.ask()
            al = [cfun(x) for x in X]
            F, G = list(cfun.F), [list(map(float, gg)) for gg in cfun.G]
            es.tell(X, al)
            cfun.update(es)
            a = cfun.al
            iters.append({"f": F, "g": G, "al": [float(v) for v in al],
                          "lam": None if a.lam is None else a.lam.tolist(),
                          "mu": None if a.mu is None else a.mu.tolist()})
        out.append({"name": name, "n": n, "m": len(g(np.asarray(x0))), "iters": iters})
    json.dump({"generator": "scripts/al_golden.py", "cases": out}, __import__("sys").stdout)


if __name__ == "__main__":
    main()
