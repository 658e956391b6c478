#!/usr/bin/env bash
# quickstart.sh -- the README's quick start, line by line, against a fresh
# pathd on a free port (make test):
#
#   tests/quickstart.sh path/to/pathd
#
# Takes the sh block after the "<!-- quickstart" marker in README.md, runs
# each line in a scratch directory with localhost:8080 replaced by the
# server's address and every curl made to fail on an HTTP error
# (--fail-with-body), and checks what the README says of the answers: the
# path after the PATCH is "found":false, "reason":"unreachable".
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-build/pathd}")
README=$(realpath README.md)
fail() { echo "not ok - $*"; exit 1; }

lines=$(awk '/<!-- quickstart/ {on=1; next} on && /^```sh/ {inblock=1; next} inblock && /^```/ {exit} inblock {print}' "$README")
[ -n "$lines" ] || fail "no quickstart block in README.md"

dir=$(mktemp -d)
out=$dir/pathd.out
: >"$out" # before the child opens it: the poll below may run first
"$BIN" --port 0 >"$out" 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
port=
while kill -0 "$pid" 2>/dev/null; do # no clock: until it listens, or exits
    port=$(sed -n 's/.*listening on [^:]*:\([0-9]*\).*/\1/p' "$out" | head -n1)
    [ -n "$port" ] && break
    sleep 0.05
done
[ -n "$port" ] || fail "pathd exited before it listened"

cd "$dir"
n=0 patched=0
while IFS= read -r line; do
    [ -z "$line" ] && continue
    n=$((n + 1))
    run=${line//localhost:8080/127.0.0.1:$port}
    run=${run//curl -s /curl -sS --fail-with-body }
    if ! answer=$(bash -c "$run" 2>&1); then
        fail "line $n: $line
    answered: $answer"
    fi
    case $line in
    *PATCH*) patched=1 ;;
    *'/path -H'*)
        if [ $patched = 1 ]; then
            grep -q '"found":false' <<<"$answer" && grep -q '"reason":"unreachable"' <<<"$answer" ||
                fail "line $n: after the PATCH the README promises unreachable: $answer"
        else
            grep -q '"found":true' <<<"$answer" || fail "line $n: no path: $answer"
        fi
        ;;
    esac
    echo "ok - quickstart line $n: ${line:0:90}"
done <<<"$lines"
[ $n -ge 10 ] || fail "only $n lines ran"
