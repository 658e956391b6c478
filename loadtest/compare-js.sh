#!/bin/sh
# compare-js.sh -- pathd's astar against npm `pathfinding` (PathFinding.js
# AStarFinder, octile, no corner crossing) on the same Moving AI queries, side
# by side in one run.
#
#   loadtest/compare-js.sh [--max-queries N] [--bucket-quarter] [FILE.scen...]
#
# For each scenario file it runs `pathd-bench scen --algorithm astar --json`
# and then `node loadtest/js/compare.js --json` with the same selection
# options (both pick the same queries, see compare.js), and prints per map the
# median microseconds per query of each and the ratio JS / pathd (above 1:
# pathd is faster), then the median of the per-map ratios. Both sides time
# the search alone: pathd around pf_planner_search, JS around findPath with the
# grid reset outside the timed region.
#
# Without files it uses every .scen in PATHD_BENCH_DIR (default
# ../shared/benchmarks/movingai beside the repository). Environment:
# PATHD_BENCH_BIN (default build/pathd-bench), NODE (default node).
# Installs the JS dependency (npm ci) on first use.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bench=${PATHD_BENCH_BIN:-$root/build/pathd-bench}
node=${NODE:-node}
dir=${PATHD_BENCH_DIR:-$root/../shared/benchmarks/movingai}
maxq=200
sel=""

while [ $# -gt 0 ]; do
    case "$1" in
    --max-queries) maxq=$2; shift 2 ;;
    --bucket-quarter) sel="--min-bucket-frac 0.75"; shift ;;
    --help|-h) sed -n '2,20p' "$0"; exit 0 ;;
    --*) echo "compare-js.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
if [ $# -eq 0 ]; then
    set -- "$dir"/*.scen
    [ -e "$1" ] || { echo "compare-js.sh: no .scen files in $dir" >&2; exit 2; }
fi
[ -x "$bench" ] || { echo "compare-js.sh: $bench not built (make)" >&2; exit 2; }
if [ ! -d "$here/js/node_modules/pathfinding" ]; then
    (cd "$here/js" && npm ci --no-audit --no-fund --silent) >&2
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT
for f in "$@"; do
    # shellcheck disable=SC2086
    "$bench" scen --algorithm astar --json --max-queries "$maxq" $sel "$f" | sed 's/^/C /' >>"$out"
    # shellcheck disable=SC2086
    "$node" "$here/js/compare.js" --json --max-queries "$maxq" $sel "$f" | sed 's/^/J /' >>"$out"
done

"$node" -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean);
const c = {}, j = {}, order = [];
for (const l of lines) {
    const o = JSON.parse(l.slice(2));
    if (l[0] === "C") { c[o.map] = o; order.push(o.map); } else j[o.map] = o;
}
const pad = (s, n) => String(s).padStart(n);
console.log("map".padEnd(16) + pad("size", 10) + pad("queries", 8) + pad("pathd_p50_us", 14) +
            pad("js_p50_us", 12) + pad("p50_ratio", 11) + pad("mean_ratio", 11) + pad("mism C/JS", 11));
const ratios = [], big = [];
let bad = 0;
for (const m of order) {
    const a = c[m], b = j[m];
    if (!b || a.queries !== b.queries) { console.log(m + ": query counts differ, skipped"); bad++; continue; }
    const r = b.p50_us / a.p50_us;
    const mr = b.mean_us / a.mean_us;
    ratios.push(r);
    if (a.width >= 512 && a.height >= 512) big.push(r);
    bad += a.mismatches + b.mismatches;
    console.log(m.padEnd(16) + pad(a.width + "x" + a.height, 10) + pad(a.queries, 8) +
                pad(a.p50_us.toFixed(1), 14) + pad(b.p50_us.toFixed(1), 12) +
                pad(r.toFixed(2) + "x", 11) + pad(mr.toFixed(2) + "x", 11) +
                pad(a.mismatches + "/" + b.mismatches, 11));
}
const med = (v) => { v = v.slice().sort((x, y) => x - y); const n = v.length;
                     return n ? (n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : NaN; };
console.log("median p50 ratio JS/pathd over " + ratios.length + " maps: " + med(ratios).toFixed(2) + "x");
if (big.length)
    console.log("median p50 ratio JS/pathd over " + big.length + " maps of at least 512x512: " +
                med(big).toFixed(2) + "x");
process.exit(bad ? 1 : 0);
' "$out"
