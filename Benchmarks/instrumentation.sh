#!/usr/bin/env bash
# What instrumentation costs when no tracer and no metrics backend is bootstrapped: the
# request-scope rows of ScopedBenchmarks, built twice, with Scoped's `Instrumentation` trait
# (the default) and with it disabled (spans and metrics compiled out), run alternately in one
# session so that both see the same machine.
# Usage: bash Benchmarks/instrumentation.sh            (ROUNDS=3, FILTER="request scope")
set -euo pipefail
cd "$(dirname "$0")"
rounds=${ROUNDS:-3}
filter=${FILTER:-request scope}

swift build -c release --product ScopedBenchmarks
SCOPED_INSTRUMENTATION=off swift build -c release --scratch-path .build-uninstrumented --product ScopedBenchmarks

results=$(mktemp)
trap 'rm -f "$results"' EXIT
for round in $(seq 1 "$rounds"); do
    for build in instrumented compiled-out; do
        binary=.build/release/ScopedBenchmarks
        [ "$build" = compiled-out ] && binary=.build-uninstrumented/release/ScopedBenchmarks
        # Rows look like: | group | workload | ns/op | … ; keep the workload and its ns/op.
        "$binary" "$filter" | awk -F'|' -v build="$build" 'NR > 2 { gsub(/^ +| +$/, "", $3); gsub(/ /, "", $4); print build "\t" $3 "\t" $4 }' >>"$results"
    done
done

echo "| workload | instrumented, nothing bootstrapped (median ns) | compiled out (median ns) | ratio |"
echo "|---|---:|---:|---:|"
python3 - "$results" <<'PY'
import statistics, sys
rows = {}
order = []
for line in open(sys.argv[1]):
    build, workload, ns = line.rstrip("\n").split("\t")
    if workload not in rows:
        rows[workload] = {"instrumented": [], "compiled-out": []}
        order.append(workload)
    rows[workload][build].append(float(ns))
for workload in order:
    on = statistics.median(rows[workload]["instrumented"])
    off = statistics.median(rows[workload]["compiled-out"])
    print(f"| {workload} | {on:,.1f} | {off:,.1f} | {on / off:.3f}× |")
PY
