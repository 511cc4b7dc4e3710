#!/usr/bin/env bash
# Bytes per open scope, from resident memory: 10,000 request scopes held open at once in one
# process (each with one scope service built), and 10,000 idle WebSocket connections held open
# on ExampleServer (each connection is a scope of its own), and 10,000 tenants opened and evicted in
# turn then held open at once. Prints the table rows.
#   CONFIG=release|debug (default release) picks the ExampleServer build; COUNT (default 10000).
# Usage: bash Benchmarks/memory.sh
set -euo pipefail
cd "$(dirname "$0")/.."
config=${CONFIG:-release}
count=${COUNT:-10000}
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

swift build -c release --package-path Benchmarks --product ScopeMemory
swift build -c "$config" --product ExampleServer
memory=Benchmarks/.build/release/ScopeMemory
"$memory" scopes "$count"
"$memory" tenants "$count" | tail -2

workdir=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
APP_ENV=development LOG_LEVEL=warning DATABASE_PATH="$workdir/catalog.sqlite" HTTP_PORT="$port" \
    ".build/$config/ExampleServer" >"$workdir/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$workdir"' EXIT
source Benchmarks/load-common.sh
wait_for "http://127.0.0.1:$port/health"
"$memory" websockets "$port" "$server" "$count" | tail -1
