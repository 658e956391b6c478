#!/bin/sh
# bench-http.sh -- `make bench-http`: starts pathd on a free local port with a
# throw-away data folder, runs pathd-bench http with the standard mix for a
# fixed short time, prints the report, and stops the server with SIGTERM.
#
#   scripts/bench-http.sh PATHD PATHD-BENCH [extra pathd-bench http options]
#
# Environment: PATHD_BENCH_DIR (the Moving AI folder), BENCH_HTTP_DURATION
# (seconds, default 10), BENCH_HTTP_CONNECTIONS (default 8), BENCH_HTTP_MAPS
# (scenario basenames, default the two Baldur's Gate 512x512 maps and a room
# map), BENCH_HTTP_MIX (default paths=8,batch=1,sessions=1: single paths,
# batches, and D* Lite sessions fed cell changes as a game would).
set -eu

pathd=${1:?usage: bench-http.sh PATHD PATHD-BENCH}
bench=${2:?usage: bench-http.sh PATHD PATHD-BENCH}
shift 2
dir=${PATHD_BENCH_DIR:-$(dirname "$0")/../../shared/benchmarks/movingai}
duration=${BENCH_HTTP_DURATION:-10}
conns=${BENCH_HTTP_CONNECTIONS:-8}
maps=${BENCH_HTTP_MAPS:-"AR0011SR AR0700SR 8room_000"}
mix=${BENCH_HTTP_MIX:-paths=8,batch=1,sessions=1}

if [ ! -d "$dir" ]; then
    echo "bench-http: skipped: PATHD_BENCH_DIR=$dir does not exist"
    exit 0
fi
scen=""
for m in $maps; do scen="$scen $dir/$m.map.scen"; done

data=$(mktemp -d)
log="$data/pathd.log"
pid=""
cleanup() {
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    rm -rf "$data"
}
trap cleanup EXIT INT TERM

# A free port: the kernel picks one for a socket we close at once. The tiny
# window before pathd binds it is acceptable for a benchmark.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
       echo $((20000 + $$ % 20000)))

"$pathd" --port "$port" --bind 127.0.0.1 >"$log" 2>&1 &
pid=$!

# Ready when /readyz (or /healthz) answers 200; no fixed sleeps.
i=0
until curl -fsS -o /dev/null "http://127.0.0.1:$port/readyz" 2>/dev/null ||
      curl -fsS -o /dev/null "http://127.0.0.1:$port/healthz" 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "bench-http: pathd exited before it was ready:" >&2
        cat "$log" >&2
        exit 1
    fi
    i=$((i + 1))
    if [ $i -gt 100 ]; then
        echo "bench-http: pathd not ready after 10 s" >&2
        exit 1
    fi
    sleep 0.1
done

echo "bench-http: pathd on port $port; $conns connections, ${duration}s, mix $mix, maps: $maps"
# shellcheck disable=SC2086
"$bench" http --url "http://127.0.0.1:$port" --connections "$conns" --duration "$duration" \
    --mix "$mix" --max-queries 500 "$@" $scen
