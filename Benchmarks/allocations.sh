#!/usr/bin/env bash
# Heap allocations per request through the example server (`GET /movies/1`), and their
# largest sources, counted with uprobes on libc's allocation functions (perf, Debian package
# `linux-perf`) on the release build. (valgrind's DHAT, the first choice, cannot run the Swift
# runtime here: it reads no DWARF 5 and crashes in libdispatch's signal thread.)
#
# The server is started on a seeded database and warmed up with WARMUP requests; then
# `perf stat` counts the allocation calls during REQUESTS more, and `perf record -g` samples
# their call stacks during another REQUESTS. Usage: bash Benchmarks/allocations.sh
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${REQUESTS:-2000}
warmup=${WARMUP:-200}
server=${SERVER:-ExampleServer}
command -v perf >/dev/null || { echo "perf is missing: apt-get install linux-perf"; exit 1; }
swift build -c release --product "$server" >/dev/null 2>&1

libc=$(ldconfig -p | awk '/libc.so.6 .*x86-64/ {print $NF; exit}')
functions=(malloc calloc realloc posix_memalign aligned_alloc)
events=()
for function in "${functions[@]}"; do
    perf probe -q -d "probe_libc:$function" >/dev/null 2>&1 || true
    perf probe -q -x "$libc" "$function" >/dev/null
    events+=(-e "probe_libc:$function")
done

workdir=$(mktemp -d)
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    for function in "${functions[@]}"; do perf probe -q -d "probe_libc:$function" >/dev/null 2>&1 || true; done
    [ -n "${KEEP:-}" ] && echo "kept $workdir" || rm -rf "$workdir"
}
trap cleanup EXIT

APP_ENV=development DATABASE_PATH="$workdir/catalog.sqlite" HTTP_PORT=18190 .build/release/"$server" \
    >"$workdir/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do curl -fsS http://127.0.0.1:18190/movies/1 >/dev/null 2>&1 && break; sleep 0.1; done

client() {
    python3 - "$1" <<'PY'
import http.client, sys
connection = http.client.HTTPConnection("127.0.0.1", 18190)
for _ in range(int(sys.argv[1])):
    connection.request("GET", "/movies/1")
    response = connection.getresponse()
    response.read()
    assert response.status == 200, response.status
PY
}

client "$warmup"
perf stat -x, "${events[@]}" -p "$server_pid" -o "$workdir/stat.csv" -- bash -c "$(declare -f client); client $requests"
total=$(awk -F, '/probe_libc/ {sum += $1} END {print sum}' "$workdir/stat.csv")
echo "allocations per request: $(python3 -c "print(f'{$total / $requests:.1f}')") ($total allocation calls over $requests requests)"
awk -F, '/probe_libc/ {printf "  %-28s %s\n", $3, $1}' "$workdir/stat.csv"

perf record -q -g "${events[@]}" -p "$server_pid" -o "$workdir/perf.data" -- bash -c "$(declare -f client); client $requests" \
    >/dev/null 2>&1
echo "largest sources: allocation calls per request by the first frame outside libc, the Swift runtime and the standard library"
perf script -i "$workdir/perf.data" -F ip,sym 2>/dev/null | python3 -c '
import collections, re, subprocess, sys
requests = int(sys.argv[1])
skip_prefixes = ("$ss", "$sS", "swift_", "swift::", "_swift", "malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc",
                 "[unknown]", "__libc", "_int_malloc")
counts = collections.Counter()
stack = []
def flush():
    for frame in stack:
        if not frame.startswith(skip_prefixes):
            counts[frame] += 1
            return
    if stack:
        counts[stack[-1]] += 1
for line in sys.stdin:
    parts = line.strip().split(None, 1)
    if not parts:
        flush()
        stack = []
        continue
    stack.append(parts[1] if len(parts) > 1 else parts[0])
flush()
frames = list(counts)
def demangle(flags):
    return subprocess.run(["swift", "demangle", "--compact"] + flags, input="\n".join(frames),
                          capture_output=True, text=True).stdout.split("\n")
modules = collections.Counter()
for frame, readable in zip(frames, demangle([])):
    found = [m for m in re.findall(r"\b([A-Z][A-Za-z0-9_]*)\.", readable) if m != "Swift"]
    modules[found[0] if found else "C libraries"] += counts[frame]
print("  by module:", ", ".join(f"{name} {count / requests:.1f}" for name, count in modules.most_common(10)))
print("  by function:")
for frame, readable in sorted(zip(frames, demangle(["--simplified"])), key=lambda pair: -counts[pair[0]])[:6]:
    print(f"  {counts[frame] / requests:5.1f}  {readable[:140]}")
' "$requests"
