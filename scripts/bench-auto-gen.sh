#!/bin/sh
# bench-auto-gen.sh -- issue 30's auto figures on generated maps (pathd-bench
# gen): random densities, room sizes and maze corridor widths, none of which
# anything was tuned on. Per map, side by side in one process on the thread
# CPU clock, auto against hpa and against jps (both orders, as
# scripts/bench-auto.sh), then one Markdown table (scripts/bench-auto-table.py).
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
for f in "$OUT"/maps/*.scen; do
    m=$(basename "$f" .map.scen)
    $B scen --json --clock cpu --compare auto,hpa "$f" >"$OUT/$m.autohpa.json" 2>"$OUT/$m.err"
    $B scen --json --clock cpu --compare hpa,auto "$f" >"$OUT/$m.hpaauto.json" 2>>"$OUT/$m.err"
    $B scen --json --clock cpu --compare auto,jps "$f" >"$OUT/$m.autojps.json" 2>>"$OUT/$m.err"
    $B scen --json --clock cpu --compare jps,auto "$f" >"$OUT/$m.jpsauto.json" 2>>"$OUT/$m.err"
    $B scen --json --clock cpu --compare astar,jps --max-queries 500 "$f" >"$OUT/$m.astarjps.json" 2>>"$OUT/$m.err"
    echo "$m done" >&2
done
python3 scripts/bench-auto-table.py "$OUT"
