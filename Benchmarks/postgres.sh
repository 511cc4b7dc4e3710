#!/usr/bin/env bash
# The PostgreSQL rows of ScopedBenchmarks against a throwaway local cluster: Scoped's request
# scope and session, the same statements on a connection leased by hand, and Fluent.
# Needs Debian's `postgresql` binaries. Usage: bash Benchmarks/postgres.sh
set -euo pipefail
cd "$(dirname "$0")"
source ./postgres-cluster.sh
trap stop_postgres EXIT
swift build -c release --product ScopedBenchmarks
.build/release/ScopedBenchmarks "${1:-postgres}"
