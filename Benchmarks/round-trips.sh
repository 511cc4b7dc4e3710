#!/usr/bin/env bash
# What a request waits on when PostgreSQL is on another machine: statements per request
# (counted by PostgreSQL itself, pg_stat_statements), PostgreSQL's own CPU per request (its
# processes' /proc/PID/stat) and p50/p99 latency at a fixed load, for
# ExampleServer, HandWiredCatalog (Scoped's sessions passed by hand) and PlainCatalog
# (Hummingbird and postgres-nio alone, as a team writes them today), in one run.
#
# The servers reach PostgreSQL through Benchmarks/delay-proxy.py, which holds every chunk
# DELAY_MS (0.5) in each direction, so a round trip costs at least 2 × DELAY_MS: this kernel has
# no netem qdisc (CONFIG_NET_SCH_NETEM is not set), so `tc netem` on a veth pair cannot add it.
# Release builds; wrk on loopback with CONNECTIONS (4) connections and one thread, DURATION (10)
# seconds a row.
#
# Usage: bash Benchmarks/round-trips.sh      (DELAY_MS=0.5 CONNECTIONS=4 DURATION=10 SKIP_BUILD=1,
#   ROWS=REGEX to run only the rows whose name matches, EXAMPLE=PATH for another ExampleServer
#   binary: an earlier commit's release build, for a change's before and after)
set -euo pipefail
cd "$(dirname "$0")/.."
delay=${DELAY_MS:-0.5}
connections=${CONNECTIONS:-4}
duration=${DURATION:-10}
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk"; exit 1; }
if [ -z "${SKIP_BUILD:-}" ]; then
    for product in ExampleServer HandWiredCatalog PlainCatalog; do swift build -c release --product "$product"; done
fi

pg_extra_options="-c shared_preload_libraries=pg_stat_statements"
source Benchmarks/postgres-cluster.sh
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    stop_postgres
}
trap cleanup EXIT
source Benchmarks/load-common.sh
psql_bench() { "$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -d bench -Atqc "$1"; }
psql_bench "CREATE EXTENSION pg_stat_statements"

proxy_port=$((pg_port + 1))
python3 Benchmarks/delay-proxy.py "$proxy_port" "$pg_port" "$delay" &
pids+=($!)
url="postgres://postgres@127.0.0.1:$proxy_port/bench"
for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$proxy_port") 2>/dev/null && break; sleep 0.1; done
# The round trip the proxy makes, measured: SELECT 1 through it, one client.
select_one=$(mktemp)
echo "SELECT 1;" >"$select_one"
round_trip=$("$pg_bin/pgbench" -h 127.0.0.1 -p "$proxy_port" -U postgres -n -c 1 -T 3 -f "$select_one" bench 2>/dev/null |
    awk '/latency average/ {print $4}')
rm -f "$select_one"

common=(DATABASE_KIND=postgres DATABASE_URL="$url" METRICS_ENABLED=false)
example=${EXAMPLE:-.build/release/ExampleServer}
env APP_ENV=development "${common[@]}" HTTP_PORT=18121 "$example" >/dev/null 2>&1 &
pids+=($!)
wait_for http://127.0.0.1:18121/movies/1
env APP_ENV=multitenant "${common[@]}" HTTP_PORT=18122 "$example" >/dev/null 2>&1 &
pids+=($!)
wait_for http://127.0.0.1:18122/health
env "${common[@]}" HTTP_PORT=18123 .build/release/HandWiredCatalog >/dev/null 2>&1 &
pids+=($!)
wait_for http://127.0.0.1:18123/movies/1
DATABASE_URL="$url" HTTP_PORT=18124 .build/release/PlainCatalog >/dev/null 2>&1 &
pids+=($!)
wait_for http://127.0.0.1:18124/movies/1

# The tenant's catalog: 25 movies, written through ExampleServer (which creates its schema).
for n in $(seq 1 25); do
    curl -fsS -o /dev/null -H 'X-Tenant: acme' -H 'Content-Type: application/json' \
        -d "{\"title\":\"Acme $n\",\"year\":2000}" http://127.0.0.1:18122/movies
done
same() { python3 -c 'import json,sys; a,b=(json.loads(x) for x in sys.argv[1:]); sys.exit(a!=b)' "$1" "$2"; }
same "$(curl -fsS http://127.0.0.1:18121/movies/1)" "$(curl -fsS http://127.0.0.1:18124/movies/1)" \
    || { echo "ExampleServer and PlainCatalog answer GET /movies/1 differently"; exit 1; }
same "$(curl -fsS -H 'X-Tenant: acme' 'http://127.0.0.1:18122/movies?limit=20')" \
    "$(curl -fsS -H 'X-Tenant: acme' 'http://127.0.0.1:18124/movies?limit=20')" \
    || {
        curl -sS -H 'X-Tenant: acme' 'http://127.0.0.1:18122/movies?limit=20'; echo
        curl -sS -H 'X-Tenant: acme' 'http://127.0.0.1:18124/movies?limit=20'; echo
        echo "ExampleServer and PlainCatalog answer a tenant's page differently"
        exit 1
    }

post_script=$(mktemp --suffix=.lua)
printf 'wrk.method = "POST"\nwrk.body = %s\nwrk.headers["Content-Type"] = "application/json"\n' \
    "'{\"title\":\"Load\",\"year\":2001}'" >"$post_script"
tenant_script=$(mktemp --suffix=.lua)
printf 'wrk.headers["X-Tenant"] = "acme"\n' >"$tenant_script"

# to_ms LATENCY: wrk's "512.00us" / "1.20ms" / "1.01s" in milliseconds.
to_ms() { echo "$1" | awk '/us$/ {printf "%.2f", $1 / 1000; next} /ms$/ {printf "%.2f", $1 + 0; next} /s$/ {printf "%.2f", $1 * 1000}'; }

# postgres_ticks: the CPU time (user + system, clock ticks) of every process of the cluster: its
# backends and its background processes, the children of the postmaster.
postgres_ticks() {
    local total=0 pid
    for pid in $(pgrep -P "$(head -1 "$pg_folder/data/postmaster.pid")"); do
        total=$((total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)))
    done
    echo "$total"
}

# row NAME URL [wrk options...]: statements per request (every statement of the database since
# the row began, hand-offs included, over the requests wrk completed), PostgreSQL's CPU per
# request, p50, p99, req/s.
row() {
    local name=$1 url=$2 out requests statements ticks
    shift 2
    [[ "$name" =~ ${ROWS:-.} ]] || return 0
    psql_bench "SELECT pg_stat_statements_reset()" >/dev/null
    ticks=$(postgres_ticks)
    out=$(wrk -t1 -c"$connections" -d"${duration}s" --latency "$@" "$url")
    sleep 1 # work handed off past the last responses
    ticks=$(($(postgres_ticks) - ticks))
    requests=$(echo "$out" | awk '/requests in/ {print $1}')
    statements=$(psql_bench "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'bench') AND query NOT LIKE '%pg_stat_statements%'")
    printf '| %s | %s | %s | %s | %s | %s |\n' "$name" \
        "$(awk -v s="$statements" -v r="$requests" 'BEGIN { printf "%.2f", s / r }')" \
        "$(awk -v t="$ticks" -v r="$requests" -v hz="$ticks_per_second" 'BEGIN { printf "%.0f", t / hz * 1e6 / r }')" \
        "$(to_ms "$(echo "$out" | awk '$1 == "50%" {print $2}')")" \
        "$(to_ms "$(echo "$out" | awk '$1 == "99%" {print $2}')")" \
        "$(echo "$out" | awk '/Requests\/sec/ {printf "%.0f", $2}')"
}

echo "Round trip through the proxy (SELECT 1, pgbench, one client): ${round_trip} ms; delay ${delay} ms each way."
echo
echo "| request, server ($connections connections, ${duration}s, wrk -t1) | statements / request | PostgreSQL CPU µs / request | p50 ms | p99 ms | req/s |"
echo "|---|---:|---:|---:|---:|---:|"
for server in "PlainCatalog 18124" "HandWiredCatalog 18123" "ExampleServer 18121"; do
    set -- $server
    row "GET /movies/1, $1" "http://127.0.0.1:$2/movies/1"
done
# (HandWiredCatalog serves only GET /movies/{id} and POST /movies.)
for server in "PlainCatalog 18124" "ExampleServer 18121"; do
    set -- $server
    row "GET /movies?limit=20, $1" "http://127.0.0.1:$2/movies?limit=20"
done
for server in "PlainCatalog 18124" "ExampleServer (multitenant) 18122"; do
    set -- $server
    port=${!#}
    row "tenant GET /movies?limit=20, ${server% *}" "http://127.0.0.1:$port/movies?limit=20" -s "$tenant_script"
done
for server in "PlainCatalog 18124" "HandWiredCatalog 18123" "ExampleServer 18121"; do
    set -- $server
    row "POST /movies, $1" "http://127.0.0.1:$2/movies" -s "$post_script"
done
rm -f "$post_script" "$tenant_script"
