#!/usr/bin/env bash
# What one request costs ExampleServer and HandWiredCatalog in the Swift runtime's calls,
# counted rather than timed (`GET /movies/1`, then `POST /movies`, under wrk): executor switches,
# jobs enqueued, task-allocator allocations, retains, object allocations and mallocs per request.
# Counts do not move with the machine's load, so they compare the two servers where req/s on this
# machine cannot.
#
# Uprobes (perf, Debian package `linux-perf`; run as root) count the calls in each server's
# process during a wrk run; wrk's request count divides them. The probes slow the servers
# down, so the req/s of this run mean nothing. Usage: bash Benchmarks/server-counts.sh
#   SKIP_BUILD=1 (use the current builds)  BIN=DIR (the two servers' folder, by default
#   .build/release: binaries kept aside count an earlier commit)  ROUTES="get post" (either)
#   DATABASES="sqlite postgres" (by default sqlite; postgres starts a throwaway cluster)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v perf >/dev/null || { echo "perf is missing: apt-get install linux-perf"; exit 1; }
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk"; exit 1; }
bin=${BIN:-.build/release}
if [ -z "${SKIP_BUILD:-}" ]; then
    swift build -c release --product ExampleServer >/dev/null 2>&1
    swift build -c release --product HandWiredCatalog >/dev/null 2>&1
fi
source Benchmarks/load-common.sh

runtime=$(dirname "$(readlink -f "$(command -v swift)")")/../lib/swift/linux
libc=$(ldconfig -p | awk '/libc.so.6 .*x86-64/ {print $NF; exit}')
workdir=$(mktemp -d)
pids=()
remove_probes() { perf probe -q -d 'servercounts:*' >/dev/null 2>&1 || true; }
stop_servers() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    pids=()
}
cleanup() {
    stop_servers
    remove_probes
    if declare -F stop_postgres >/dev/null; then stop_postgres; fi
    rm -rf "$workdir"
}
remove_probes
trap cleanup EXIT
perf probe -q -x "$runtime/libswift_Concurrency.so" servercounts:switches=swift_task_switch
perf probe -q -x "$runtime/libswift_Concurrency.so" servercounts:enqueues=swift_task_enqueue
perf probe -q -x "$runtime/libswift_Concurrency.so" servercounts:task_allocations=swift_task_alloc
perf probe -q -x "$runtime/libswiftCore.so" servercounts:retains=swift_retain
perf probe -q -x "$runtime/libswiftCore.so" servercounts:objects=swift_allocObject
perf probe -q -x "$libc" servercounts:mallocs=malloc
events=(-e servercounts:switches -e servercounts:enqueues -e servercounts:task_allocations -e servercounts:retains
    -e servercounts:objects -e servercounts:mallocs)

databases=${DATABASES:-sqlite}
case " $databases " in *" postgres "*) source Benchmarks/postgres-cluster.sh ;; esac

# start_servers DATABASE: ExampleServer on 18141 (development: it migrates and seeds), then
# HandWiredCatalog on 18142, on a copy of the seeded SQLite file or on the same cluster.
start_servers() {
    local example_env=(APP_ENV=development METRICS_ENABLED=false) baseline_env=()
    add_database_env "$1"
    env "${example_env[@]}" HTTP_PORT=18141 "$bin/ExampleServer" >"$workdir/example-$1.log" 2>&1 &
    pids+=($!)
    wait_for http://127.0.0.1:18141/movies/1
    if [ "$1" = sqlite ]; then copy_seeded_database; fi
    env "${baseline_env[@]}" HTTP_PORT=18142 "$bin/HandWiredCatalog" >"$workdir/handwired-$1.log" 2>&1 &
    pids+=($!)
    wait_for http://127.0.0.1:18142/movies/1
}

printf 'wrk.method = "POST"\nwrk.body = %s\nwrk.headers["Content-Type"] = "application/json"\n' \
    "'{\"title\":\"Load\",\"year\":2001}'" >"$workdir/post.lua"

# count PID PORT PATH [wrk options]: each probe's calls per request during 4 s of wrk, after
# 2 s of warm-up.
count() {
    local pid=$1 port=$2 path=$3
    shift 3
    wrk -t2 -c16 -d2s "$@" "http://127.0.0.1:$port$path" >/dev/null
    perf stat -x, "${events[@]}" -p "$pid" -o "$workdir/stat" -- sleep 5 &
    local stat=$!
    sleep 0.2
    local requests
    requests=$(wrk -t2 -c16 -d4s "$@" "http://127.0.0.1:$port$path" | awk '/requests in/ {print $1}')
    wait "$stat"
    grep -v '^#' "$workdir/stat" | awk -F, -v requests="$requests" 'NF > 2 {print $1 / requests}'
}

labels=("executor switches" "jobs enqueued (switches that suspend)" "task allocations" "retains" "object allocations" "mallocs")
for database in $databases; do
    start_servers "$database"
    for route in ${ROUTES:-get post}; do
        case "$route" in
            get) path=/movies/1 options=() title="GET /movies/1" ;;
            post) path=/movies options=(-s "$workdir/post.lua") title="POST /movies" ;;
            *) echo "unknown route $route: get or post"; exit 1 ;;
        esac
        mapfile -t example < <(count "${pids[0]}" 18141 "$path" "${options[@]}")
        mapfile -t handwired < <(count "${pids[1]}" 18142 "$path" "${options[@]}")
        echo "| per request ($title, $database) | HandWiredCatalog | ExampleServer |"
        echo "|---|---:|---:|"
        for index in "${!labels[@]}"; do
            printf '| %s | %.1f | %.1f |\n' "${labels[$index]}" "${handwired[$index]}" "${example[$index]}"
        done
        echo
    done
    stop_servers
done
