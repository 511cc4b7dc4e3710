#!/usr/bin/env bash
# The PostgreSQL rows of ScopedBenchmarks against a throwaway local cluster: Scoped's request
# scope and session against the same statements on a connection leased by hand.
# Needs Debian's `postgresql` binaries; as root the cluster runs as the `postgres` user.
# Usage: bash Benchmarks/postgres.sh
set -euo pipefail
cd "$(dirname "$0")"
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
[ -x "$bin/initdb" ] || { echo "PostgreSQL binaries are missing: apt-get install postgresql"; exit 1; }
folder=$(mktemp -d)
as_owner=()
if [ "$(id -u)" = "0" ]; then chown postgres:postgres "$folder"; as_owner=(runuser -u postgres --); fi
port=$((20000 + RANDOM % 20000))
"${as_owner[@]}" "$bin/initdb" -D "$folder/data" -A trust -U postgres --no-sync -E UTF8 --locale=C >/dev/null
"${as_owner[@]}" "$bin/pg_ctl" -D "$folder/data" -l "$folder/server.log" -w \
    -o "-p $port -k $folder -c listen_addresses=127.0.0.1" start >/dev/null </dev/null
cleanup() { "${as_owner[@]}" "$bin/pg_ctl" -D "$folder/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$folder"; }
trap cleanup EXIT
"$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -Atqc "CREATE DATABASE bench"
swift build -c release --product ScopedBenchmarks
POSTGRES_URL="postgres://postgres@127.0.0.1:$port/bench" .build/release/ScopedBenchmarks "${1:-postgres}"
