#!/usr/bin/env python3
"""Optuna samplers on a mixed problem (issue 26): selfcma's SelfCmaSampler
(a CatCMA-with-margin session), Optuna's CmaEsSampler(with_margin=True)
and TPESampler, many seeds, a fixed number of trials. Prints one JSON line
per run: the sampler, the seed, the best value after each of the
checkpoints and the trials until the best value first reached each target.

    go build -o /tmp/selfcma-server ./cmd/server
    /tmp/selfcma-server -addr 127.0.0.1:18181 -db /tmp/bench.db &
    PYTHONPATH=clients/python /usr/bin/python3 scripts/optuna_mixed_bench.py \\
        -url http://127.0.0.1:18181 -seeds 15 -trials 300 > optuna-mixed.jsonl
    /usr/bin/python3 scripts/optuna_mixed_bench.py -table optuna-mixed.jsonl

-samplers catcmawm runs the reference CatCMAwM (cmaes 0.13.1, -vendor) on
the space SelfCmaSampler makes of the study, in process, for tuning.

The problem (minimum 0): the Rosenbrock function over (x0, x1, x2, n0, n1),
x_i floats in [-2, 2] and n_i integers in [-5, 5]; plus (log10 lr + 3)² with
lr a log float in [1e-5, 1e-1], (log10 k − 2)² with k a log int in
[1, 1000], 10 (s − 0.3)² with s a float of step 0.1 in [0, 1], and the
number of the categorical c0, c1 (4 choices each) not at their first
choice (COM of the CatCMA paper's functions). With -problem scaled, the
categories scale the whole: (1 + #wrong)(f + 1) − 1, so that a wrong
choice costs as much as the rest of the function does. With -problem
shifted, the optima are away from the centre of the box: the Rosenbrock
function of (x0, x1, x2, n0, n1) − 1 (minimum at 2), lr at 10^-4.5, k at
10^2.8, s at 0.9.

With -constrained, two constraints g ≤ 0 cut off the optima (com: f* =
2.5901, at n0 = n1 = 0, x = (0.5688, 0.3249, 0.1063), lr·k = 0.03, both
active; the trials-to columns count to f − f* there): g1 = x0 + x1 + x2 +
n0 + n1 − 1 (linear, floats and integers) and
g2 = lr·k − 0.03 (nonlinear: a log float times a log int). SelfCmaSampler
and TPESampler take them as constraints_func; CmaEsSampler (Optuna 3.1)
has none, so it ranks f + RHO·Σ max(0, g_i) (-penalty RHO). The score is
the best feasible f.
"""
import argparse
import json
import math
import statistics
import sys
import time

TARGETS = (1.0, 1e-1, 1e-2)
CHECKPOINTS = (100, 200, 300, 500, 1000)


PROBLEM = "com"
CONSTRAINED = False  # -constrained: g1, g2 of the docstring
PENALTY = None  # -penalty: CmaEsSampler's ρ with -constrained
CONSTRAINED_FSTAR = 2.5901  # f* of com with -constrained (the targets are on f − f* there)


def constraint_values(x, n, lr, k):
    """g1 (linear over the floats and the integers) and g2 (lr·k − 0.03)."""
    return [sum(x) + sum(n) - 1, lr * k - 0.03]


def constraints(trial):
    """Optuna's constraints_func: the values the objective stored."""
    return trial.user_attrs["g"]


def objective(trial, penalty=None):
    """f (the trial's value), with -constrained also g stored on the trial
    (user_attrs f and g); with penalty ρ the value is f + ρ Σ max(0, g_i)."""
    f = _objective(trial)
    if not CONSTRAINED:
        return f
    p = trial.params
    g = constraint_values([p[f"x{i}"] for i in range(3)], [p[f"n{i}"] for i in range(2)], p["lr"], p["k"])
    trial.set_user_attr("f", f)
    trial.set_user_attr("g", g)
    if penalty is not None:
        return f + penalty * sum(max(0.0, v) for v in g)
    return f


def _objective(trial):
    x = [trial.suggest_float(f"x{i}", -2, 2) for i in range(3)]
    n = [trial.suggest_int(f"n{i}", -5, 5) for i in range(2)]
    lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    k = trial.suggest_int("k", 1, 1000, log=True)
    s = trial.suggest_float("s", 0, 1, step=0.1)
    c = [trial.suggest_categorical(f"c{i}", ["a", "b", "c", "d"]) for i in range(2)]
    v = x + n
    f = sum(100 * (v[i + 1] - v[i] ** 2) ** 2 + (1 - v[i]) ** 2 for i in range(len(v) - 1))
    wrong = sum(ch != "a" for ch in c)
    rest = (math.log10(lr) + 3) ** 2 + (math.log10(k) - 2) ** 2 + 10 * (s - 0.3) ** 2
    if PROBLEM == "shifted":  # the optima away from the centre of the box
        u = [vi - 1 for vi in v]
        f = sum(100 * (u[i + 1] - u[i] ** 2) ** 2 + (1 - u[i]) ** 2 for i in range(len(u) - 1))
        rest = (math.log10(lr) + 4.5) ** 2 + (math.log10(k) - 2.8) ** 2 + 10 * (s - 0.9) ** 2
        return f + rest + wrong
    if PROBLEM == "scaled":  # the categories scale the whole function
        return (1 + wrong) * (f + rest + 1) - 1
    return f + rest + wrong


SIGMA0 = None  # SelfCmaSampler's sigma0 (-sigma0; None: its default)


def sampler(name, seed, url):
    import optuna
    cf = {"constraints_func": constraints} if CONSTRAINED else {}
    if name == "selfcma":
        from selfcma.optuna import SelfCmaSampler
        return SelfCmaSampler(url, seed=seed, sigma0=SIGMA0, **cf)
    if name == "cmaes-margin":  # no constraints_func in Optuna 3.1: the penalty instead
        return optuna.samplers.CmaEsSampler(seed=seed, with_margin=True)
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed, **cf)
    raise SystemExit(f"unknown sampler {name}")


def reference_values(seed, trials):
    """The values of the reference CatCMAwM (cmaes 0.13.1, on -vendor's path)
    on the space SelfCmaSampler makes of the study, with its σ0, without
    Optuna's loop or the server: the same algorithm (to 5e-14, docs/mixed.md)
    with numpy's random stream, fast enough to tune the sampler's settings.
    On should_stop it starts again from the centre with seed + 1 (the sampler
    restarts from the best x)."""
    import numpy as np
    import optuna
    from cmaes import CatCMAwM
    from selfcma.optuna import MIXED_SIGMA0, _Space
    probe = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    probe.optimize(objective, n_trials=1)
    space = _Space(probe.trials[0].distributions, mixed=True)
    sigma0 = MIXED_SIGMA0 if SIGMA0 is None else SIGMA0
    values, k = [], 0
    while len(values) < trials:
        es = CatCMAwM(x_space=list(zip(space.lower, space.upper)), z_space=space.int_lists,
                      c_space=[len(ch) for ch in space.cat_choices], sigma=sigma0, seed=seed + k)
        while len(values) < trials and not es.should_stop():
            sols = [es.ask() for _ in range(es.population_size)]
            ys = [objective(optuna.trial.FixedTrial(space.params(list(s.x), list(s.z), list(np.argmax(s.c, axis=1))))) for s in sols]
            values += ys
            es.tell(list(zip(sols, ys)))
        k += 1
    return values[:trials]


def run(name, seed, trials, url):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    t0 = time.monotonic()
    if name == "catcmawm":
        values = reference_values(seed, trials)
    else:
        tag = "-constrained" if CONSTRAINED else ""
        study = optuna.create_study(sampler=sampler(name, seed, url), study_name=f"{PROBLEM}{tag}-{name}-{seed}")
        penalty = PENALTY if CONSTRAINED and name == "cmaes-margin" else None
        study.optimize(lambda t: objective(t, penalty), n_trials=trials)
        values = [feasible_value(t) for t in study.trials]
    best, curve = math.inf, []
    for v in values:
        if v is not None:
            best = min(best, v)
        curve.append(best)
    fstar = CONSTRAINED_FSTAR if CONSTRAINED and PROBLEM == "com" else 0.0  # targets on f − f*
    reach = {str(g): next((i + 1 for i, b in enumerate(curve) if b - fstar <= g), None) for g in TARGETS}
    return {"problem": PROBLEM + ("-constrained" if CONSTRAINED else ""), "sampler": name, "seed": seed, "trials": trials, "seconds": round(time.monotonic() - t0, 1),
            "best": {str(c): curve[c - 1] for c in CHECKPOINTS if c <= trials}, "trials_to": reach}


def feasible_value(t):
    """The trial's f; with -constrained, None unless every g_i ≤ 0 (the
    best value is then the best feasible f)."""
    if t.value is None or not CONSTRAINED:
        return t.value
    g = t.user_attrs.get("g")
    return t.user_attrs["f"] if g is not None and all(v <= 0 for v in g) else None


def table(path):
    runs = {}
    for line in open(path):
        r = json.loads(line)
        runs.setdefault(r["sampler"], []).append(r)
    cps = sorted({int(c) for rs in runs.values() for r in rs for c in r["best"]})
    print("| sampler | seeds | " + " | ".join(f"median best after {c}" for c in cps) + " | "
          + " | ".join(f"median trials to {g:g} (reached)" for g in TARGETS) + " |")
    print("|" + "---|" * (2 + len(cps) + len(TARGETS)))
    for name, rs in runs.items():
        cells = [f"{statistics.median(r['best'][str(c)] for r in rs):.3g}" for c in cps]
        for g in TARGETS:
            v = [r["trials_to"][str(g)] or math.inf for r in rs]
            n = sum(x != math.inf for x in v)
            m = statistics.median(v)
            cells.append(f"{'> ' + str(rs[0]['trials']) if m == math.inf else int(m) if m == int(m) else m} ({n}/{len(rs)})")
        print(f"| {name} | {len(rs)} | " + " | ".join(cells) + " |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-url", default="http://127.0.0.1:8080")
    ap.add_argument("-seeds", type=int, default=15)
    ap.add_argument("-first", type=int, default=0, help="the first seed (seeds first, first+1, ...)")
    ap.add_argument("-trials", type=int, default=300)
    ap.add_argument("-samplers", default="selfcma,cmaes-margin,tpe")
    ap.add_argument("-problem", default="com", choices=("com", "scaled", "shifted"))
    ap.add_argument("-constrained", action="store_true",
                    help="add the constraints g1, g2 (the docstring); score the best feasible f")
    ap.add_argument("-penalty", type=float, default=1000.0,
                    help="CmaEsSampler's ρ with -constrained (it has no constraints_func)")
    ap.add_argument("-sigma0", type=float, help="SelfCmaSampler's sigma0 (default: its own), also catcmawm's")
    ap.add_argument("-vendor", help="a directory holding CyberAgentAILab/cmaes 0.13.1 (needed by -samplers catcmawm)")
    ap.add_argument("-table", help="print the table of a results file instead")
    a = ap.parse_args()
    global PROBLEM, SIGMA0, CONSTRAINED, PENALTY
    PROBLEM, SIGMA0, CONSTRAINED, PENALTY = a.problem, a.sigma0, a.constrained, a.penalty
    if a.table:
        return table(a.table)
    if "catcmawm" in a.samplers.split(","):
        if a.constrained:
            ap.error("-samplers catcmawm runs without constraints")
        if not a.vendor:
            ap.error("-samplers catcmawm needs -vendor DIR: a directory holding cmaes 0.13.1")
        sys.path.insert(0, a.vendor)
    for seed in range(a.first, a.first + a.seeds):
        for name in a.samplers.split(","):
            print(json.dumps(run(name, seed, a.trials, a.url)), flush=True)


if __name__ == "__main__":
    sys.exit(main())
