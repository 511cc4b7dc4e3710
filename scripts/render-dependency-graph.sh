#!/usr/bin/env bash
# Renders the example server's dependency graph, as served by GET /debug/graph?format=svg (the
# library's own SVG layout, no Graphviz), to the picture the "Observing a running service"
# article shows.
# Usage: bash scripts/render-dependency-graph.sh
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product ExampleServer
workdir=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
APP_ENV=development DATABASE_PATH="$workdir/catalog.sqlite" HTTP_PORT="$port" .build/debug/ExampleServer \
    >"$workdir/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$workdir"' EXIT
for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.2; done
curl -fsS "http://127.0.0.1:$port/debug/graph?format=svg" -o Sources/ScopedDiagnostics/ScopedDiagnostics.docc/Resources/example-dependency-graph.svg
echo "wrote Sources/ScopedDiagnostics/ScopedDiagnostics.docc/Resources/example-dependency-graph.svg"
