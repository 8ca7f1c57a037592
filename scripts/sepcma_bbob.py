#!/usr/bin/env python3
"""The peers of internal/sepcma on BBOB, in cmd/sepbench's protocol:
CyberAgentAILab/cmaes 0.13.1's SepCMA and pycma 4.4.0's CMA_diagonal.

Protocol: x0 uniform in [-4, 4]^n, drawn afresh at every restart; sigma0 = 2;
a run succeeds when f - f_opt <= target, counted to the end of the
generation that reached it; the budget counts every evaluation of every
restart; at most 9 restarts, popsize doubled (IPOP). SepCMA has no restart
loop of its own: this script restarts it when its should_stop() says so.
pycma runs fmin2 with CMA_diagonal=True (all else its defaults: active
weights included). Evaluation counts do not depend on machine load.

  PYTHONPATH=<dir holding cmaes and cma> /usr/bin/python3 scripts/sepcma_bbob.py \
      -algorithms sepcma,pycma -functions 1,2,3,8,10 -dims 20,100 -instances 1-15

The peers are never imported from the repository: PYTHONPATH points at
vendored copies. pycma's bbobbenchmarks gives the functions; instance
numbers are COCO's legacy ones, as internal/bbob's. One JSON line per run
(function, dimension, instance, algorithm, evals_to_target, evaluations,
final_delta_f), as cmd/sepbench writes them; `go run ./cmd/sepbench -compare`
tabulates both.
"""
import argparse, json, math, warnings

warnings.filterwarnings("ignore")
import numpy as np
import cma
from cma import bbobbenchmarks as bb
from cmaes import SepCMA


def ints(s):
    out = []
    for part in s.split(","):
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b) + 1)) if b else [int(a)]
    return out


class Counter:
    def __init__(self, fun, fopt, target):
        self.fun, self.fopt, self.target = fun, fopt, target
        self.n, self.hit, self.best = 0, None, np.inf

    def batch(self, X):
        F = np.asarray(self.fun(np.asarray(X, dtype=float)), dtype=float).ravel()
        self.n += len(F)
        self.best = min(self.best, float(F.min()))
        if self.hit is None and self.best - self.fopt <= self.target:
            self.hit = self.n
        return F


def run_sepcma(c, dim, budget, seed, restarts):
    rs = np.random.RandomState(seed)
    lam0 = 4 + math.floor(3 * math.log(dim))
    for k in range(restarts + 1):
        es = SepCMA(mean=rs.uniform(-4, 4, dim), sigma=2.0, seed=seed + k, population_size=lam0 * 2 ** k)
        while c.n < budget and c.hit is None:
            X = [es.ask() for _ in range(es.population_size)]
            F = c.batch(X)
            es.tell(list(zip(X, F)))
            if es.should_stop():
                break
        if c.n >= budget or c.hit is not None:
            return


def run_pycma(c, dim, budget, seed, restarts):
    rs = np.random.RandomState(seed)
    opts = {"ftarget": c.fopt + c.target, "maxfevals": budget, "seed": seed, "CMA_diagonal": True,
            "verbose": -9, "verb_log": 0, "verb_disp": 0}
    cma.fmin2(None, lambda: rs.uniform(-4, 4, dim), 2.0, options=opts, restarts=restarts,
              incpopsize=2, parallel_objective=lambda X: list(c.batch(X)))


RUNNERS = {"sepcma": ("cmaes-sepcma-ipop", run_sepcma), "pycma": ("pycma-diagonal-ipop", run_pycma)}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-algorithms", default="sepcma,pycma")
    p.add_argument("-functions", type=ints, default=ints("1,2,3,8,10"))
    p.add_argument("-dims", type=ints, default=[20, 100])
    p.add_argument("-instances", type=ints, default=ints("1-15"))
    p.add_argument("-budget", type=float, default=1e4, help="evaluations per dimension")
    p.add_argument("-target", type=float, default=1e-8)
    p.add_argument("-restarts", type=int, default=9)
    p.add_argument("-seed", type=int, default=1)
    a = p.parse_args()
    for alg in a.algorithms.split(","):
        label, runner = RUNNERS[alg]
        for d in a.dims:
            for f in a.functions:
                for i in a.instances:
                    fun, fopt = bb.instantiate(f, iinstance=i)
                    c = Counter(fun, fopt, a.target)
                    runner(c, d, int(a.budget * d), 1000 * f + i + a.seed, a.restarts)
                    print(json.dumps({"function": f, "dimension": d, "instance": i, "algorithm": label,
                                      "evals_to_target": c.hit, "evaluations": c.n,
                                      "final_delta_f": c.best - fopt}), flush=True)


if __name__ == "__main__":
    main()
