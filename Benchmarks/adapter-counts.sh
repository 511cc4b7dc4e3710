#!/usr/bin/env bash
# What the request scope costs on each stack Scoped adapts: one small handler (Benchmarks/
# AdapterServers) served without and with the adapter, counted in the Swift runtime's calls
# and in CPU per request, as server-counts.sh counts the example server.
#
# Vapor and the OpenAPI transport (swift-openapi-hummingbird) are loaded with wrk; gRPC with
# AdapterServers' own unary client, over HTTP/2 on loopback. Uprobes (perf, Debian package
# `linux-perf`; run as root) count the calls in the server's process only; the request count
# divides them. A second run without probes gives the wrk rows (req/s, which move ±20% between
# rounds on a 2-core machine). Usage: bash Benchmarks/adapter-counts.sh
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
    perf probe -q -x "$runtime/libswift_Concurrency.so" adaptercounts:task_allocations=swift_task_alloc
    perf probe -q -x "$runtime/libswiftCore.so" adaptercounts:retains=swift_retain
    perf probe -q -x "$runtime/libswiftCore.so" adaptercounts:objects=swift_allocObject
    perf probe -q -x "$libc" adaptercounts:mallocs=malloc
}
add_probes
events=(-e task-clock -e adaptercounts:switches -e adaptercounts:task_allocations -e adaptercounts:retains
    -e adaptercounts:objects -e adaptercounts:mallocs)
labels=("CPU µs" "executor switches" "task allocations" "retains" "object allocations" "mallocs")

# load STACK PORT SECONDS: runs the stack's load for SECONDS; prints the requests it completed.
load() {
    if [ "$1" = grpc ]; then
        "$server" grpc-load "$2" "$3" 16
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

# count STACK MODE PORT: the calls (and CPU µs) per request during 4 s of load, after 2 s of
# warm-up.
count() {
    start "$1" "$2" "$3"
    load "$1" "$3" 2 >/dev/null
    perf stat -x, "${events[@]}" -p "$pid" -o "$workdir/stat" -- sleep 5 &
    local stat=$!
    sleep 0.2
    local requests
    requests=$(load "$1" "$3" 4)
    wait "$stat"
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
    # task-clock is in ms: µs per request.
    grep -v '^#' "$workdir/stat" | awk -F, -v requests="$requests" \
        'NF > 2 {print ($3 == "task-clock" ? $1 * 1000 : $1) / requests}'
}

# rate STACK MODE PORT: requests per second over 10 s, without probes.
rate() {
    start "$1" "$2" "$3"
    load "$1" "$3" 2 >/dev/null
    local requests
    requests=$(load "$1" "$3" 10)
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
    echo $((requests / 10))
}

port=18151
for stack in vapor openapi grpc; do
    mapfile -t plain < <(count "$stack" plain $port)
    mapfile -t scoped < <(count "$stack" scoped $((port + 1)))
    echo
    echo "### $stack"
    echo
    echo "| per request | without Scoped | with the request scope | difference |"
    echo "|---|---:|---:|---:|"
    for index in "${!labels[@]}"; do
        printf '| %s | %.1f | %.1f | %+.1f |\n' "${labels[$index]}" "${plain[$index]}" "${scoped[$index]}" \
            "$(echo "${scoped[$index]} - ${plain[$index]}" | bc -l)"
    done
    remove_probes
    plain_rate=$(rate "$stack" plain $port)
    scoped_rate=$(rate "$stack" scoped $((port + 1)))
    echo "| requests/s without probes (16 connections, 10 s) | $plain_rate | $scoped_rate | |"
    add_probes
    port=$((port + 2))
done
