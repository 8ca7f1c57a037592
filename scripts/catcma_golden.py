#!/usr/bin/env python3
"""Golden vectors for internal/catcma: CyberAgentAILab/cmaes 0.13.1's
CatCMAwM (the peer) run on fixed problems; every generation's
sampled batch (raw Gaussian samples and categories), the fitness told, and
the distribution after the tell. The Go test feeds the same batches and
fitness to its own update and compares.

    python3 scripts/catcma_golden.py \
        > internal/catcma/testdata/golden.json

The peer, for measuring only (never imported by the service): pip install cmaes==0.13.1 numpy
"""
import json

import numpy as np
from cmaes import CatCMAwM

GENS = 30

CASES = [
    # name, x_space, z_space, c_space; the x targets lie partly outside the
    # box, so that the penalty of the bounds acts; the z lists have different
    # lengths (padding) and a discretised real one.
    ("mixed", [[-1, 3], [-2, 2], [-1, 1.5]],
     [[-2, -1, 0, 1, 2, 3], [0.01, 0.1, 1], [0, 1, 2, 3, 4]], [3, 5, 2]),
    ("cont_int", [[-3, 3], [-1, 4]], [[0, 1, 2, 3, 4, 5, 6], [-3, -2, -1, 0, 1, 2, 3]], None),
    ("int_cat", None, [[0, 1, 2, 3], [-1, 0, 1]], [4, 3, 3]),
    ("cont_cat", [[-2, 2], [-2, 2], [-2, 2]], None, [2, 6]),
    ("cat", None, None, [3, 4, 5]),
]

XT = np.array([-1.5, 0.5, 1.2])
ZT = np.array([2.6, 0.5, 0.2])


def fitness(sol, k):
    f = 0.0
    if sol.x is not None:
        f += float(np.sum((sol.x - XT[: len(sol.x)]) ** 2))
    if sol.z is not None:
        f += float(np.sum((sol.z - ZT[: len(sol.z)]) ** 2))
    if sol.c is not None:
        idx = np.argmax(sol.c, axis=1)
        f += float(sum(1 for j, c in enumerate(idx) if c != j % 2))
    return f


def lst(a):
    return None if a is None else np.asarray(a, dtype=float).tolist()


def main():
    out = []
    for name, xs, zs, cs in CASES:
        opt = CatCMAwM(x_space=xs, z_space=zs, c_space=cs, seed=7)
        case = {"name": name, "x_space": xs, "z_space": zs, "c_space": cs,
                "lambda": opt.population_size, "gens": []}
        for g in range(GENS):
            sols = [opt.ask() for _ in range(opt.population_size)]
            v = [lst(s._v_raw) if s._v_raw is not None else [] for s in sols]
            c = [np.argmax(s.c, axis=1).tolist() if s.c is not None else [] for s in sols]
            f = [fitness(s, k) for k, s in enumerate(sols)]
            opt.tell(list(zip(sols, f)))
            rec = {"v": v, "cats": c, "f": f}
            if opt._use_gaussian:
                rec.update(mean=lst(opt._mean), sigma=float(opt._sigma),
                           A=lst(opt._A), psigma=lst(opt._p_sigma), pc=lst(opt._pc))
                rec["cov"] = np.asarray(opt._C).ravel().tolist()
            if opt._use_integer:
                rec.update(pmut=lst(opt._pmut), int_succ=[bool(b) for b in opt._int_succ])
            if opt._use_categorical:
                rec.update(q=[opt._q[i, :k].tolist() for i, k in enumerate(opt._K)],
                           Delta=float(opt._Delta), delta=float(opt._delta),
                           s=lst(opt._s), gamma=float(opt._gamma))
            case["gens"].append(rec)
        out.append(case)
    json.dump({"generator": "scripts/catcma_golden.py", "cases": out}, __import__("sys").stdout)


if __name__ == "__main__":
    main()
