#!/usr/bin/env python3
"""Sets JSON-line results of cmd/mixedbench (impl "go") and of a Python
peer driver side by side: per problem, the median evaluations to target
(a run that missed counts as infinite), runs that reached it, and the
ratio go/peer. Standard library only.

    /usr/bin/python3 scripts/mixed_table.py go.jsonl py.jsonl
"""
import json
import math
import sys
from collections import defaultdict


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def main():
    runs = defaultdict(lambda: defaultdict(list))
    order = []
    for path in sys.argv[1:]:
        with open(path) as fh:
            for line in fh:
                r = json.loads(line)
                if r["problem"] not in order:
                    order.append(r["problem"])
                runs[r["problem"]][r["impl"]].append(r["evals"] if r["reached"] else math.inf)
    impls = sorted({i for p in runs.values() for i in p}, key=lambda i: (i != "go", i))
    head = "| problem | " + " | ".join(f"{i} median (reached)" for i in impls) + " | go / peer |"
    print(head)
    print("|" + "---|" * (len(impls) + 2))
    for p in order:
        cells, meds = [], []
        for i in impls:
            v = runs[p].get(i, [])
            m = median(v) if v else math.nan
            meds.append(m)
            ok = sum(1 for x in v if x < math.inf)
            cells.append(f"{m:g} ({ok}/{len(v)})")
        ratio = meds[0] / meds[1] if len(meds) > 1 and meds[1] else math.nan
        print(f"| {p} | " + " | ".join(cells) + f" | {ratio:.2f} |")


if __name__ == "__main__":
    main()
