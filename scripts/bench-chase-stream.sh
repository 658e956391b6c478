#!/bin/sh
# bench-chase-stream.sh -- issue 29's chase against a running pathd over the
# multiplexed WebSocket, and on navmesh levels in-process:
#
#   scripts/bench-chase-stream.sh [OUT]      (default build/bench-chase-stream)
#
# 1. starts build/pathd on a free loopback port (--workers 2), then
#    `pathd-bench chase --url ... --server-pid PID` on three Moving AI maps
#    with 1, 16 and 64 chasers, policies every-frame, timer (10 updates) and
#    threshold (3 cells), hysteresis 0 and 0.2, 150 frames; stops it.
# 2. `pathd-bench chase` on nav_test.obj (PATHD_MESH_DIR, default
#    ../shared/benchmarks/meshes), gen:multifloor and gen:terrain with 1, 16
#    and 64 chasers: every-frame, threshold and slide.
#
# Counts are the same on every run (seeded); CPU times are per frame: the
# bench's process CPU clock and the server's /proc/PID/stat (10 ms ticks,
# so small rows are coarse).
set -eu
cd "$(dirname "$0")/.."
D=${PATHD_BENCH_DIR:-../shared/benchmarks/movingai}
MD=${PATHD_MESH_DIR:-../shared/benchmarks/meshes}
OUT=${1:-build/bench-chase-stream}
mkdir -p "$OUT"
[ -x build/pathd ] && [ -x build/pathd-bench ] || make build/pathd build/pathd-bench
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
build/pathd --port "$PORT" --workers 2 >"$OUT/pathd.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
for i in 1 2 3 4 5 6 7 8 9 10; do
    curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
    sleep 0.5
done
build/pathd-bench chase --url "http://127.0.0.1:$PORT" --server-pid "$PID" \
    --chasers 1,16,64 --hysteresis 0,0.2 \
    "$D/Boston_0_512.map.scen" "$D/random512-10-0.map.scen" "$D/maze512-8-0.map.scen" \
    | tee "$OUT/stream.txt"
kill $PID
wait $PID || true
trap - EXIT
build/pathd-bench chase --chasers 1,16,64 "$MD/nav_test.obj" gen:multifloor gen:terrain \
    | tee "$OUT/navmesh.txt"
