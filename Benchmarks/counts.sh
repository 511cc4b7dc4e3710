#!/usr/bin/env bash
# What one operation of a microbenchmark costs in the runtime's calls, counted rather than
# timed: executor switches, task-allocator allocations, retains, object allocations and
# run-time exclusivity checks (an access to a class's stored `var`) per operation. Counts do not
# move with the machine's load, so they show a change that timing on a noisy machine cannot.
#
# Each count is taken with uprobes on the Swift runtime (perf, Debian package `linux-perf`;
# run as root) around a run of N operations and around a run of none, and the difference is
# divided by N. The benchmark runs each matching workload exactly N times
# (`SCOPED_BENCH_OPERATIONS`), so give a filter that matches one workload.
#
# BIN=path/to/ScopedBenchmarks counts a binary built elsewhere (a commit's, copied aside)
# instead of building this tree's.
#
# Usage: bash Benchmarks/counts.sh "2 overrides + 1 scoped resource built"
set -euo pipefail
cd "$(dirname "$0")"
filter=${1:?usage: counts.sh FILTER}
operations=${OPERATIONS:-100000}
command -v perf >/dev/null || { echo "perf is missing: apt-get install linux-perf"; exit 1; }
if [ -n "${BIN:-}" ]; then
    binary=$BIN
else
    swift build -c release --product ScopedBenchmarks >/dev/null 2>&1
    binary=.build/release/ScopedBenchmarks
fi

runtime=$(dirname "$(readlink -f "$(command -v swift)")")/../lib/swift/linux
probes=(
    "libswift_Concurrency.so swift_task_switch executor switches"
    "libswift_Concurrency.so swift_task_alloc task allocations"
    "libswiftCore.so swift_retain retains"
    "libswiftCore.so swift_allocObject object allocations"
    "libswiftCore.so swift_beginAccess exclusivity checks"
)
cleanup() { perf probe -q -d 'counts:*' >/dev/null 2>&1 || true; }
cleanup
trap cleanup EXIT
events=()
for probe in "${probes[@]}"; do
    read -r library function _ <<<"$probe"
    perf probe -q -x "$runtime/$library" "counts:$function=$function" >/dev/null ||
        { echo "could not probe $function; is another probe on it? (perf probe -l)"; exit 1; }
    events+=(-e "counts:$function")
done

count() {
    SCOPED_BENCH_OPERATIONS=$1 perf stat -x, "${events[@]}" "$binary" "$filter" 2>&1 >/dev/null | cut -d, -f1
}
mapfile -t none < <(count 0)
mapfile -t some < <(count "$operations")

echo "| per operation of \"$filter\" | count |"
echo "|---|---:|"
for index in "${!probes[@]}"; do
    read -r _ _ label <<<"${probes[$index]}"
    printf '| %s | %.2f |\n' "$label" "$(echo "(${some[$index]} - ${none[$index]}) / $operations" | bc -l)"
done
