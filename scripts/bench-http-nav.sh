#!/bin/sh
# bench-http-nav.sh -- what a navmesh query costs over HTTP in batches,
# against the same queries in-process (issue 30).
#
#   scripts/bench-http-nav.sh PATHD PATHD-BENCH [seconds]
#
# Starts pathd (--workers 1) on a free local port with a throw-away data
# folder, uploads RecastDemo's nav_test.obj (PATHD_MESH_DIR), and posts one
# batch of 64 queries (its 21 test cases from nav_mesh_test.txt, cycled,
# "cache": false) with wrk over one connection, per algorithm. The server's
# cost is its CPU time (utime + stime from /proc, I/O threads and worker
# together) over the run divided by the queries answered; wall time per
# query is printed too, but on a shared machine only the CPU figure holds.
# Then `pathd-bench navmesh --clock cpu --per-query` runs the same 21 pairs
# in-process, and the mean per algorithm is the in-process figure (thread
# CPU time of pf_nav_find_path). Needs wrk, curl and python3.
set -eu

pathd=${1:?usage: bench-http-nav.sh PATHD PATHD-BENCH [seconds]}
bench=${2:?usage: bench-http-nav.sh PATHD PATHD-BENCH [seconds]}
secs=${3:-8}
mesh=${PATHD_MESH_DIR:-$(dirname "$0")/../../shared/benchmarks/meshes}
if [ ! -f "$mesh/nav_test.obj" ]; then
    echo "bench-http-nav: $mesh/nav_test.obj does not exist (PATHD_MESH_DIR)" >&2
    exit 1
fi

dir=$(mktemp -d)
pid=""
cleanup() {
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$pathd" --port "$port" --bind 127.0.0.1 --workers 1 --data-dir "$dir/data" >"$dir/pathd.log" 2>&1 &
pid=$!
until curl -fsS -o /dev/null "http://127.0.0.1:$port/healthz" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || { cat "$dir/pathd.log" >&2; exit 1; }
    sleep 0.2
done
curl -fsS -o /dev/null -X PUT -H 'Content-Type: model/obj' --data-binary "@$mesh/nav_test.obj" \
    "http://127.0.0.1:$port/v1/maps/navtest"

python3 - "$mesh/nav_mesh_test.txt" "$dir" <<'EOF'
import json, sys
pairs = []
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "pf":
        v = [float(x) for x in f[1:7]]
        pairs.append((v[:3], v[3:]))
for algo in ("polyanya", "detour"):
    q = [{"start": pairs[i % len(pairs)][0], "goal": pairs[i % len(pairs)][1],
          "algorithm": algo, "cache": False} for i in range(64)]
    open(f"{sys.argv[2]}/batch_{algo}.json", "w").write(json.dumps({"queries": q}))
    open(f"{sys.argv[2]}/post_{algo}.lua", "w").write(
        'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
        f'wrk.body = io.open("{sys.argv[2]}/batch_{algo}.json"):read("a")\n')
EOF

tck=$(getconf CLK_TCK)
for algo in polyanya detour; do
    c0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    wrk -t1 -c1 -d"${secs}s" -s "$dir/post_$algo.lua" "http://127.0.0.1:$port/v1/maps/navtest/paths" \
        >"$dir/wrk.txt" 2>&1
    c1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    n=$(awk '/requests in/ {print $1}' "$dir/wrk.txt")
    awk -v a="$algo" -v c0="$c0" -v c1="$c1" -v n="$n" -v t="$tck" -v d="$secs" 'BEGIN {
        printf "http       %-8s %d batches of 64: server %.2f us CPU a query, %.2f us wall a query\n",
               a, n, (c1 - c0) / t * 1e6 / (n * 64), d * 1e6 / (n * 64) }'
done

PATHD_MESH_DIR=$mesh "$bench" navmesh --clock cpu --max-queries 21 --unreachable 0 --obstacles 0 \
    --per-query "$dir/pq.tsv" "$mesh/nav_test.obj" >/dev/null
awk -F'\t' '$3 == "demo" { s[$10] += $15; n[$10]++ }
    END { for (a in s) printf "in-process %-8s %d pairs: %.2f us CPU a query (mean)\n", a, n[a], s[a] / n[a] }' \
    "$dir/pq.tsv" | sort
