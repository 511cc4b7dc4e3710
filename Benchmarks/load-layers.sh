#!/usr/bin/env bash
# Splits the load gap between HandWiredCatalog and ExampleServer into Scoped's layers:
# GET /movies/{id} on SQLite, release builds, wrk on loopback, on four servers:
#   - HandWiredCatalog, SCOPE_LAYER=none: no request scope, the session made by hand.
#   - HandWiredCatalog, SCOPE_LAYER=scope: a request scope around every request (on a root
#     holding the SQLite services), which builds nothing; the session still made by hand.
#   - HandWiredCatalog, SCOPE_LAYER=session: the same scope, and the handler reads its
#     repository from it, whose session is the scope's SQLiteSessionKey service.
#   - ExampleServer, METRICS_ENABLED=false: all of the above, and its own overrides rule,
#     routes and configuration.
# Every round runs the four in a rotated order; each row has the server's CPU time per request
# (utime + stime around the run), and the script ends with each server's median ratios to `none`
# over the rounds (throughput and CPU per request), the figures to trust on a machine this noisy.
# Usage: bash Benchmarks/load-layers.sh      (DURATION=10 CONNECTIONS=64 ROUNDS=5)
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${DURATION:-10}
connections=${CONNECTIONS:-64}
rounds=${ROUNDS:-5}
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk"; exit 1; }
swift build -c release --product ExampleServer
swift build -c release --product HandWiredCatalog
source Benchmarks/load-common.sh

workdir=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$workdir"; }
trap cleanup EXIT

APP_ENV=development METRICS_ENABLED=false DATABASE_PATH="$workdir/example.sqlite" HTTP_PORT=18121 \
    .build/release/ExampleServer >"$workdir/example.log" 2>&1 &
pids+=($!)
wait_for http://127.0.0.1:18121/movies/1
names=(none scope session)
for index in 0 1 2; do
    name=${names[$index]}
    for file in "$workdir"/example.sqlite*; do cp "$file" "${file/example.sqlite/$name.sqlite}"; done
    SCOPE_LAYER=$name DATABASE_PATH="$workdir/$name.sqlite" HTTP_PORT=$((18122 + index)) \
        .build/release/HandWiredCatalog >"$workdir/$name.log" 2>&1 &
    pids+=($!)
    wait_for "http://127.0.0.1:$((18122 + index))/movies/1"
    [ "$(curl -fsS "http://127.0.0.1:$((18122 + index))/movies/1")" = "$(curl -fsS http://127.0.0.1:18121/movies/1)" ] \
        || { echo "SCOPE_LAYER=$name answers GET /movies/1 differently"; exit 1; }
done

labels=("HandWiredCatalog, SCOPE_LAYER=none" "HandWiredCatalog, SCOPE_LAYER=scope" \
    "HandWiredCatalog, SCOPE_LAYER=session" "ExampleServer, metrics off")
ports=(18122 18123 18124 18121)
servers=("${pids[1]}" "${pids[2]}" "${pids[3]}" "${pids[0]}")
rows=$workdir/rows
echo "| server (GET /movies/1, $connections connections, ${duration}s, wrk -t2) | req/s | p99 | non-2xx | CPU per request |"
echo "|---|---:|---:|---:|---:|"
for round in $(seq 1 "$rounds"); do
    for step in 0 1 2 3; do
        index=$(((step + round - 1) % 4))
        # The server's CPU time (utime + stime) around the run, over the requests it answered.
        before=$(cpu_ticks "${servers[$index]}")
        row=$(wrk_row "${labels[$index]} (round $round)" "http://127.0.0.1:${ports[$index]}/movies/1")
        after=$(cpu_ticks "${servers[$index]}")
        cpu=$(awk -v b="$before" -v a="$after" -v r="$(cut -d'|' -f3 <<<"$row")" -v d="$duration" -v hz="$ticks_per_second" \
            'BEGIN { printf "%.1f µs", (a - b) * 1e6 / hz / (r * d) }')
        echo "$row $cpu |" | tee -a "$rows"
    done
done
echo
echo "Median over the rounds of each server's throughput, and of its CPU per request, against"
echo "SCOPE_LAYER=none in the same round:"
python3 - "$rows" <<'PY'
import re, statistics, sys
rounds = {}
for line in open(sys.argv[1]):
    m = re.match(r"\| (.*) \(round (\d+)\) \| ([\d.]+) \|.*\| ([\d.]+) µs \|$", line)
    if m:
        rounds.setdefault(int(m.group(2)), {})[m.group(1)] = (float(m.group(3)), float(m.group(4)))
names = list(next(iter(rounds.values())).keys())
base = "HandWiredCatalog, SCOPE_LAYER=none"
for name in sorted(names, key=lambda n: -statistics.median(r[n][0] / r[base][0] for r in rounds.values())):
    ratios = [r[name][0] / r[base][0] for r in rounds.values()]
    cpu = [r[name][1] / r[base][1] for r in rounds.values()]
    print(f"  {name}: req/s {statistics.median(ratios):.2f}x  (rounds: {', '.join(f'{x:.2f}' for x in ratios)}); "
          f"CPU per request {statistics.median(cpu):.2f}x  (rounds: {', '.join(f'{x:.2f}' for x in cpu)})")
PY
