#!/bin/sh
# bench-wrk.sh -- the HTTP throughput target of issue 5, measured with wrk:
# GET /healthz and GET /v1/maps/{id}/path (HPA*, or astar where the build
# has no HPA*) on a 512x512 Moving AI map, same server, same settings, one
# after the other; prints both rates, the ratio and the error counts.
#
#   scripts/bench-wrk.sh [path/to/pathd]
# Environment: MAP (default Boston_0_512), ALGO (hpa), CACHE (false: every
# request searches; true: repeated pairs come from the path cache),
# CONNS (32), THREADS (2), DURATION (10s), WORKERS (2), IO_THREADS (2),
# REPEAT (3: healthz and path runs alternate, medians are reported, so a
# burst of load from elsewhere on the machine does not decide the ratio),
# PAIRS (queries taken from the map's .scen file, 2000), MAX_LEN (only
# scenarios whose optimal length is at most this: short queries isolate the
# HTTP + pool overhead from the search), PATHD_BENCH_DIR.
set -eu

BIN=${1:-build/pathd}
DIR=${PATHD_BENCH_DIR:-$(cd "$(dirname "$0")/.." && pwd)/../shared/benchmarks/movingai}
MAP=${MAP:-Boston_0_512}
ALGO=${ALGO:-hpa}
CACHE=${CACHE:-false}
CONNS=${CONNS:-32}
THREADS=${THREADS:-2}
DURATION=${DURATION:-10s}
WORKERS=${WORKERS:-2}
IO_THREADS=${IO_THREADS:-2}
NPAIRS=${PAIRS:-2000}
REPEAT=${REPEAT:-3}
MAX_LEN=${MAX_LEN:-1e9}
LUA=$(cd "$(dirname "$0")/.." && pwd)/loadtest/wrk/path.lua

command -v wrk >/dev/null || { echo "bench-wrk: wrk is not installed" >&2; exit 1; }
command -v curl >/dev/null || { echo "bench-wrk: curl is not installed" >&2; exit 1; }
[ -f "$DIR/$MAP.map" ] || { echo "bench-wrk: $DIR/$MAP.map not found (set PATHD_BENCH_DIR)" >&2; exit 1; }

TMP=$(mktemp -d)
CACHE_ENTRIES=4096
[ "$CACHE" = true ] || CACHE_ENTRIES=0
"$BIN" --port 0 --workers "$WORKERS" --io-threads "$IO_THREADS" --queue 1024 \
    --cache-entries "$CACHE_ENTRIES" --max-connections 4096 > "$TMP/out" 2> "$TMP/err" &
PID=$!
trap 'kill -TERM $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
i=0
until grep -q listening "$TMP/out" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 100 ] || { cat "$TMP/err" >&2; exit 1; }; sleep 0.05
done
PORT=$(sed -n 's/.*listening on [^:]*:\([0-9]*\).*/\1/p' "$TMP/out")
URL="http://127.0.0.1:$PORT"

curl -fsS -o /dev/null -X PUT "$URL/v1/maps/bench" -H 'Content-Type: text/x-movingai-map' \
    --data-binary "@$DIR/$MAP.map"
awk -v m="$MAX_LEN" 'NR > 1 && $9 <= m + 0 { print $5, $6, $7, $8 }' "$DIR/$MAP.map.scen" |
    head -n "$NPAIRS" > "$TMP/pairs"
set -- $(head -n 1 "$TMP/pairs")
CODE=$(curl -s -o "$TMP/probe" -w '%{http_code}' "$URL/v1/maps/bench/path?start=$1,$2&goal=$3,$4&algorithm=$ALGO")
if [ "$CODE" != 200 ]; then
    echo "bench-wrk: $ALGO is not served by this build ($CODE: $(cat "$TMP/probe")); using astar" >&2
    ALGO=astar
fi

run() { # label, wrk args...; prints one line and appends the rate to $TMP/label.rps
    label=$1; shift
    wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency "$@" > "$TMP/$label.txt" 2>&1
    rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$TMP/$label.txt")
    non2xx=$(sed -n 's/.*Non-2xx or 3xx responses: *\([0-9]*\).*/\1/p' "$TMP/$label.txt")
    sockerr=$(sed -n 's/.*Socket errors: \(.*\)/\1/p' "$TMP/$label.txt")
    p50=$(awk '$1 == "50%" { print $2 }' "$TMP/$label.txt")
    p99=$(awk '$1 == "99%" { print $2 }' "$TMP/$label.txt")
    echo "  $label: ${rps} req/s, p50 $p50, p99 $p99, non-2xx ${non2xx:-0}, socket errors ${sockerr:-none}"
    echo "$rps" >> "$TMP/$label.rps"
    [ -z "$non2xx" ] && [ -z "$sockerr" ] || echo x >> "$TMP/errors"
}

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "pathd $BIN: workers $WORKERS, io threads $IO_THREADS; wrk -t$THREADS -c$CONNS -d$DURATION;" \
     "map $MAP; algorithm $ALGO; cache $CACHE; $(wc -l < "$TMP/pairs") start/goal pairs" \
     "(optimal length <= $MAX_LEN); $REPEAT rounds"
k=0
while [ $k -lt "$REPEAT" ]; do
    k=$((k + 1))
    echo "round $k (load average $(cut -d' ' -f1 /proc/loadavg))"
    run healthz "$URL/healthz"
    PATHD_WRK_PAIRS="$TMP/pairs" PATHD_WRK_MAP=bench PATHD_WRK_ALGO=$ALGO PATHD_WRK_CACHE=$CACHE \
        run path -s "$LUA" "$URL/"
done
H=$(median "$TMP/healthz.rps")
P=$(median "$TMP/path.rps")
awk -v a="$P" -v b="$H" -v e="$( [ -f "$TMP/errors" ] && echo some || echo zero)" 'BEGIN {
    printf "median healthz %.0f req/s, median path %.0f req/s, ratio %.3f (target >= 0.5), %s errors\n",
           b, a, a / b, e }'
curl -s "$URL/v1/info" | sed 's/.*"pool":\({[^}]*}\).*"cache":\({[^}]*}\).*/pool \1 cache \2/'
echo
