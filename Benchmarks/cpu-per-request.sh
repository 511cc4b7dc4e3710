#!/usr/bin/env bash
# The measurement of record: CPU time per request of ExampleServer against HandWiredCatalog (the
# same stack, sessions and repository passed by hand), release builds side by side on this
# machine, in interleaved rounds (A B, B A, ...).
#
# Each round runs wrk (-t1, CONNECTIONS connections, DURATION s) against one server and reads
# that server's CPU time (utime + stime, /proc/PID/stat) before and after; CPU per request is
# the difference over wrk's request count. Each table row gives both servers' medians, and the
# median and range of the per-round ratio ExampleServer / HandWiredCatalog. Rows: GET /movies/1
# and POST /movies, on SQLite and PostgreSQL, in the development and production profiles, with
# METRICS_ENABLED=false. `server-counts.sh` counts the runtime calls behind the difference.
#
# Usage: bash Benchmarks/cpu-per-request.sh
#   ROUNDS=10 DURATION=4 CONNECTIONS=16 DATABASES="sqlite postgres"
#   PROFILES="development production" ROUTES="get post" SKIP_BUILD=1 (use the current builds)
#   BIN=DIR (the two servers' folder, by default .build/release: binaries kept aside measure an
#   earlier commit)
#   BEFORE=DIR compares ExampleServer with the ExampleServer in DIR (an earlier commit's release
#   build kept aside) instead of with HandWiredCatalog: a change's CPU per request, before and
#   after, in the same interleaved rounds
#   PIN=1 runs both servers on CPU 1 and wrk on CPU 0 (taskset): on a 2-core machine the rounds
#   then agree within a few percent, where unpinned they range over ±30%; the servers' threads
#   then share one core, so the figures are not those of an unpinned server
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-10}
duration=${DURATION:-4}
connections=${CONNECTIONS:-16}
databases=${DATABASES:-sqlite postgres}
profiles=${PROFILES:-development production}
routes=${ROUTES:-get post}
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk"; exit 1; }
if [ -z "${SKIP_BUILD:-}" ]; then
    swift build -c release --product ExampleServer >/dev/null
    swift build -c release --product HandWiredCatalog >/dev/null
fi
source Benchmarks/load-common.sh
bin=${BIN:-.build/release}
if [ -n "${BEFORE:-}" ]; then
    baseline="$BEFORE/ExampleServer"
    baseline_label="ExampleServer before ($BEFORE)"
else
    baseline="$bin/HandWiredCatalog"
    baseline_label=HandWiredCatalog
fi
[ -x "$baseline" ] || { echo "no server at $baseline"; exit 1; }

manage_servers
server_cpu=() wrk_cpu=()
if [ -n "${PIN:-}" ]; then server_cpu=(taskset -c 1) wrk_cpu=(taskset -c 0); fi
printf 'wrk.method = "POST"\nwrk.body = %s\nwrk.headers["Content-Type"] = "application/json"\n' \
    "'{\"title\":\"Load\",\"year\":2001}'" >"$workdir/post.lua"


# measure PID URL [wrk options]: microseconds of the server's CPU per request over one wrk run.
measure() {
    local pid=$1 url=$2 before after requests
    shift 2
    before=$(cpu_ticks "$pid")
    requests=$("${wrk_cpu[@]}" wrk -t1 -c"$connections" -d"${duration}s" "$@" "$url" | awk '/requests in/ {print $1}')
    after=$(cpu_ticks "$pid")
    awk -v b="$before" -v a="$after" -v n="$requests" -v hz="$ticks_per_second" \
        'BEGIN { printf "%.2f\n", (a - b) * 1e6 / hz / n }'
}

# start BINARY PORT ENV...: starts a release server with ENV and waits for GET /movies/1.
start() {
    local binary=$1 port=$2
    shift 2
    "${server_cpu[@]}" env "$@" HTTP_PORT="$port" "$binary" >"$workdir/$(basename "$binary")-$port.log" 2>&1 &
    pids+=($!)
    wait_for "http://127.0.0.1:$port/movies/1"
}

echo "| CPU per request, $rounds interleaved rounds of ${duration} s (wrk -t1 -c$connections) | $baseline_label (median) | ExampleServer (median) | ratio, median (range) |"
echo "|---|---:|---:|---:|"
for database in $databases; do
    for profile in $profiles; do
        example_env=(APP_ENV="$profile" METRICS_ENABLED=false)
        # The hand-wired server serves the profile's routes (no debug routes in production).
        baseline_env=(APP_ENV="$profile")
        # Another ExampleServer as the baseline runs as this one does, on a database of its own.
        [ -z "${BEFORE:-}" ] || baseline_env=(APP_ENV="$profile" METRICS_ENABLED=false)
        rm -f "$workdir"/*.sqlite*
        add_database_env "$database"
        # The development profile migrates and seeds the database; the production profile then
        # serves the seeded one, and the hand-wired server a copy of it (or the same cluster).
        start "$bin/ExampleServer" 18151 "${example_env[@]/APP_ENV=$profile/APP_ENV=development}"
        stop_servers
        if [ "$database" = sqlite ]; then copy_seeded_database; fi
        start "$bin/ExampleServer" 18151 "${example_env[@]}"
        start "$baseline" 18152 "${baseline_env[@]}"
        for route in $routes; do
            options=()
            url=/movies/1
            if [ "$route" = post ]; then options=(-s "$workdir/post.lua"); url=/movies; fi
            # Warm both up.
            wrk -t1 -c"$connections" -d1s "${options[@]}" "http://127.0.0.1:18151$url" >/dev/null
            wrk -t1 -c"$connections" -d1s "${options[@]}" "http://127.0.0.1:18152$url" >/dev/null
            : >"$workdir/rounds"
            for round in $(seq 1 "$rounds"); do
                if [ $((round % 2)) = 1 ]; then
                    handwired=$(measure "${pids[1]}" "http://127.0.0.1:18152$url" "${options[@]}")
                    example=$(measure "${pids[0]}" "http://127.0.0.1:18151$url" "${options[@]}")
                else
                    example=$(measure "${pids[0]}" "http://127.0.0.1:18151$url" "${options[@]}")
                    handwired=$(measure "${pids[1]}" "http://127.0.0.1:18152$url" "${options[@]}")
                fi
                echo "$handwired $example" >>"$workdir/rounds"
                [ -z "${VERBOSE:-}" ] || echo "  round $round: hand-wired $handwired µs, ExampleServer $example µs" >&2
            done
            label="$(tr '[:lower:]' '[:upper:]' <<<"$route") $url, $database, $profile"
            sort -n -k1 "$workdir/rounds" | awk '{ print $1 }' >"$workdir/a"
            sort -n -k2 "$workdir/rounds" | awk '{ print $2 }' >"$workdir/b"
            awk '{ printf "%.4f\n", $2 / $1 }' "$workdir/rounds" | sort -n >"$workdir/r"
            median() { awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }' "$1"; }
            printf '| %s | %.1f µs | %.1f µs | **%.2f** (%.2f–%.2f) |\n' "$label" "$(median "$workdir/a")" \
                "$(median "$workdir/b")" "$(median "$workdir/r")" "$(head -1 "$workdir/r")" "$(tail -1 "$workdir/r")"
        done
        stop_servers
    done
done
