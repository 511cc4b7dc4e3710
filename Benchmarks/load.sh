#!/usr/bin/env bash
# Load benchmark: GET /movies/{id} on four servers, release builds, on loopback, with wrk
# (Debian package `wrk`). Bounded: DURATION seconds per run (default 10).
#   - ExampleServer with METRICS_ENABLED=false: every request in a Scoped request scope, the
#     session a scope service; a trace span per request with no tracer bootstrapped.
#   - HandWiredCatalog (root package, Benchmarks/HandWiredCatalog): the same middleware,
#     request IDs, tracing middleware, routing, JSON encoding and one SQLite transaction per
#     request, with the session and repository passed by hand. The pair isolates what Scoped
#     costs.
#   - ExampleServer as shipped: the same with metrics collected into its Prometheus registry
#     (Hummingbird's MetricsMiddleware and the root's metrics). Against the first, what
#     collecting metrics costs.
#   - MinimalCatalog (this package): no middleware and no scope, the smallest possible server.
# Usage: bash Benchmarks/load.sh
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${DURATION:-10}
connections=${CONNECTIONS:-64}
rounds=${ROUNDS:-2}
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk"; exit 1; }

swift build -c release --product ExampleServer
swift build -c release --product HandWiredCatalog
swift build -c release --package-path Benchmarks --product MinimalCatalog

workdir=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$workdir"; }
trap cleanup EXIT

source Benchmarks/load-common.sh

# The example server, development profile: it creates and seeds its database.
APP_ENV=development METRICS_ENABLED=false DATABASE_PATH="$workdir/scoped.sqlite" HTTP_PORT=18101 \
    .build/release/ExampleServer >"$workdir/scoped.log" 2>&1 &
pids+=($!)
wait_for http://127.0.0.1:18101/movies/1
# The other servers read copies of the same seeded file (with its WAL, which holds the seeded
# rows until a checkpoint).
for name in handwired minimal metrics; do
    for file in "$workdir"/scoped.sqlite*; do cp "$file" "${file/scoped.sqlite/$name.sqlite}"; done
done
DATABASE_PATH="$workdir/handwired.sqlite" HTTP_PORT=18102 .build/release/HandWiredCatalog >"$workdir/handwired.log" 2>&1 &
pids+=($!)
DATABASE_PATH="$workdir/minimal.sqlite" HTTP_PORT=18103 Benchmarks/.build/release/MinimalCatalog >"$workdir/minimal.log" 2>&1 &
pids+=($!)
APP_ENV=development DATABASE_PATH="$workdir/metrics.sqlite" HTTP_PORT=18104 \
    .build/release/ExampleServer >"$workdir/metrics.log" 2>&1 &
pids+=($!)
wait_for http://127.0.0.1:18102/movies/1
wait_for http://127.0.0.1:18103/movies/1
wait_for http://127.0.0.1:18104/movies/1
for port in 18101 18102 18103 18104; do
    [ "$(curl -fsS "http://127.0.0.1:$port/movies/1")" = "$(curl -fsS http://127.0.0.1:18101/movies/1)" ] \
        || { echo "the servers answer GET /movies/1 differently"; exit 1; }
done

run() {
    local name=$1 port=$2 scrape=${3:-}
    local scraper=
    # A Prometheus scrape of /metrics every second while the load runs (15 s is the usual).
    if [ -n "$scrape" ]; then
        (while true; do curl -fsS -o /dev/null "http://127.0.0.1:$port/metrics"; sleep 1; done) &
        scraper=$!
    fi
    wrk_row "$name" "http://127.0.0.1:$port/movies/1"
    [ -z "$scraper" ] || kill "$scraper" 2>/dev/null || true
}

echo "| server (GET /movies/1, $connections connections, ${duration}s, wrk -t2) | req/s | p99 | non-2xx |"
echo "|---|---:|---:|---:|"
for round in $(seq 1 "$rounds"); do
    run "HandWiredCatalog: same stack, session passed by hand (round $round)" 18102
    run "ExampleServer, metrics off: Scoped request scope (round $round)" 18101
    run "ExampleServer, metrics collected into Prometheus, scraped every second (round $round)" 18104 scrape
    run "MinimalCatalog: no middleware, no scope (round $round)" 18103
done
