#!/bin/sh
# run-demo.sh -- `make run`: start pathd on 127.0.0.1:8080 with the demo maps
# ("room", a 10x7 textbook room, and "maze", a generated 129x129 maze), print
# curl commands that work as printed, and keep the server in the foreground
# until Ctrl-C (SIGINT: pathd drains and exits 0).
#
#   scripts/run-demo.sh [path/to/pathd] [extra pathd flags...]
# PATHD_PORT / PATHD_BIND change the address as they do for pathd itself.
set -eu

BIN=${1:-build/pathd}
[ $# -gt 0 ] && shift
BIND=${PATHD_BIND:-127.0.0.1}
PORT=${PATHD_PORT:-8080}
URL="http://$BIND:$PORT"

if [ ! -x "$BIN" ]; then
    echo "run-demo: $BIN not found; run make first" >&2
    exit 1
fi

"$BIN" --bind "$BIND" --port "$PORT" --demo "$@" &
PID=$!
trap 'kill -TERM $PID 2>/dev/null; wait $PID' INT TERM

# Wait until the server answers /readyz (deadline 10 s).
i=0
until curl -fsS -o /dev/null "$URL/readyz" 2>/dev/null; do
    i=$((i + 1))
    if [ $i -gt 100 ] || ! kill -0 $PID 2>/dev/null; then
        echo "run-demo: pathd did not become ready on $URL" >&2
        kill -TERM $PID 2>/dev/null || true
        exit 1
    fi
    sleep 0.1
done

cat <<EOT

pathd is serving $URL with the demo maps 'room' and 'maze'.
Open $URL/ in a browser for the debug viewer (click a start and a goal), or try:

  curl -s $URL/v1/maps
  curl -s $URL/v1/maps/room
  curl -s $URL/v1/maps/room/cells
  curl -s -X POST $URL/v1/maps/room/path -H 'Content-Type: application/json' -d '{"start":[0,0],"goal":[9,0]}'
  curl -s '$URL/v1/maps/room/path?start=5,0&goal=9,6&smooth=true'
  curl -s -X POST $URL/v1/maps/maze/path -H 'Content-Type: application/json' -d '{"start":[1,1],"goal":[127,127],"algorithm":"astar"}'
  curl -s -X POST $URL/v1/maps/maze/paths -H 'Content-Type: application/json' -d '{"queries":[{"start":[1,1],"goal":[127,1]},{"start":[1,1],"goal":[1,127],"algorithm":"bfs"}]}'
  curl -s -X PUT $URL/v1/maps/arena -H 'Content-Type: text/x-movingai-map' --data-binary @../shared/benchmarks/movingai/arena.map
  curl -s -X PUT $URL/v1/maps/mine -H 'Content-Type: application/json' -d '{"rows":["..#..","..#..","....."],"legend":{"#":0}}'
  curl -s -X DELETE -i $URL/v1/maps/mine
  curl -s $URL/v1/info
  curl -s $URL/metrics
  curl -s $URL/healthz

Ctrl-C stops the server.
EOT

wait $PID
