#!/bin/sh
# bench-graph-http.sh -- issue 28's HTTP figures for waypoint graphs: the
# 5,000-node game graph of scripts/bench-graph.c (BENCH_GRAPH_JSON) put to
# a pathd, then GET /v1/maps/game/path between random nodes (the cache off:
# every request searches) with wrk, one connection at a time, per
# algorithm (ch: hub labels where the version has them); prints wrk's
# p50/p99 latency and the rate. Compare with bench-graph's in-process p50
# of the same algorithm (another pair set: the same distribution).
#
#   scripts/bench-graph-http.sh [path/to/pathd] [game.json]
# Environment: DURATION (10s), CONNS (1), WORKERS (2).
set -eu

BIN=${1:-build/pathd}
JSON=${2:-}
DURATION=${DURATION:-10s}
CONNS=${CONNS:-1}
WORKERS=${WORKERS:-2}
command -v wrk >/dev/null || { echo "bench-graph-http: wrk is not installed" >&2; exit 1; }
TMP=$(mktemp -d)
if [ -z "$JSON" ]; then
    JSON=$TMP/game.json
    BENCH_GRAPH_JSON=$JSON BENCH_GRAPH_QUERIES=10 BENCH_GRAPH_BIG_QUERIES=0 \
        "$(dirname "$BIN")/bench-graph" > /dev/null
fi
"$BIN" --port 0 --workers "$WORKERS" --cache-entries 0 --max-body 16777216 \
    > "$TMP/out" 2> "$TMP/err" &
PID=$!
trap 'kill -TERM $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
i=0
until grep -q listening "$TMP/out" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 100 ] || { cat "$TMP/err" >&2; exit 1; }; sleep 0.05
done
PORT=$(sed -n 's/.*listening on [^:]*:\([0-9]*\).*/\1/p' "$TMP/out")
URL="http://127.0.0.1:$PORT"
curl -fsS -o /dev/null -X PUT "$URL/v1/maps/game" -H 'Content-Type: application/json' \
    --data-binary "@$JSON"
for ALGO in dijkstra astar alt ch; do
    cat > "$TMP/path.lua" <<LUA
math.randomseed(42)
request = function()
  return wrk.format("GET", string.format("/v1/maps/game/path?start=n%d&goal=n%d&algorithm=$ALGO&cache=false",
    math.random(0, 4999), math.random(0, 4999)))
end
done = function(summary, latency, requests)
  io.write(string.format("$ALGO over HTTP: requests %d errors %d  p50 %.0f us  p99 %.0f us  %.0f req/s\n",
    summary.requests, summary.errors.status + summary.errors.connect + summary.errors.read +
    summary.errors.write + summary.errors.timeout, latency:percentile(50), latency:percentile(99),
    summary.requests / (summary.duration / 1e6)))
end
LUA
    wrk -t1 -c"$CONNS" -d"$DURATION" -s "$TMP/path.lua" "$URL" | grep "over HTTP"
done
