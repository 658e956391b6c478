#!/bin/bash
# bench-fleet.sh -- the fleet of issue 16 under load: path queries per
# second through nginx (deploy/nginx.conf) in front of 1, 2 and 3 pathd
# instances sharing one redis-server, and the time from SIGKILL of a map's
# instance to the first 200 for that map through nginx.
#
#   scripts/bench-fleet.sh [path/to/pathd]
# Environment: MAP (Moving AI map, default Berlin_0_256), MAPS (copies of
# it under distinct ids, so the hash spreads them: 12), ALGO (hpa), CACHE
# (false: every request searches), CONNS (32), THREADS (2), DURATION (5s),
# REPEAT (3 rounds of 1, 2, 3 instances, medians reported), WORKERS (1 per
# instance), PAIRS (1000), PATHD_BENCH_DIR.
#
# Everything runs on this machine: wrk, nginx, redis and the instances share
# its cores, so the numbers say what the proxy and the hash cost, not what
# more machines would give.
set -eu

BIN=$(readlink -f "${1:-build/pathd}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${PATHD_BENCH_DIR:-$ROOT/../shared/benchmarks/movingai}
MAP=${MAP:-Berlin_0_256}
MAPS=${MAPS:-12}
ALGO=${ALGO:-hpa}
CACHE=${CACHE:-false}
CONNS=${CONNS:-32}
THREADS=${THREADS:-2}
DURATION=${DURATION:-5s}
REPEAT=${REPEAT:-3}
WORKERS=${WORKERS:-1}
NPAIRS=${PAIRS:-1000}

for t in wrk curl redis-server nginx; do
    command -v $t >/dev/null || [ -x /usr/sbin/$t ] ||
        { echo "bench-fleet: $t is not installed (make tool-deps fleet-deps)" >&2; exit 1; }
done
[ -f "$DIR/$MAP.map" ] || { echo "bench-fleet: $DIR/$MAP.map not found" >&2; exit 1; }

TMP=$(mktemp -d)
PIDS=""
cleanup() {
    for p in $PIDS; do kill -TERM "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

RPORT=$(free_port)
redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no --loglevel warning \
    > "$TMP/redis.log" 2>&1 &
PIDS="$PIDS $!"
until redis-cli -p "$RPORT" ping >/dev/null 2>&1; do sleep 0.05; done

declare -a PORT PID
start_instance() { # index
    local i=$1
    "$BIN" --port "${PORT[$i]}" --store "redis://127.0.0.1:$RPORT" --instance-id "i$i" \
        --workers "$WORKERS" --io-threads 1 --cache-entries $([ "$CACHE" = true ] && echo 4096 || echo 0) \
        --queue 4096 --max-connections 4096 > "$TMP/i$i.out" 2> "$TMP/i$i.err" &
    PID[$i]=$!
    PIDS="$PIDS ${PID[$i]}"
    until curl -fs -o /dev/null "http://127.0.0.1:${PORT[$i]}/readyz"; do sleep 0.05; done
}
for i in 0 1 2; do PORT[$i]=$(free_port); start_instance $i; done

NGINX_PID=""
start_nginx() { # number of instances
    local n=$1
    local conf="$TMP/nginx$n"
    mkdir -p "$conf"
    NPORT=$(free_port)
    awk -v n="$n" -v p0="${PORT[0]}" -v p1="${PORT[1]}" -v p2="${PORT[2]}" -v lp="$NPORT" -v d="$conf" '
        /# pathd-servers-begin/ { skip = 1; split(p0 " " p1 " " p2, ps, " ");
            for (i = 1; i <= n; i++) printf "        server 127.0.0.1:%s max_fails=1 fail_timeout=3s;\n", ps[i];
            next }
        /# pathd-servers-end/ { skip = 0; next }
        skip { next }
        /^ *listen / { printf "        listen 127.0.0.1:%s;\n", lp; next }
        { print }
        /^http \{/ { printf "    access_log off;\n    client_body_temp_path %s/b;\n    proxy_temp_path %s/p;\n    fastcgi_temp_path %s/f;\n    uwsgi_temp_path %s/u;\n    scgi_temp_path %s/s;\n", d, d, d, d, d }
    ' "$ROOT/deploy/nginx.conf" > "$conf/nginx.conf"
    nginx -p "$conf" -e "$conf/error.log" -c "$conf/nginx.conf" \
        -g "daemon off; worker_processes 1; pid $conf/nginx.pid;$([ "$(id -u)" = 0 ] && echo ' user root;')" &
    NGINX_PID=$!
    PIDS="$PIDS $NGINX_PID"
    until curl -fs -o /dev/null "http://127.0.0.1:$NPORT/healthz"; do sleep 0.05; done
}
stop_nginx() { kill -QUIT "$NGINX_PID"; wait "$NGINX_PID" 2>/dev/null || true; }

# The maps, uploaded through nginx over all three instances.
start_nginx 3
for k in $(seq 0 $((MAPS - 1)) | xargs printf "%02d\n"); do
    curl -fsS -o /dev/null -X PUT "http://127.0.0.1:$NPORT/v1/maps/b$k" \
        -H 'Content-Type: text/x-movingai-map' --data-binary "@$DIR/$MAP.map"
done
awk 'NR > 1 { print $5, $6, $7, $8 }' "$DIR/$MAP.map.scen" | head -n "$NPAIRS" > "$TMP/pairs"
cat > "$TMP/fleet.lua" <<LUA
local paths = {}
local maps = $MAPS
for line in io.lines("$TMP/pairs") do
  local sx, sy, gx, gy = line:match("^(%d+)%s+(%d+)%s+(%d+)%s+(%d+)")
  if sx then paths[#paths + 1] = string.format("/path?start=%s,%s&goal=%s,%s&algorithm=$ALGO&cache=$CACHE", sx, sy, gx, gy) end
end
local counter, thread_no = 0, 0
function setup(thread) thread:set("offset", thread_no * 7919); thread_no = thread_no + 1 end
function init(args) counter = offset or 0 end
function request()
  counter = counter + 1
  return wrk.format("GET", string.format("/v1/maps/b%02d", counter % maps) .. paths[(counter % #paths) + 1])
end
LUA
stop_nginx

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "bench-fleet: $MAPS x $MAP, $ALGO, cache $CACHE, wrk -t$THREADS -c$CONNS -d$DURATION, $WORKERS worker(s) + 1 I/O thread per instance, nginx 1 worker, $(nproc) cores"
for r in $(seq "$REPEAT"); do
    # The baseline: straight to one instance, no proxy.
    wrk -t1 -c4 -d1s -s "$TMP/fleet.lua" "http://127.0.0.1:${PORT[0]}" > /dev/null 2>&1
    wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency -s "$TMP/fleet.lua" \
        "http://127.0.0.1:${PORT[0]}" > "$TMP/w0.$r" 2>&1
    rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$TMP/w0.$r")
    echo "  round $r, 1 instance, no proxy: $rps req/s"
    echo "$rps" >> "$TMP/rps0"
    for n in 1 2 3; do
        start_nginx "$n"
        # Warm: every instance loads the maps it is sent.
        wrk -t1 -c4 -d1s -s "$TMP/fleet.lua" "http://127.0.0.1:$NPORT" > /dev/null 2>&1
        wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency -s "$TMP/fleet.lua" \
            "http://127.0.0.1:$NPORT" > "$TMP/w$n.$r" 2>&1
        rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$TMP/w$n.$r")
        bad=$(sed -n 's/.*Non-2xx or 3xx responses: *\([0-9]*\).*/\1/p' "$TMP/w$n.$r")
        p50=$(awk '$1 == "50%" { print $2 }' "$TMP/w$n.$r")
        p99=$(awk '$1 == "99%" { print $2 }' "$TMP/w$n.$r")
        echo "  round $r, $n instance(s): $rps req/s, p50 $p50, p99 $p99, non-2xx ${bad:-0}"
        echo "$rps" >> "$TMP/rps$n"
        stop_nginx
    done
done
echo "median, 1 instance, no proxy: $(median < "$TMP/rps0") req/s"
for n in 1 2 3; do echo "median, $n instance(s) through nginx: $(median < "$TMP/rps$n") req/s"; done

# Kill to first 200: a map uploaded just now (so only its own instance has
# a copy), its instance SIGKILLed; how long until the proxy answers 200 for
# it again, from the next instance on the ring, which loads it from Redis
# and builds it (hierarchy and landmarks) first.
start_nginx 3
curl -fsS -o /dev/null -X PUT "http://127.0.0.1:$NPORT/v1/maps/fresh" \
    -H 'Content-Type: text/x-movingai-map' --data-binary "@$DIR/$MAP.map"
owner=$(curl -fsS -D - -o /dev/null "http://127.0.0.1:$NPORT/v1/maps/fresh" | tr -d '\r' |
        sed -n 's/^X-Pathd-Instance: i\([0-9]\)$/\1/p')
set -- $(head -n 1 "$TMP/pairs")
url="http://127.0.0.1:$NPORT/v1/maps/fresh/path?start=$1,$2&goal=$3,$4&algorithm=$ALGO"
curl -fs -o /dev/null "$url"
t0=$(date +%s%N)
kill -KILL "${PID[$owner]}"
until [ "$(curl -s -o /dev/null -w '%{http_code}' "$url")" = 200 ]; do :; done
t1=$(date +%s%N)
echo "kill to first 200 (a fresh $MAP map; its instance i$owner SIGKILLed; loaded and built by the next): $(( (t1 - t0) / 1000000 )) ms"
