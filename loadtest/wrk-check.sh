#!/bin/sh
# wrk-check.sh -- the load generator checks itself against wrk: both drive
# the same endpoint with the same number of keep-alive connections (wrk with
# one thread, like pathd-bench's one libuv loop), alternately, ROUNDS times
# each in one run, and the median requests per second are compared. The
# target is pathd-bench within 15% of wrk.
#
#   loadtest/wrk-check.sh URL [CONNECTIONS [SECONDS [ROUNDS]]]
#
# URL is the full endpoint, e.g. http://127.0.0.1:8080/healthz. Exit 0 when
# within 15%, 1 when not, 2 when wrk is missing (apt-get install wrk).
set -eu

url=${1:?usage: wrk-check.sh URL [CONNECTIONS [SECONDS [ROUNDS]]]}
conns=${2:-8}
secs=${3:-5}
rounds=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
bench=${PATHD_BENCH_BIN:-$here/../build/pathd-bench}
command -v wrk >/dev/null 2>&1 || { echo "wrk-check: wrk not installed" >&2; exit 2; }

base=$(printf '%s' "$url" | sed -E 's#^(http://[^/]+).*#\1#')
path=$(printf '%s' "$url" | sed -E 's#^http://[^/]+##')
[ -n "$path" ] || path=/

wrk_rps=""
our_rps=""
i=0
while [ $i -lt "$rounds" ]; do
    w=$(wrk -t1 -c"$conns" -d"${secs}s" "$url" | awk '/^Requests\/sec:/ {print $2}')
    o=$("$bench" http --url "$base" --get "$path" --connections "$conns" --duration "$secs" \
        --quiet --json | sed -E 's/.*"rps":([0-9.eE+-]+).*/\1/')
    echo "round $((i + 1)): wrk $w rps, pathd-bench $o rps"
    wrk_rps="$wrk_rps $w"
    our_rps="$our_rps $o"
    i=$((i + 1))
done

median() { printf '%s\n' $1 | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
mw=$(median "$wrk_rps")
mo=$(median "$our_rps")
awk -v w="$mw" -v o="$mo" -v c="$conns" 'BEGIN {
    r = o / w
    printf "median rps over the rounds, %d connections: wrk %.0f, pathd-bench %.0f, ratio %.3f\n", c, w, o, r
    if (r >= 0.85 && r <= 1.15) { print "within 15%: yes"; exit 0 }
    print "within 15%: NO"; exit 1
}'
