#!/usr/bin/env python3
"""A worker's evaluations through the Python client: claim one candidate,
tell its value (two requests), one process, 10-D CMA-ES, for SECONDS; it
prints the evaluations a second (issue 25: 390/s on bbolt before).

  go run ./cmd/server -addr 127.0.0.1:8080 -db /tmp/evals.db &
  python3 scripts/workerevals.py http://127.0.0.1:8080 clients/python 10
"""

import sys
import time


def main():
    url, client_dir, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    sys.path.insert(0, client_dir)
    import selfcma

    es = selfcma.Client(url).create([1.0] * 10, 0.5, algorithm="cma-es", seed=1, population_size=10)
    n, t0 = 0, time.monotonic()
    while time.monotonic() - t0 < seconds:
        c = es.claim(60, "w")
        if c is None:
            continue
        es.tell_claim(c, sum(v * v for v in c.x))
        n += 1
    dt = time.monotonic() - t0
    print(f"{n} evaluations in {dt:.1f} s: {n / dt:.0f}/s")


if __name__ == "__main__":
    main()
