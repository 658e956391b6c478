#!/bin/sh
# callgrind-requests.sh PATHD [OUTDIR] -- instructions a request costs the
# server, counted by callgrind (stable on a busy machine, unlike time):
#
#   grid     POST /v1/maps/arena/path, 300 queries of the shared arena.map's
#            scenario (its first 300 lines), "cache":false, the default
#            algorithm;
#   navmesh  POST /v1/maps/level/path, RecastDemo's 21 nav_test.obj cases
#            ten times over, "cache":false;
#   session  POST .../sessions/{sid}/updates on arena: the agent steps one
#            cell along its path and the cell 4 steps ahead closes, then
#            opens at the next update; per update = (cost of 300 updates -
#            cost of 100) / 200, so the session's first plan cancels out.
#
# Only the handler and the job of those routes are counted
# (--toggle-collect on pf__route_path_post, run_paths,
# pf__route_session_updates, run_session: the names every version of
# pathd has), so uploads, startup and the event loops are not. Prints Ir
# per request for each. Needs valgrind and python3; PATHD_BENCH_DIR and
# PATHD_MESH_DIR default to ../shared/benchmarks/{movingai,meshes}.
set -eu
PATHD=$(realpath "$1")
OUT=${2:-$(mktemp -d /tmp/callgrind-requests.XXXXXX)}
HERE=$(cd "$(dirname "$0")" && pwd)
MAPS=${PATHD_BENCH_DIR:-$HERE/../../shared/benchmarks/movingai}
MESHES=${PATHD_MESH_DIR:-$HERE/../../shared/benchmarks/meshes}
mkdir -p "$OUT"

# run NAME CLIENT-ARGS: one server under callgrind, one client run, the
# total of the collected Ir.
run() {
    name=$1
    shift
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    valgrind --tool=callgrind --callgrind-out-file="$OUT/$name.out" \
        --toggle-collect=pf__route_path_post --toggle-collect=run_paths \
        --toggle-collect=pf__route_session_updates --toggle-collect=run_session \
        "$PATHD" --port "$port" --workers 1 --io-threads 1 --deadline-ms 600000 \
        --max-deadline-ms 600000 >"$OUT/$name.log" 2>&1 &
    pid=$!
    python3 - "$port" "$MAPS" "$MESHES" "$@" <<'EOF'
import http.client, json, sys, time
port, maps, meshes, what = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
n = int(sys.argv[5]) if len(sys.argv) > 5 else 0
for _ in range(600):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        c.request("GET", "/healthz"); c.getresponse().read(); break
    except OSError:
        time.sleep(0.2)
def call(method, path, body=None, ctype="application/json", want=(200, 201)):
    c.request(method, path, body=body, headers={"Content-Type": ctype} if body else {})
    r = c.getresponse(); data = r.read()
    if r.status not in want: sys.exit("%s %s: %d %s" % (method, path, r.status, data[:200]))
    return json.loads(data) if data else None
def scen(k):
    rows = [l.split("\t") for l in open(maps + "/arena.map.scen").read().splitlines()[1:]]
    return [((int(r[4]), int(r[5])), (int(r[6]), int(r[7]))) for r in rows[:k]]
if what in ("grid", "session"):
    call("PUT", "/v1/maps/arena", open(maps + "/arena.map", "rb").read(), "text/x-movingai-map")
if what == "grid":
    for s, g in scen(300):
        call("POST", "/v1/maps/arena/path", json.dumps({"start": s, "goal": g, "cache": False}))
elif what == "navmesh":
    call("PUT", "/v1/maps/level", open(meshes + "/nav_test.obj", "rb").read(), "model/obj")
    cases = [l.split() for l in open(meshes + "/nav_mesh_test.txt") if l.startswith("pf ")]
    for _ in range(10):
        for p in cases:
            v = [float(x) for x in p[1:7]]
            call("POST", "/v1/maps/level/path",
                 json.dumps({"start": v[0:3], "goal": v[3:6], "cache": False}))
elif what == "session":
    s, g = max(scen(300), key=lambda q: abs(q[0][0] - q[1][0]) + abs(q[0][1] - q[1][1]))
    a = call("POST", "/v1/maps/arena/sessions", json.dumps({"start": s, "goal": g}))
    sid, path, closed = a["session_id"], a["path"], None
    for i in range(n):
        u = {}
        if closed: u["cells"] = [{"x": closed[0], "y": closed[1], "cost": 1}]; closed = None
        elif len(path) > 6:
            closed = path[5]; u["cells"] = [{"x": closed[0], "y": closed[1], "cost": 0}]
        if len(path) > 2: u["position"] = path[1]
        a = call("POST", "/v1/maps/arena/sessions/%s/updates" % sid, json.dumps(u))
        path = a["path"] or path
EOF
    kill -TERM "$pid"
    wait "$pid" || true
    callgrind_annotate "$OUT/$name.out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
}

g=$(run grid grid)
n=$(run navmesh navmesh)
s1=$(run session100 session 100)
s3=$(run session300 session 300)
echo "grid path request:    $((g / 300)) Ir"
echo "navmesh path request: $((n / 210)) Ir"
echo "session update:       $(((s3 - s1) / 200)) Ir"
echo "(callgrind files in $OUT)"
