#!/bin/sh
# bench-auto-gen.sh -- issue 30's auto figures on generated maps (pathd-bench
# gen): random densities, room sizes and maze corridor widths, none of which
# anything was tuned on. The maps and scenario files go to OUT/maps; then
# scripts/bench-auto.sh measures them as it does the shared maps (per map,
# side by side in one process on the thread CPU clock, auto against hpa and
# against jps in both orders) and prints its Markdown table.
#
#   scripts/bench-auto-gen.sh [OUT] [SEED]      (default build/bench-auto-gen, 1)
set -eu
cd "$(dirname "$0")/.."
OUT=${1:-build/bench-auto-gen}
SEED=${2:-1}
B=build/pathd-bench
[ -x $B ] || make $B
mkdir -p "$OUT/maps"
for p in 10 20 30 40; do $B gen random --param $p --seed "$SEED" "$OUT/maps/random512-$p-g$SEED"; done
for r in 8 16 32 64; do $B gen rooms --param $r --seed "$SEED" "$OUT/maps/${r}room-g$SEED"; done
for c in 2 4 8 16; do $B gen maze --param $c --loops 0.02 --seed "$SEED" "$OUT/maps/maze512-$c-g$SEED"; done
PATHD_BENCH_DIR="$OUT/maps" exec scripts/bench-auto.sh "$OUT"
