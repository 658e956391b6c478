#!/bin/sh
# bench-auto.sh -- issue 14's per-map figures, side by side in one process,
# thread CPU time: auto against hpa and against jps over every scenario (both
# orders, since the first of an interleaved block runs on colder caches),
# and astar against jps at the median over 500 queries; then one Markdown
# table (scripts/bench-auto-table.py).
#
#   scripts/bench-auto.sh [OUT]        (default build/bench-auto)
#
# Reads the maps through PATHD_BENCH_DIR (default ../shared/benchmarks/movingai).
# About 10 minutes on a quiet 2-core machine.
set -eu
cd "$(dirname "$0")/.."
D=${PATHD_BENCH_DIR:-../shared/benchmarks/movingai}
OUT=${1:-build/bench-auto}
B=build/pathd-bench
[ -x $B ] || make $B
mkdir -p "$OUT"
for f in "$D"/*.scen; do
    m=$(basename "$f" .map.scen)
    $B scen --json --clock cpu --compare auto,hpa "$f" >"$OUT/$m.autohpa.json" 2>"$OUT/$m.err"
    $B scen --json --clock cpu --compare hpa,auto "$f" >"$OUT/$m.hpaauto.json" 2>>"$OUT/$m.err"
    $B scen --json --clock cpu --compare auto,jps "$f" >"$OUT/$m.autojps.json" 2>>"$OUT/$m.err"
    $B scen --json --clock cpu --compare jps,auto "$f" >"$OUT/$m.jpsauto.json" 2>>"$OUT/$m.err"
    $B scen --json --clock cpu --compare astar,jps --max-queries 500 "$f" >"$OUT/$m.astarjps.json" 2>>"$OUT/$m.err"
    echo "$m done" >&2
done
python3 scripts/bench-auto-table.py "$OUT"
