#!/bin/sh
# bench-http-cost.sh -- issue 14's HTTP cost: uncached path requests over
# HTTP (pathd-bench http, 32 connections, every scenario) against the same
# scenarios in-process (pathd-bench scen), on the same core. The server
# (1 I/O thread, 1 worker) and the in-process run are pinned to core 0, the
# client to core 1. Prints both ratios: requests per second of wall time,
# and requests per server CPU second (from /proc/PID/stat around the
# measured run; a 1 s warm-up run uploads the maps first) against queries
# per thread CPU second.
#
#   scripts/bench-http-cost.sh          (ALGO=auto DUR=8 PORT=18614 OUT=build/bench-http-cost)
set -eu
cd "$(dirname "$0")/.."
D=${PATHD_BENCH_DIR:-../shared/benchmarks/movingai}
ALGO=${ALGO:-auto}
OUT=${OUT:-build/bench-http-cost}
PORT=${PORT:-18614}
mkdir -p "$OUT"
taskset -c 0 build/pathd --port "$PORT" --workers 1 --io-threads 1 --cache-entries 0 >"$OUT/pathd.log" 2>&1 &
P=$!
sleep 1
B="build/pathd-bench http --url http://127.0.0.1:$PORT --connections 32 --no-cache --algorithm $ALGO --quiet --json --scen"
taskset -c 1 $B "$D"/*.scen --duration 1 >/dev/null 2>&1
c0=$(awk '{print $14+$15}' /proc/$P/stat)
taskset -c 1 $B "$D"/*.scen --duration "${DUR:-8}" >"$OUT/http-$ALGO.json" 2>"$OUT/http-$ALGO.err"
c1=$(awk '{print $14+$15}' /proc/$P/stat)
kill $P
wait $P || true
taskset -c 0 build/pathd-bench scen --json --clock cpu --algorithm "$ALGO" "$D"/*.scen >"$OUT/scen-$ALGO.json" 2>"$OUT/scen-$ALGO.err"
taskset -c 0 build/pathd-bench scen --json --algorithm "$ALGO" "$D"/*.scen >"$OUT/scenwall-$ALGO.json" 2>>"$OUT/scen-$ALGO.err"
python3 - "$OUT" "$ALGO" $c0 $c1 $(getconf CLK_TCK) <<'PY'
import json,sys
out,algo,c0,c1,tck=sys.argv[1],sys.argv[2],int(sys.argv[3]),int(sys.argv[4]),int(sys.argv[5])
h=json.load(open(f'{out}/http-{algo}.json'))
q=s=0
for l in open(f'{out}/scen-{algo}.json'):
    j=json.loads(l); q+=j['queries']; s+=j['seconds']
cpu=(c1-c0)/tck
qw=sw=0
for l in open(f'{out}/scenwall-{algo}.json'):
    j=json.loads(l); qw+=j['queries']; sw+=j['seconds']
print(f"{algo}: http {h['rps']:.0f} rps wall, {h['requests']/cpu:.0f} per server CPU s ({h['requests']} requests, {cpu:.2f} CPU s, errors {h['errors']}, invalid {h['invalid']}); in-process {q/s:.0f} per thread CPU s ({q} queries); ratio per CPU {h['requests']/cpu/(q/s):.3f}; in-process wall {qw/sw:.0f} q/s, wall ratio {h['rps']/(qw/sw):.3f}")
PY
