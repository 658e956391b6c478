#!/usr/bin/env bash
# run-suites.sh -- runs test suites side by side, one runner process a
# suite, at most JOBS at a time (make test: the number of cores):
#
#   tests/run-suites.sh RUN_TESTS JOBS SUITE...
#
# Suites start in the order given (make test lists the longest first, so
# the short ones fill in at the end). Each suite's output is kept apart and
# printed whole when it ends, with its time; then one summary line for all
# (Checks, Failures, Errors, Skipped, and every skipped test with why), and
# each failed suite's failure lines once more at the very end. Every
# server a suite starts listens on its own port (--port 0, or
# tu_free_port below the ephemeral range), so suites do not meet. With
# PATHD_SPEC_LOG set, each suite logs its answers to PATHD_SPEC_LOG.<suite>,
# appended to PATHD_SPEC_LOG at the end. Exit 1 when a suite failed or
# did not finish (its runner's exit status).
set -uo pipefail
bin=$1 jobs=$2
shift 2
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
spec=${PATHD_SPEC_LOG:-}
declare -A pid_of=()
failed=()

run_one() {
    local s=$1 t0=$SECONDS rc
    if [ -n "$spec" ]; then
        CK_RUN_SUITE=$s PATHD_SPEC_LOG=$spec.$s "$bin" >"$logs/$s.out" 2>&1
    else
        CK_RUN_SUITE=$s "$bin" >"$logs/$s.out" 2>&1
    fi
    rc=$?
    echo "$rc $((SECONDS - t0))" >"$logs/$s.rc"
}

report() {
    local s=$1 rc secs
    read -r rc secs <"$logs/$s.rc"
    echo "== suite $s ($secs s, exit $rc) =="
    cat "$logs/$s.out"
    [ "$rc" = 0 ] || failed+=("$s")
}

# Reaps finished suites, printing each, until fewer than $1 run.
reap() {
    local s
    while [ "${#pid_of[@]}" -ge "$1" ]; do
        wait -n 2>/dev/null || true
        for s in "${!pid_of[@]}"; do
            if [ -f "$logs/$s.rc" ]; then
                wait "${pid_of[$s]}" 2>/dev/null || true
                unset "pid_of[$s]"
                report "$s"
            fi
        done
    done
}

for suite in "$@"; do
    reap "$jobs"
    run_one "$suite" &
    pid_of[$suite]=$!
done
reap 1

checks=0 failures=0 errors=0 skipped=0
for s in "$@"; do
    line=$(grep -E '^[0-9]+%: Checks: ' "$logs/$s.out" | tail -n1)
    if [ -z "$line" ]; then
        [[ " ${failed[*]} " == *" $s "* ]] || failed+=("$s")
        continue
    fi
    read -r c f e k < <(sed -E 's/.*Checks: ([0-9]+), Failures: ([0-9]+), Errors: ([0-9]+), Skipped: ([0-9]+).*/\1 \2 \3 \4/' <<<"$line")
    checks=$((checks + c)) failures=$((failures + f)) errors=$((errors + e)) skipped=$((skipped + k))
done
if [ -n "$spec" ]; then
    for s in "$@"; do [ -f "$spec.$s" ] && cat "$spec.$s" >>"$spec" && rm -f "$spec.$s"; done
    touch "$spec"
fi
echo "== all suites: $# suites, Checks: $checks, Failures: $failures, Errors: $errors, Skipped: $skipped =="
for s in "$@"; do grep -h '^  skipped ' "$logs/$s.out"; done
if [ "${#failed[@]}" -gt 0 ]; then
    # Each failed suite's failures again, last: a CI log is often read from
    # its end, and the suite's whole output may stand far above.
    for s in "${failed[@]}"; do
        echo "== $s: its failures (the whole output is above) =="
        grep -E ':[FE]:|Test timeout expired|ThreadSanitizer|AddressSanitizer|runtime error' \
            "$logs/$s.out" | head -n 20
        grep -q -E ':[FE]:' "$logs/$s.out" || tail -n 20 "$logs/$s.out"
    done
    echo "== failed suites: ${failed[*]} =="
    exit 1
fi
exit 0
