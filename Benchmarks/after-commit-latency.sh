#!/usr/bin/env bash
# How long after its request's commit work handed off with `handOff(.afterCommit)` starts: each
# request inserts a row in its SQLite session's transaction (a real WAL file, synchronous=full)
# and hands off one piece of work; the commit's time is taken once the `COMMIT` returned, the
# work's as it starts (Sources/AfterCommitLatency/main.swift). One row per CONCURRENCY.
#
# Usage: bash Benchmarks/after-commit-latency.sh   REQUESTS=20000  CONCURRENCY="16 1"
set -euo pipefail
cd "$(dirname "$0")"
swift build -c release --product AfterCommitLatency >/dev/null
for concurrency in ${CONCURRENCY:-16 1}; do
    CONCURRENCY=$concurrency REQUESTS=${REQUESTS:-20000} .build/release/AfterCommitLatency
done
