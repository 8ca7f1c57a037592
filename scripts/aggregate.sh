#!/usr/bin/env bash
# Aggregate generations per second of many sessions, on the embedded bbolt
# store and on PostgreSQL with one and three servers, each with the CPU time
# per generation of the servers, of PostgreSQL (every process of the
# cluster) and of the load (cmd/load). Where the CPU goes is what decides
# the aggregate on a small machine: servers, database and load share it.
#
#	scripts/aggregate.sh                     # 64 sessions, CMA-ES n = 10, 10 s a case, 2 rounds
#	SESSIONS=16 DIM=40 DURATION=5s ROUNDS=1 scripts/aggregate.sh
#	LOADFLAGS=-sticky scripts/aggregate.sh   # extra flags of cmd/load
#
# It starts a throwaway PostgreSQL cluster from Debian's postgresql package
# (/usr/lib/postgresql/*/bin, or PG_BIN) in a temporary directory, as the
# postgres user when run as root, and removes everything at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

SESSIONS=${SESSIONS:-64}
DIM=${DIM:-10}
DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-2}
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$PG_BIN/initdb" ] || { echo "aggregate: no PostgreSQL (apt-get install postgresql, or set PG_BIN)" >&2; exit 1; }

tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	as_pg "$PG_BIN/pg_ctl" -w -D "$tmp/pg/data" stop >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
trap cleanup EXIT

go build -o "$tmp/server" ./cmd/server
go build -o "$tmp/load" ./cmd/load

mkdir -p "$tmp/pg"
[ "$(id -u)" = 0 ] && chown postgres "$tmp" "$tmp/pg"
port=$((20000 + RANDOM % 20000))
as_pg "$PG_BIN/initdb" -D "$tmp/pg/data" --auth=trust >/dev/null
as_pg "$PG_BIN/pg_ctl" -w -D "$tmp/pg/data" -l "$tmp/pg/log" \
	-o "-p $port -k $tmp/pg -c listen_addresses=127.0.0.1" start >/dev/null
pguser=$(if [ "$(id -u)" = 0 ]; then echo postgres; else id -un; fi)
url="postgres://$pguser@127.0.0.1:$port/postgres?sslmode=disable"

# ticks: CPU time (clock ticks, user + system) of the given processes.
ticks() {
	local t=0 s
	for p in "$@"; do
		s=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)
		t=$((t + s))
	done
	echo "$t"
}
hz=$(getconf CLK_TCK)

# pg_pids: the cluster's processes (the postmaster and its children).
pg_pids() {
	local pm
	pm=$(head -1 "$tmp/pg/data/postmaster.pid")
	echo "$pm" $(pgrep -P "$pm")
}

start_server() { # port db
	"$tmp/server" -addr "127.0.0.1:$1" -db "$2" >"$tmp/server-$1.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 100); do
		curl -fs "http://127.0.0.1:$1/healthz" >/dev/null 2>&1 && return
		sleep 0.1
	done
	echo "aggregate: the server on port $1 did not start:" >&2
	cat "$tmp/server-$1.log" >&2
	exit 1
}

# measure NAME URLS SERVER_PIDS...: one run of the load, one line.
measure() {
	local name=$1 urls=$2
	shift 2
	local servers=("$@")
	local pg0 sv0 pg1 sv1 out gens rate lt
	pg0=$(ticks $(pg_pids))
	sv0=$(ticks "${servers[@]}")
	local TIMEFORMAT='load-cpu %U %S'
	out=$( { time "$tmp/load" -url "$urls" -sessions "$SESSIONS" -dim "$DIM" \
		-duration "$DURATION" -next ${LOADFLAGS:-}; } 2>&1) || {
		echo "aggregate: $name: the load exited with $?:" >&2
		grep -v '^load-cpu' <<<"$out" >&2
	}
	pg1=$(ticks $(pg_pids))
	sv1=$(ticks "${servers[@]}")
	gens=$(sed -n 's/.*: \([0-9]*\) generations in.*/\1/p' <<<"$out")
	rate=$(sed -n 's/.* = \([0-9]*\) generations\/s.*/\1/p' <<<"$out")
	lt=$(awk '/^load-cpu/ {printf "%d", ($2 + $3) * 1e6}' <<<"$out")
	if [ -z "$gens" ] || [ "$gens" = 0 ]; then
		echo "aggregate: $name: the load failed:" >&2
		echo "$out" >&2
		exit 1
	fi
	local pgus=$(( (pg1 - pg0) * 1000000 / hz / gens ))
	[ "$name" = "bbolt, 1 server" ] && pgus=0
	printf '%-34s %6s gen/s   CPU µs per generation: servers %4d, postgres %4d, load %4d\n' \
		"$name" "$rate" $(( (sv1 - sv0) * 1000000 / hz / gens )) "$pgus" $(( lt / gens ))
}

echo "$SESSIONS sessions of CMA-ES, n = $DIM, $DURATION a case, tell?next=true; $(nproc) cores"
for round in $(seq "$ROUNDS"); do
	echo "round $round"
	start_server 18301 "$tmp/b.db"
	measure "bbolt, 1 server" http://127.0.0.1:18301 "${pids[-1]}"
	kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true
	rm -f "$tmp/b.db"

	start_server 18302 "$url"
	measure "postgres, 1 server" http://127.0.0.1:18302 "${pids[-1]}"
	kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true

	start_server 18303 "$url"; a=${pids[-1]}
	start_server 18304 "$url"; b=${pids[-1]}
	start_server 18305 "$url"; c=${pids[-1]}
	three=http://127.0.0.1:18303,http://127.0.0.1:18304,http://127.0.0.1:18305
	measure "postgres, 3 servers, in turn" "$three" "$a" "$b" "$c"
	LOADFLAGS="${LOADFLAGS:-} -sticky" measure "postgres, 3 servers, sticky" "$three" "$a" "$b" "$c"
	kill "$a" "$b" "$c"; wait "$a" "$b" "$c" 2>/dev/null || true
done
