#!/bin/sh
# bench-chase.sh -- issue 29's figures: pathd-bench chase, in-process, on six
# Moving AI maps (a city, a Baldur's Gate map, rooms, random obstacles, a
# maze with corridors 8 wide, a 1024x1024 city): every policy with 1, 16 and
# 64 chasers, hysteresis 0 and 0.2, each incremental plan after a goal move
# side by side with a fresh D* Lite search and an A*; then the incremental
# policy alone under each root orientation and re-root rule (dstar.h), 16
# chasers. Then the Markdown tables (scripts/bench-chase-table.py).
#
#   scripts/bench-chase.sh [OUT]        (default build/bench-chase)
#
# Reads the maps through PATHD_BENCH_DIR (default ../shared/benchmarks/movingai).
# About 25 minutes on a quiet 2-core machine. Counts (expansions, replans,
# paths pushed, flips) are the same on every run (seeded); times are thread
# CPU time.
set -eu
cd "$(dirname "$0")/.."
D=${PATHD_BENCH_DIR:-../shared/benchmarks/movingai}
OUT=${1:-build/bench-chase}
B=build/pathd-bench
[ -x $B ] || make $B
mkdir -p "$OUT"
for m in Boston_0_512 AR0011SR 8room_000 random512-10-0 maze512-8-0 Berlin_1_1024; do
    $B chase --json --chasers 1,16,64 --hysteresis 0,0.2 \
        --policies every-frame,timer,threshold,incremental,threshold-incremental \
        "$D/$m.map.scen" >"$OUT/$m.json" 2>"$OUT/$m.err"
    for v in goal:always goal:needed agent:always agent:needed auto:always auto:needed; do
        $B chase --json --chasers 16 --hysteresis 0.2 --policies incremental \
            --root "${v%%:*}" --reroot "${v##*:}" "$D/$m.map.scen" \
            >"$OUT/$m.$(echo $v | tr : -).json" 2>>"$OUT/$m.err"
    done
    echo "$m done" >&2
done
python3 scripts/bench-chase-table.py "$OUT"
