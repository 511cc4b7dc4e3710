#!/usr/bin/env bash
# What the request scope costs on each stack Scoped adapts: one small handler (Benchmarks/
# AdapterServers) served without and with the adapter, counted in the Swift runtime's calls
# and in CPU per request, as server-counts.sh counts the example server.
#
# Each handler runs three ways: alone, behind a middleware of the stack that does nothing, and
# behind the adapter (AdapterServers's header says why).
#
# Vapor and the OpenAPI transport (swift-openapi-hummingbird) are loaded with wrk; gRPC with
# AdapterServers' own unary client, over HTTP/2 on loopback. Uprobes (perf, Debian package
# `linux-perf`; run as root) count the calls in the server's process only; the request count
# divides them. Runs without probes give CPU per request (the server's task-clock) and the wrk
# rows (req/s, which move ±20% between rounds on a 2-core machine), two rounds each, in opposite
# orders. Usage: bash Benchmarks/adapter-counts.sh [vapor] [openapi] [grpc]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v perf >/dev/null || { echo "perf is missing: apt-get install linux-perf"; exit 1; }
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk"; exit 1; }
swift build -c release --product AdapterServers >/dev/null 2>&1
source Benchmarks/load-common.sh
server=.build/release/AdapterServers

runtime=$(dirname "$(readlink -f "$(command -v swift)")")/../lib/swift/linux
libc=$(ldconfig -p | awk '/libc.so.6 .*x86-64/ {print $NF; exit}')
workdir=$(mktemp -d)
pid=
remove_probes() { perf probe -q -d 'adaptercounts:*' >/dev/null 2>&1 || true; }
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    remove_probes
    rm -rf "$workdir"
}
remove_probes
trap cleanup EXIT
add_probes() {
    perf probe -q -x "$runtime/libswift_Concurrency.so" adaptercounts:switches=swift_task_switch
    perf probe -q -x "$runtime/libswift_Concurrency.so" adaptercounts:enqueues=swift_task_enqueue
    perf probe -q -x "$runtime/libswift_Concurrency.so" adaptercounts:task_allocations=swift_task_alloc
    perf probe -q -x "$runtime/libswiftCore.so" adaptercounts:retains=swift_retain
    perf probe -q -x "$runtime/libswiftCore.so" adaptercounts:objects=swift_allocObject
    perf probe -q -x "$libc" adaptercounts:mallocs=malloc
}
add_probes
probed_events=(-e adaptercounts:switches -e adaptercounts:enqueues -e adaptercounts:task_allocations
    -e adaptercounts:retains -e adaptercounts:objects -e adaptercounts:mallocs)
events=("${probed_events[@]}")
labels=("executor switches" "jobs enqueued (switches that suspend)" "task allocations" "retains"
    "object allocations" "mallocs")
modes=(plain empty scoped)

# load STACK PORT SECONDS: runs the stack's load for SECONDS; prints the requests it completed.
load() {
    if [ "$1" = grpc ]; then
        "$server" grpc-load "$2" "$3" 16  # 16 concurrent calls, as wrk's 16 connections
    else
        wrk -t2 -c16 -d"$3s" "http://127.0.0.1:$2/movies/1" | awk '/requests in/ {print $1}'
    fi
}

# start STACK MODE PORT: starts a server and waits until it answers.
start() {
    "$server" "$1" "$2" "$3" >"$workdir/$1-$2.log" 2>&1 &
    pid=$!
    if [ "$1" = grpc ]; then
        sleep 2  # the load's first calls fail loudly if it is not listening yet
        return 0
    fi
    wait_for "http://127.0.0.1:$3/movies/1"
}

stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }

# measure STACK MODE PORT SECONDS: after 2 s of warm-up, SECONDS of load while perf counts
# the server's process; prints the requests completed, then one line per counted event.
measure() {
    start "$1" "$2" "$3"
    load "$1" "$3" 2 >/dev/null
    perf stat -x, "${events[@]}" -p "$pid" -o "$workdir/stat" -- sleep $(($4 + 1)) &
    local stat=$!
    sleep 0.2
    load "$1" "$3" "$4"
    wait "$stat"
    stop
    grep -v '^#' "$workdir/stat" | awk -F, 'NF > 2 {print $1}'
}

# per_request LINES...: the counts divided by the request count (the first line).
per_request() { awk 'NR == 1 {n = $1; next} {printf "%.1f\n", $1 / n}'; }

# The stacks to measure: the arguments, or all three.
stacks=("$@")
[ ${#stacks[@]} -gt 0 ] || stacks=(vapor openapi grpc)
port=18151
for stack in "${stacks[@]}"; do
    declare -A counts=()
    for mode in "${modes[@]}"; do
        counts[$mode]=$(measure "$stack" "$mode" $port 4 | per_request)
        port=$((port + 1))
    done
    echo
    echo "### $stack"
    echo
    echo "| per request | without Scoped | empty middleware | with the request scope | scope − empty |"
    echo "|---|---:|---:|---:|---:|"
    for index in "${!labels[@]}"; do
        row=()
        for mode in "${modes[@]}"; do row+=("$(sed -n "$((index + 1))p" <<<"${counts[$mode]}")"); done
        printf '| %s | %s | %s | %s | %+.1f |\n' "${labels[$index]}" "${row[@]}" \
            "$(echo "${row[2]} - ${row[1]}" | bc -l)"
    done
    # Without probes: CPU per request (the server's task-clock over its requests) and req/s,
    # two rounds in opposite orders.
    remove_probes
    events=(-e task-clock)
    declare -A cpu=() rates=()
    for mode in "${modes[@]}" scoped empty plain; do
        mapfile -t result < <(measure "$stack" "$mode" $port 10)
        port=$((port + 1))
        cpu[$mode]+="$(echo "${result[1]} * 1000 / ${result[0]}" | bc -l | xargs printf '%.1f') "
        rates[$mode]+="$((result[0] / 10)) "
    done
    printf '| CPU µs per request, no probes (2 rounds) | %s| %s| %s| |\n' "${cpu[plain]}" "${cpu[empty]}" "${cpu[scoped]}"
    printf '| requests/s, no probes (16 connections, 10 s; 2 rounds) | %s| %s| %s| |\n' \
        "${rates[plain]}" "${rates[empty]}" "${rates[scoped]}"
    events=("${probed_events[@]}")
    add_probes
done
