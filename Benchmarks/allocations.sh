#!/usr/bin/env bash
# Heap allocations per request through the example server (`GET /movies/1`), and their
# largest sources, measured with valgrind's DHAT on the release build.
#
# Two runs of the same server, each started on a copy of the same seeded database and asked
# WARMUP requests first: one stops there, the other serves REQUESTS more. The difference in
# allocated blocks, divided by REQUESTS, is what one request allocates; DHAT's program points,
# compared the same way, name where. Usage: bash Benchmarks/allocations.sh
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${REQUESTS:-2000}
warmup=${WARMUP:-200}
server=${SERVER:-ExampleServer}
command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install valgrind"; exit 1; }
swift build -c release --product "$server" >/dev/null

workdir=$(mktemp -d)
trap 'rm -rf "$workdir"' EXIT

# A seeded database to copy: the development profile seeds an empty one at start-up.
APP_ENV=development DATABASE_PATH="$workdir/seed.sqlite" HTTP_PORT=18190 .build/release/ExampleServer >/dev/null 2>&1 &
seeder=$!
for _ in $(seq 1 100); do curl -fsS http://127.0.0.1:18190/movies/1 >/dev/null 2>&1 && break; sleep 0.1; done
kill -TERM "$seeder"; wait "$seeder" || true

measure() {
    local name=$1 count=$2 port=$3
    for file in "$workdir"/seed.sqlite*; do cp "$file" "${file/seed.sqlite/$name.sqlite}"; done
    APP_ENV=development DATABASE_PATH="$workdir/$name.sqlite" HTTP_PORT=$port \
        valgrind --tool=dhat --dhat-out-file="$workdir/$name.dhat.json" .build/release/"$server" \
        >"$workdir/$name.log" 2>&1 &
    local pid=$!
    for _ in $(seq 1 600); do curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.1; done
    python3 - "$port" "$warmup" "$count" <<'PY'
import http.client, sys
port, warmup, count = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
connection = http.client.HTTPConnection("127.0.0.1", port)
for _ in range(warmup + count):
    connection.request("GET", "/movies/1")
    response = connection.getresponse()
    response.read()
    assert response.status == 200, response.status
PY
    kill -TERM "$pid"
    wait "$pid" || true
}

measure base 0 18191
measure load "$requests" 18192

python3 - "$workdir/base.dhat.json" "$workdir/load.dhat.json" "$requests" <<'PY'
import json, sys
def load(path):
    data = json.load(open(path))
    frames = data["ftbl"]
    points = {}
    for point in data["pps"]:
        stack = [frames[index] for index in point["fs"]]
        key = "\n".join(stack)
        blocks, size = points.get(key, (0, 0))
        points[key] = (blocks + point["tb"], size + point["tl"] if "tl" in point else size + point["tb"])
    total = sum(point["tb"] for point in data["pps"])
    return total, points
base_total, base = load(sys.argv[1])
load_total, loaded = load(sys.argv[2])
requests = int(sys.argv[3])
print(f"allocations per request: {(load_total - base_total) / requests:.1f} "
      f"({load_total - base_total} blocks over {requests} requests)")
deltas = sorted(((blocks - base.get(key, (0, 0))[0], key) for key, (blocks, _) in loaded.items()), reverse=True)
skip = ("malloc", "calloc", "realloc", "swift_slowAlloc", "swift_allocObject", "swift_allocBox", "operator new",
        "swift::", "_swift_", "swift_task_alloc", "ManagedBuffer", "_allocateUninitialized", "allocWithTailElems",
        "ContiguousArrayBuffer", "_ContiguousArrayBuffer", "Array<", "_copyToNewBuffer", "reserveCapacity",
        "swift_retain", "$ss", "_StringGuts", "String", "ByteBuffer", "NIOCore.", "$s7NIOCore")
print("largest sources (allocations per request, first frame outside the allocator and the standard library):")
for delta, key in deltas[:12]:
    frames = key.split("\n")
    named = next((frame for frame in frames[1:] if not any(word in frame for word in skip)), frames[-1])
    print(f"  {delta / requests:5.2f}  {named.strip()[:160]}")
PY
