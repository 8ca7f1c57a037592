#!/usr/bin/env bash
# storebench.sh: one durable generation of self-CMA-ES at n = 100
# (λ = 100) on bbolt and on PostgreSQL, RUNS times (default 6), each run a
# fresh test binary with a fresh throwaway cluster, bbolt and PostgreSQL
# measured back to back so that each pair sees the same state of the
# machine. It prints each pair and its ratio (PostgreSQL / bbolt): over
# HTTP (tell?next=true, BenchmarkGenerationStores) and at the Manager
# (TellAsk, BenchmarkManagerGenerationStores). Needs Debian's postgresql,
# as the tests do.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-6}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go test -c -o "$bin/httpapi.test" ./internal/httpapi/
cd internal/httpapi
for i in $(seq "$runs"); do
	"$bin/httpapi.test" -test.run '^$' -test.benchtime 2s \
		-test.bench 'BenchmarkGenerationStores/self|BenchmarkManagerGenerationStores/self/n=100/store=/visit=tell-next' |
		awk -v run="$i" '
			/^Benchmark/ {
				what = ($1 ~ /Manager/) ? "manager, TellAsk" : "HTTP, tell?next=true"
				store = ($1 ~ /store=bbolt/) ? "bbolt" : "postgres"
				ms[what, store] = $3 / 1e6
				seen[what] = 1
			}
			END {
				for (w in seen)
					printf "run %d  %-22s bbolt %.2f ms  postgres %.2f ms  ratio %.2f\n",
						run, w, ms[w, "bbolt"], ms[w, "postgres"], ms[w, "postgres"] / ms[w, "bbolt"]
			}'
done
