#!/usr/bin/env python3
"""pycma 4.4.0 on BBOB noiseless instances, for side-by-side comparisons.

Protocol: x0 uniform in [-4, 4]^n, drawn afresh at every restart (pycma's
practice with a callable x0); sigma0 = 2; a run succeeds when f - f_opt <=
target; the budget counts every evaluation of every restart; at most 9
restarts, popsize doubled (IPOP) or BIPOP; all else pycma's defaults (active
CMA). Evaluation counts do not depend on machine load.

  pip install cma==4.4.0 numpy   # pycma, for measuring only: never imported by the service
  python3 scripts/pycma_bbob.py -functions 1,8,15 \
      -dims 10 -instances 1,2,3 -restarts bipop [-budget 10000] [-target 1e-8] [-per-run]

pycma's own bbobbenchmarks module gives the functions; instance numbers are
COCO's legacy ones, as internal/bbob's. docs/bbob/pycma-bipop-*.jsonl were
made with it (docs/algorithm.md §5).

One JSON line per run: function, dimension, instance, algorithm,
evals_to_target (null when missed), evaluations, final_delta_f.
"""
import argparse, json, sys, warnings

warnings.filterwarnings("ignore")
import numpy as np
import cma
from cma import bbobbenchmarks as bb


def ints(s):
    out = []
    for part in s.split(","):
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b) + 1)) if b else [int(a)]
    return out


def run(f, dim, inst, restarts, budget, target, seed, per_run=False):
    fun, fopt = bb.instantiate(f, iinstance=inst)
    st = {"n": 0, "hit": None, "best": np.inf}
    runs, cur = [], {"es": None, "start": 0, "told": 0}

    def end_run(es, evals):
        runs.append({"lambda": es.popsize, "sigma0": es.sigma0,
                     "evaluations": evals - cur["start"], "stop": list(es.stop().keys())})
        cur["start"] = evals

    def callback(es):
        # fmin2 calls it after every generation: a new es is a new run,
        # and the one before ended with the evaluations told until then
        # (an evaluation between two runs counts to the next)
        if cur["es"] is not None and es is not cur["es"]:
            end_run(cur["es"], cur["told"])
        cur["es"], cur["told"] = es, st["n"]

    def batch(X):
        F = np.asarray(fun(np.asarray(X, dtype=float)), dtype=float).ravel()
        st["n"] += len(F)
        st["best"] = min(st["best"], float(F.min()))
        # counted to the end of the generation that reached the target, as
        # cmd/bench counts
        if st["hit"] is None and st["best"] - fopt <= target:
            st["hit"] = st["n"]
        return list(F)

    s = 1000 * f + inst + seed
    rs = np.random.RandomState(s)
    np.random.seed(s)  # BIPOP draws its regime from numpy's global stream
    opts = {"ftarget": fopt + target, "maxfevals": budget * dim, "seed": s,
            "verbose": -9, "verb_log": 0, "verb_disp": 0}
    cma.fmin2(None, lambda: rs.uniform(-4, 4, dim), 2.0, options=opts,
              restarts=9 if restarts != "none" else 0, incpopsize=2,
              bipop=(restarts == "bipop"), parallel_objective=batch,
              callback=callback if per_run else None)
    out = {"function": f, "dimension": dim, "instance": inst,
           "algorithm": "pycma-" + restarts, "evals_to_target": st["hit"],
           "evaluations": st["n"], "final_delta_f": st["best"] - fopt}
    if per_run and cur["es"] is not None:
        end_run(cur["es"], st["n"])
        out["per_run"] = runs
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-functions", type=ints, default=ints("1-24"))
    p.add_argument("-dims", type=ints, default=[10])
    p.add_argument("-instances", type=ints, default=ints("1-5"))
    p.add_argument("-restarts", choices=["none", "ipop", "bipop"], default="bipop")
    p.add_argument("-budget", type=float, default=1e4, help="evaluations per dimension")
    p.add_argument("-target", type=float, default=1e-8)
    p.add_argument("-seed", type=int, default=1)
    p.add_argument("-per-run", action="store_true",
                   help='each run\'s restarts too ("per_run": lambda, sigma0, evaluations, stop), as cmd/bench -per-run')
    a = p.parse_args()
    for d in a.dims:
        for f in a.functions:
            for i in a.instances:
                print(json.dumps(run(f, d, i, a.restarts, a.budget, a.target, a.seed, a.per_run)), flush=True)


if __name__ == "__main__":
    sys.exit(main())
