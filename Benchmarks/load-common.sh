# Shared by the load scripts (sourced): waiting for a server, and one wrk run as a table row.

# Waits up to 20 s for `curl -f URL` to succeed; exits the script otherwise.
wait_for() {
    for _ in $(seq 1 100); do curl -fsS "$1" >/dev/null 2>&1 && return 0; sleep 0.2; done
    echo "no answer from $1"
    exit 1
}

# wrk_row NAME URL [wrk options...]: one wrk run ($connections connections, $duration s,
# 2 threads) printed as "| NAME | req/s | p99 | non-2xx |".
wrk_row() {
    local name=$1 url=$2 out
    shift 2
    out=$(wrk -t2 -c"$connections" -d"${duration}s" --latency "$@" "$url")
    echo "| $name | $(echo "$out" | awk '/Requests\/sec/ {print $2}') | $(echo "$out" | awk '$1 == "99%" {print $2}') | $(echo "$out" | awk '/Non-2xx/ {n = $5} END {print n + 0}') |"
}

# cpu_ticks PID: the process's user + system CPU time so far, in clock ticks
# ($ticks_per_second of them a second).
ticks_per_second=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
