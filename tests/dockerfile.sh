#!/usr/bin/env bash
# dockerfile.sh -- what can be checked of the Dockerfile without Docker
# (make test; Docker cannot run on the CI machine):
#
#   tests/dockerfile.sh path/to/pathd
#
# - The HEALTHCHECK command, taken from the Dockerfile as written, run with
#   sh -c (as Docker runs a shell-form CMD) against a real pathd on a free
#   port: healthy with PATHD_PORT set to that port (and with PATHD_BIND set to
#   another loopback address the server listens on), unhealthy on a port
#   nobody listens on, and unhealthy once the server drains.
# - STOPSIGNAL is SIGTERM, and the --stop-timeout the Dockerfile and the
#   README tell users to pass is longer than the image's drain timeout.
# - Every PATHD_* variable the image sets is one pathd knows (pathd --help),
#   and the data volume's owner (uid 10001) is the one the README documents.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build/pathd}
fail() { echo "not ok - $*"; exit 1; }
pass() { echo "ok - $*"; }
# In CI (tests/testutil.h: CI set, not empty, not 0, not false) a check
# that cannot run fails; elsewhere it is skipped and says so.
skip() {
    local ci=${CI:-}
    case "${ci,,}" in "" | 0 | false) echo "ok - # SKIP $*" ;; *) fail "cannot run in CI: $*" ;; esac
}

# The HEALTHCHECK instruction with its continuation lines joined, then what
# follows CMD.
hc=$(awk '/^HEALTHCHECK/ {on=1} on {line = line $0; if ($0 !~ /\\$/) {print line; exit} sub(/\\$/, "", line)}' Dockerfile)
cmd=${hc#*CMD }
[ -n "$hc" ] && [ "$cmd" != "$hc" ] || fail "no HEALTHCHECK ... CMD in the Dockerfile"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
PORT= HPORT= PID=
trap cleanup EXIT

# Starts pathd with the given flags: its port in PORT, its pid in PID.
start() {
    local out
    out=$(mktemp)
    "$BIN" --port 0 "$@" >"$out" 2>/dev/null &
    PID=$!
    pids+=("$PID")
    # No clock: until it listens, or exits.
    while kill -0 "$PID" 2>/dev/null; do
        if grep -q 'listening on' "$out"; then
            PORT=$(sed -n 's/.*listening on [^:]*:\([0-9]*\).*/\1/p' "$out" | head -n1)
            HPORT=$(sed -n 's/.*health probes on [^:]*:\([0-9]*\).*/\1/p' "$out" | head -n1)
            rm -f "$out"
            return 0
        fi
        sleep 0.05
    done
    fail "pathd exited before it listened"
}

health() { env -i PATH="$PATH" "$@" sh -c "$cmd" >/dev/null 2>&1; }

start --bind 127.0.0.1 --max-batch 100000
port=$PORT main=$PID
health PATHD_BIND=0.0.0.0 PATHD_PORT="$port" || fail "HEALTHCHECK on PATHD_PORT=$port of a healthy pathd"
pass "HEALTHCHECK is healthy on PATHD_PORT"
closed=1 # tcpmux: nothing listens there
health PATHD_BIND=0.0.0.0 PATHD_PORT=$closed && fail "HEALTHCHECK healthy on a port nobody listens on"
pass "HEALTHCHECK is unhealthy on another port"

start --bind 127.0.0.1 --health-port 0
hp=$HPORT
health PATHD_BIND=0.0.0.0 PATHD_PORT=$closed PATHD_HEALTH_PORT="$hp" ||
    fail "HEALTHCHECK on PATHD_HEALTH_PORT=$hp of a healthy pathd"
health PATHD_BIND=0.0.0.0 PATHD_PORT="$PORT" PATHD_HEALTH_PORT=$closed &&
    fail "HEALTHCHECK asked PATHD_PORT although PATHD_HEALTH_PORT is set"
health PATHD_BIND=0.0.0.0 PATHD_PORT="$PORT" PATHD_HEALTH_PORT=-1 ||
    fail "HEALTHCHECK with PATHD_HEALTH_PORT=-1 does not fall back to PATHD_PORT"
pass "HEALTHCHECK asks the probe listener (PATHD_HEALTH_PORT), PATHD_PORT when it is -1"
grep -q 'PATHD_HEALTH_PORT=[0-9]' Dockerfile || fail "the image does not turn the probe listener on"
pass "the image turns the probe listener on"

start --bind 127.0.0.2
health PATHD_BIND=127.0.0.2 PATHD_PORT="$PORT" || fail "HEALTHCHECK with PATHD_BIND=127.0.0.2"
pass "HEALTHCHECK follows PATHD_BIND when it is one address"

# Draining: a slow request keeps the server in its drain; /healthz is 503.
# The batch (5000 Dijkstra searches across the map, a minute's deadline)
# runs far longer than the checks below on any machine; the server is
# checked to be still draining after the probe, then killed.
curl -s -X PUT "127.0.0.1:$port/v1/maps/open" -H 'Content-Type: text/x-movingai-map' --data-binary \
    @<(printf 'type octile\nheight 512\nwidth 512\nmap\n'; for _ in $(seq 512); do printf '%512s\n' '' | tr ' ' .; done) >/dev/null
batch=$(mktemp)
{
    printf '{"deadline_ms":60000,"queries":['
    for i in $(seq 5000); do
        [ "$i" = 1 ] || printf ,
        printf '{"start":[0,%d],"goal":[511,511],"algorithm":"dijkstra","cache":false}' $((i % 500))
    done
    printf ']}'
} >"$batch"
curl -s -X POST "127.0.0.1:$port/v1/maps/open/paths" -H 'Content-Type: application/json' \
    --data-binary @"$batch" >/dev/null &
slow=$!
until curl -s "127.0.0.1:$port/v1/info" | grep -q '"running":1,'; do
    kill -0 "$slow" 2>/dev/null || fail "the slow batch ended before it ran"
    sleep 0.05
done
kill -TERM "$main"
health PATHD_BIND=0.0.0.0 PATHD_PORT="$port" && fail "HEALTHCHECK healthy while pathd drains"
kill -0 "$main" 2>/dev/null || fail "pathd ended its drain before the batch did"
pass "HEALTHCHECK is unhealthy while pathd drains"
{ kill -KILL "$main" && wait "$main"; } 2>/dev/null || true
wait "$slow" || true
rm -f "$batch"

grep -qx 'STOPSIGNAL SIGTERM' Dockerfile || fail "STOPSIGNAL SIGTERM is missing"
drain=$(sed -n 's/.*PATHD_DRAIN_TIMEOUT=\([0-9]*\).*/\1/p' Dockerfile | head -n1)
stop=$(sed -n 's/.*--stop-timeout \([0-9]*\).*/\1/p' Dockerfile | head -n1)
readme_stop=$(sed -n 's/.*--stop-timeout \([0-9]*\).*/\1/p' docs/operations.md | head -n1)
[ -n "$drain" ] && [ -n "$stop" ] || fail "the Dockerfile names no PATHD_DRAIN_TIMEOUT or --stop-timeout"
[ "$stop" -gt "$drain" ] || fail "--stop-timeout $stop is not longer than the drain timeout $drain"
[ "$readme_stop" = "$stop" ] || fail "docs/operations.md says --stop-timeout $readme_stop, the Dockerfile $stop"
pass "STOPSIGNAL SIGTERM; --stop-timeout $stop > drain timeout $drain, in the Dockerfile and docs/operations.md"

help=$("$BIN" --help)
for v in $(grep -o 'PATHD_[A-Z_]*=' Dockerfile | tr -d = | sort -u); do
    grep -q "$v" <<<"$help" || fail "the Dockerfile sets $v, which pathd does not know"
done
pass "every PATHD_* variable of the image is one pathd knows"
grep -q -- '--uid 10001' Dockerfile && grep -q 'chown 10001:10001' docs/operations.md ||
    fail "the data volume owner (uid 10001) is not the one docs/operations.md documents"
pass "the volume's owner, uid 10001, is documented"

# Every shared library the binary links directly (its NEEDED entries) comes
# from a package the runtime stage installs, or from libc6 (in every image).
# A library of the build stage alone would make the image's pathd fail to
# start (as Recast/Detour's librecast1 once did).
if command -v readelf >/dev/null && command -v dpkg >/dev/null; then
    runtime=$(awk '/^FROM .* AS runtime/ {on=1} on && /apt-get install/ {inst=1} inst && !done {print}
                   inst && !/\\$/ {done=1}' Dockerfile | tr ' \\' '\n\n' | grep -E '^lib[a-z0-9.+-]+$' | sort -u)
    for lib in $(readelf -d "$BIN" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p'); do
        path=$(ldconfig -p | awk -v l="$lib" '$1 == l && !p {print $NF; p=1}')
        [ -n "$path" ] || fail "$lib: not found by ldconfig"
        pkg=$( (dpkg -S "$(readlink -f "$path")" || dpkg -S "$path" || true) 2>/dev/null | sed -n '1s/:.*//p')
        [ -n "$pkg" ] || fail "$lib ($path): no Debian package owns it"
        [ "$pkg" = libc6 ] || grep -qx "$pkg" <<<"$runtime" ||
            fail "pathd needs $lib from $pkg, which the runtime stage does not install"
    done
    pass "every library pathd links comes from a package of the runtime stage"
else
    skip "readelf or dpkg missing: the runtime stage's libraries are not checked"
fi
