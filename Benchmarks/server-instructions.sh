#!/usr/bin/env bash
# Instructions per request of ExampleServer against HandWiredCatalog, counted exactly: each
# release server runs under valgrind's callgrind, serves a fixed number of requests
# (`GET /movies/1`, `POST /movies`), and the instructions it executed meanwhile, less what it
# executes idle over the same time, are divided by that number.
#
# CPU time per request (cpu-per-request.sh) is the measurement of record, and on a 2-core VM its
# rounds range over ±15%; an instruction count is the same from run to run within about 0.5%,
# whatever else the machine does, so it shows a change of 1% that CPU time cannot. It does not
# count what instructions cost: cache misses, branch mispredictions and the kernel's work
# (`CACHE=1` adds callgrind's simulated caches and branch predictor, per request).
#
# valgrind (Debian's 3.19) cannot read the DWARF 5 debug information of a Swift 6 build, so the
# servers run from copies without it (`objcopy --strip-debug`, symbols kept), with
# instructions/sigsuspend-shim.c preloaded (see there). Under valgrind a server is about 50
# times slower and runs one thread at a time; its req/s mean nothing.
#
# Usage: bash Benchmarks/server-instructions.sh
#   REQUESTS=400 (per row)  CONNECTIONS=16  ROUTES="get post"  DATABASES="sqlite postgres"
#   (by default sqlite; postgres starts a throwaway cluster)  LAYERS="scope session" (also the
#   hand-wired server with SCOPE_LAYER set, SQLite only: Scoped's layers one at a time)
#   CACHE=1  SKIP_BUILD=1  BIN=DIR (the two servers' folder, by default .build/release)
#   BEFORE=DIR compares ExampleServer with the ExampleServer in DIR (an earlier commit's release
#   build kept aside) instead of with HandWiredCatalog: a change's instructions, before and after
#   PLAIN=1 (with DATABASES=postgres) compares ExampleServer with PlainCatalog instead, the
#   routes on Hummingbird and postgres-nio alone: what Scoped's guarantees cost against code a
#   team writes today
#   KEEP=DIR (keeps each row's callgrind file there, named SERVER-ROUTE-DATABASE.callgrind (the
#   baseline's as Baseline-ROUTE-DATABASE), for
#   `instructions/compare.py`, which says where two of them differ)
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in valgrind callgrind_control objcopy cc python3; do
    command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install valgrind binutils gcc python3"; exit 1; }
done
requests=${REQUESTS:-400}
connections=${CONNECTIONS:-16}
routes=${ROUTES:-get post}
databases=${DATABASES:-sqlite}
layers=${LAYERS:-}
idle_seconds=10
bin=${BIN:-.build/release}
if [ -z "${SKIP_BUILD:-}" ]; then
    swift build -c release --product ExampleServer >/dev/null
    swift build -c release --product HandWiredCatalog >/dev/null
    [ -z "${PLAIN:-}" ] || swift build -c release --product PlainCatalog >/dev/null
fi
source Benchmarks/load-common.sh

# Killed: the counts are in the dumps already, and a server under valgrind can take minutes to
# shut down gracefully.
stop_signal=KILL
manage_servers
[ -z "${KEEP:-}" ] || mkdir -p "$KEEP"
cc -shared -fPIC -O2 Benchmarks/instructions/sigsuspend-shim.c -o "$workdir/sigsuspend-shim.so"
objcopy --strip-debug "$bin/ExampleServer" "$workdir/ExampleServer"
if [ -n "${BEFORE:-}" ]; then
    objcopy --strip-debug "$BEFORE/ExampleServer" "$workdir/Baseline"
    baseline_label="ExampleServer before ($BEFORE)"
elif [ -n "${PLAIN:-}" ]; then
    objcopy --strip-debug "$bin/PlainCatalog" "$workdir/Baseline"
    baseline_label=PlainCatalog
else
    objcopy --strip-debug "$bin/HandWiredCatalog" "$workdir/Baseline"
    baseline_label=HandWiredCatalog
fi
cache_options=()
[ -z "${CACHE:-}" ] || cache_options=(--cache-sim=yes --branch-sim=yes)

# counted SERVER ROUTE LABEL ENV...: starts SERVER under callgrind with ENV, warms it up, and
# prints "INSTRUCTIONS [I1-misses D1-misses branch-mispredictions]" per request for $requests
# requests of ROUTE.
counted() {
    local server=$1 route=$2 label=$3 port=18161 out started ended
    shift 3
    out="$workdir/$label.callgrind"
    env "$@" HTTP_PORT=$port METRICS_ENABLED=false LD_PRELOAD="$workdir/sigsuspend-shim.so" \
        valgrind --tool=callgrind "${cache_options[@]}" --callgrind-out-file="$out" "$workdir/$server" \
        >"$workdir/$label.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 1 600); do curl -fsS -m 10 "http://127.0.0.1:$port/movies/1" >/dev/null 2>&1 && break; sleep 0.5; done
    python3 Benchmarks/instructions/fixed-requests.py $port "$route" 100 "$connections"
    # What it does under load, then what it does idle for as long (its timers), as two dumps.
    callgrind_control --zero "${pids[0]}" >/dev/null 2>&1
    started=$(date +%s.%N)
    python3 Benchmarks/instructions/fixed-requests.py $port "$route" "$requests" "$connections"
    ended=$(date +%s.%N)
    callgrind_control --dump "${pids[0]}" >/dev/null 2>&1
    callgrind_control --zero "${pids[0]}" >/dev/null 2>&1
    sleep $idle_seconds
    callgrind_control --dump "${pids[0]}" >/dev/null 2>&1
    stop_servers
    [ -z "${KEEP:-}" ] || cp "$out.1" "$KEEP/$label.callgrind"
    # summary: Ir [Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim]
    paste <(awk '/^summary:/ {$1 = ""; print}' "$out.1") <(awk '/^summary:/ {$1 = ""; print}' "$out.2") |
        awk -v n="$requests" -v t="$(awk -v a="$started" -v b="$ended" 'BEGIN {print b - a}')" -v s=$idle_seconds '{
            half = NF / 2
            for (i = 1; i <= half; i++) v[i] = ($i - $(i + half) * t / s) / n
            if (half > 1) printf "%.0f %.0f %.0f %.0f\n", v[1], v[4], v[5] + v[6], v[11] + v[13]
            else printf "%.0f\n", v[1]
        }'
}

if [ -n "${CACHE:-}" ]; then
    echo "| per request, $requests requests over $connections connections | $baseline_label: instructions, I1 misses, D1 misses, mispredicted branches | ExampleServer | ratio (instructions) |"
    echo "|---|---:|---:|---:|"
else
    echo "| instructions per request, $requests requests over $connections connections | $baseline_label | ExampleServer | ratio |"
    echo "|---|---:|---:|---:|"
fi
for database in $databases; do
    example_env=(APP_ENV=development)
    baseline_env=()
    # Another ExampleServer as the baseline runs as this one does, on a database of its own.
    [ -z "${BEFORE:-}" ] || baseline_env=(APP_ENV=development)
    add_database_env "$database"
    # ExampleServer's development profile migrates and seeds the database (and the cluster the
    # hand-wired server then shares); the hand-wired server gets a copy of the seeded file.
    start_seeding() {
        env "${example_env[@]}" HTTP_PORT=18162 "$bin/ExampleServer" >"$workdir/seed.log" 2>&1 &
        pids+=($!)
        wait_for http://127.0.0.1:18162/movies/1
        stop_servers
        if [ "$database" = sqlite ]; then copy_seeded_database; fi
    }
    for route in $routes; do
        rm -f "$workdir"/*.sqlite*
        start_seeding
        baseline=$(counted Baseline "$route" "Baseline-$route-$database" "${baseline_env[@]}")
        example=$(counted ExampleServer "$route" "ExampleServer-$route-$database" "${example_env[@]}")
        label="$(tr '[:lower:]' '[:upper:]' <<<"$route") $([ "$route" = post ] && echo /movies || echo /movies/1), $database"
        # With CACHE=1 each figure is four numbers, written a/b/c/d; the ratio is the first's.
        printf '| %s | %s | %s | **%.3f** |\n' "$label" "$(tr ' ' / <<<"$baseline")" "$(tr ' ' / <<<"$example")" \
            "$(awk -v a="${example%% *}" -v b="${baseline%% *}" 'BEGIN {print a / b}')"
        if [ "$database" = sqlite ] && [ -z "${BEFORE:-}" ]; then
            for layer in $layers; do
                rm -f "$workdir"/handwired.sqlite*
                copy_seeded_database
                layered=$(counted Baseline "$route" "HandWiredCatalog-$layer-$route-$database" "${baseline_env[@]}" SCOPE_LAYER="$layer")
                printf '| %s, HandWiredCatalog with `SCOPE_LAYER=%s` | %s | %s | **%.3f** |\n' "$label" "$layer" "${baseline%% *}" \
                    "$(tr ' ' / <<<"$layered")" "$(awk -v a="${layered%% *}" -v b="${baseline%% *}" 'BEGIN {print a / b}')"
            done
        fi
    done
done
