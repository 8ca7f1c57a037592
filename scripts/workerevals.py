#!/usr/bin/env python3
"""A worker's evaluations through the Python client: claim one candidate,
tell its value, one process, 10-D CMA-ES, for SECONDS, as client.work
makes them: each tell claims the next candidate (tell?claim=true), one
request an evaluation (--two: a claim and a tell, as before); it prints
the evaluations a second and the client's CPU time an evaluation (which
a loaded machine moves less than the rate). The client keeps one
connection open (keep-alive); a client directory of an earlier version
(one connection a request) measures the change, against the same server.

  go run ./cmd/server -addr 127.0.0.1:8080 -db /tmp/evals.db &
  python3 scripts/workerevals.py http://127.0.0.1:8080 clients/python 10

With --optuna STORAGE it then runs Optuna's CmaEsSampler for SECONDS on
that storage (one process, the same 10-D sphere, one trial = one
evaluation) and prints its trials a second and the ratio: give the
server and Optuna the same PostgreSQL (Optuna needs python3-psycopg2):

  go run ./cmd/server -addr 127.0.0.1:8080 -db postgres://.../selfcma &
  python3 scripts/workerevals.py http://127.0.0.1:8080 clients/python 30 \\
      --optuna postgresql+psycopg2://.../optuna
"""

import argparse
import sys
import time


def ours(url, client_dir, seconds, two):
    sys.path.insert(0, client_dir)
    import selfcma

    client = selfcma.Client(url)
    es = client.create([1.0] * 10, 0.5, algorithm="cma-es", seed=1, population_size=10)
    n, c, t0, p0 = 0, None, time.monotonic(), time.process_time()
    while time.monotonic() - t0 < seconds:
        if c is None:
            c = es.claim(60, "w")
        if c is None:
            continue
        v = sum(x * x for x in c.x)
        if two:
            es.tell_claim(c, v)
            c = None
        else:
            c = es.tell_and_claim(c, v, 60)  # as client.work: the tell claims the next
        n += 1
    cpu = (time.process_time() - p0) / max(n, 1)
    client.close()
    return n / (time.monotonic() - t0), n, cpu


def optuna_rate(storage, seconds):
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(storage=storage, sampler=optuna.samplers.CmaEsSampler(seed=1),
                                study_name=f"workerevals-{time.time_ns()}")

    def f(trial):
        return sum(trial.suggest_float(f"x{i}", -5, 5) ** 2 for i in range(10))

    t0 = time.monotonic()
    study.optimize(f, timeout=seconds)
    n = len(study.trials)
    return n / (time.monotonic() - t0), n


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("url")
    ap.add_argument("client_dir")
    ap.add_argument("seconds", type=float)
    ap.add_argument("--two", action="store_true", help="claim and tell in two requests (before tell?claim=true)")
    ap.add_argument("--optuna", metavar="STORAGE", help="also run Optuna's CmaEsSampler on this storage URL")
    a = ap.parse_args()
    rate, n, cpu = ours(a.url, a.client_dir, a.seconds, a.two)
    print(f"selfcma worker: {n} evaluations in {a.seconds:.0f} s: {rate:.1f}/s (client CPU {cpu * 1e6:.0f} µs each)")
    if a.optuna:
        orate, on = optuna_rate(a.optuna, a.seconds)
        print(f"Optuna CmaEsSampler: {on} trials in {a.seconds:.0f} s: {orate:.1f}/s")
        print(f"ratio: {rate / orate:.1f}x")


if __name__ == "__main__":
    main()
