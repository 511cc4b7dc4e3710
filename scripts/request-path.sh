#!/usr/bin/env bash
# The request path, counted: which files of Sources/ one `GET /movies/1` runs through on
# ExampleServer (SQLite, development), found with LLVM's coverage counters rather than by reading.
#
# Two runs of a coverage build: one starts the server, answers one `GET /health` and stops; the
# other does the same and answers COUNT (default 50) `GET /movies/1` between. A function is on
# the request path when the second run ran it at least COUNT times more than the first: every
# request ran it, and nothing timed (a sweeper, a pool's idle check) runs that often by chance.
# Prints the files, each with its lines and the functions counted, then the totals.
#   SKIP_BUILD=1 reuses .build-coverage; COUNT sets the number of requests.
# Usage: bash scripts/request-path.sh
set -euo pipefail
cd "$(dirname "$0")/.."
count=${COUNT:-50}
build=.build-coverage
workdir=$(mktemp -d)
trap 'rm -rf "$workdir"' EXIT
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    # The macro plugin is built with counters too, and writes a profile each time the build runs it.
    LLVM_PROFILE_FILE="$workdir/build-%p.profraw" swift build --product ExampleServer --build-path "$build" \
        -Xswiftc -profile-generate -Xswiftc -profile-coverage-mapping >&2
fi
binary="$build/debug/ExampleServer"
source Benchmarks/load-common.sh
# The toolchain's own: a profile is read only by the LLVM that wrote it.
toolchain=$(dirname "$(readlink -f "$(command -v swift)")")

# run NAME REQUESTS: one server run answering REQUESTS `GET /movies/1`, its profile in NAME.profdata.
run() {
    local name=$1 requests=$2 port=$((20000 + RANDOM % 20000))
    rm -f "$workdir/catalog.sqlite"*
    APP_ENV=development LOG_LEVEL=warning DATABASE_PATH="$workdir/catalog.sqlite" HTTP_PORT="$port" \
        LLVM_PROFILE_FILE="$workdir/$name.profraw" "$binary" >"$workdir/$name.log" 2>&1 &
    local server=$!
    wait_for "http://127.0.0.1:$port/health"
    for _ in $(seq 1 "$requests"); do curl -fsS "http://127.0.0.1:$port/movies/1" >/dev/null; done
    kill -TERM "$server"
    wait "$server" || true
    "$toolchain/llvm-profdata" merge -o "$workdir/$name.profdata" "$workdir/$name.profraw"
    "$toolchain/llvm-cov" export -format=text -skip-expansions -instr-profile "$workdir/$name.profdata" "$binary" \
        >"$workdir/$name.json"
}
run idle 0
run requests "$count"

python3 - "$workdir/idle.json" "$workdir/requests.json" "$count" "$PWD/Sources/" <<'PY'
import collections, json, sys
idle_path, requests_path, count, sources = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

def counts(path):
    functions = json.load(open(path))["data"][0]["functions"]
    return {(f["name"], f["filenames"][0]): f["count"] for f in functions if f["filenames"][0].startswith(sources)}

idle, requests = counts(idle_path), counts(requests_path)
on_path = collections.defaultdict(int)
for (name, file), n in requests.items():
    if n - idle.get((name, file), 0) >= count:
        on_path[file[len(sources):]] += 1
modules = sorted({file.split("/")[0] for file in on_path})
lines = {file: sum(1 for _ in open(sources + file)) for file in on_path}
for file in sorted(on_path):
    print(f"{file}\t{lines[file]} lines\t{on_path[file]} functions")
print(f"{len(on_path)} files, {sum(lines.values())} lines, {len(modules)} modules ({', '.join(modules)})")
PY
