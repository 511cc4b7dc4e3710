#!/usr/bin/env bash
# Load benchmark on PostgreSQL: GET /movies/{id} and POST /movies on ExampleServer
# (DATABASE_KIND=postgres, metrics off) and on HandWiredCatalog, the same stack with the
# sessions and repository passed by hand (its POST records the history after the response in a
# task of its own, as ExampleServer hands it off), both on one throwaway local cluster; release
# builds, wrk on loopback.
# Usage: bash Benchmarks/load-postgres.sh      (DURATION=10 CONNECTIONS=64 ROUNDS=3)
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${DURATION:-10}
connections=${CONNECTIONS:-64}
rounds=${ROUNDS:-3}
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk"; exit 1; }
swift build -c release --product ExampleServer
swift build -c release --product HandWiredCatalog

source Benchmarks/postgres-cluster.sh
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; stop_postgres; }
trap cleanup EXIT
source Benchmarks/load-common.sh
# ExampleServer migrates and seeds the database; the hand-wired server reads the same one.
APP_ENV=development DATABASE_KIND=postgres DATABASE_URL="$POSTGRES_URL" METRICS_ENABLED=false HTTP_PORT=18111 \
    .build/release/ExampleServer >/dev/null 2>&1 &
pids+=($!)
wait_for http://127.0.0.1:18111/movies/1
DATABASE_KIND=postgres DATABASE_URL="$POSTGRES_URL" HTTP_PORT=18112 .build/release/HandWiredCatalog >/dev/null 2>&1 &
pids+=($!)
wait_for http://127.0.0.1:18112/movies/1
[ "$(curl -fsS http://127.0.0.1:18111/movies/1)" = "$(curl -fsS http://127.0.0.1:18112/movies/1)" ] \
    || { echo "the servers answer GET /movies/1 differently"; exit 1; }
post_body='{"title":"Load","year":2001}'
for port in 18111 18112; do
    status=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -d "$post_body" \
        "http://127.0.0.1:$port/movies")
    [ "$status" = 201 ] || { echo "POST /movies on port $port answered $status"; exit 1; }
done
post_script=$(mktemp --suffix=.lua)
printf 'wrk.method = "POST"\nwrk.body = %s\nwrk.headers["Content-Type"] = "application/json"\n' \
    "'$post_body'" >"$post_script"

echo "| server on PostgreSQL (GET /movies/1, $connections connections, ${duration}s, wrk -t2) | req/s | p99 | non-2xx |"
echo "|---|---:|---:|---:|"
for round in $(seq 1 "$rounds"); do
    wrk_row "HandWiredCatalog: session passed by hand (round $round)" http://127.0.0.1:18112/movies/1
    wrk_row "ExampleServer: Scoped request scope (round $round)" http://127.0.0.1:18111/movies/1
done
echo
echo "| server on PostgreSQL (POST /movies, $connections connections, ${duration}s, wrk -t2) | req/s | p99 | non-2xx |"
echo "|---|---:|---:|---:|"
for round in $(seq 1 "$rounds"); do
    wrk_row "HandWiredCatalog: sessions passed by hand (round $round)" http://127.0.0.1:18112/movies -s "$post_script"
    wrk_row "ExampleServer: Scoped request scope, history handed off (round $round)" http://127.0.0.1:18111/movies -s "$post_script"
done
rm -f "$post_script"
