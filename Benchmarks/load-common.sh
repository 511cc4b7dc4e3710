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

# manage_servers: a $workdir, the servers a script starts (their PIDs in $pids, stopped by
# stop_servers with $stop_signal, TERM by default) and, when $databases names postgres, a
# throwaway PostgreSQL cluster (POSTGRES_URL); all stopped and removed when the script exits.
manage_servers() {
    workdir=$(mktemp -d)
    pids=()
    trap stop_everything EXIT
    case " $databases " in *" postgres "*) source Benchmarks/postgres-cluster.sh ;; esac
}
stop_servers() {
    for pid in "${pids[@]}"; do kill -"${stop_signal:-TERM}" "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    pids=()
}
stop_everything() {
    stop_servers
    if declare -F stop_postgres >/dev/null; then stop_postgres; fi
    rm -rf "$workdir"
}

# add_database_env DATABASE: appends to $example_env and $baseline_env what points ExampleServer
# and the server it is compared with at DATABASE: the throwaway cluster both share, or a SQLite
# file each in $workdir (the baseline's a copy of the seeded one: copy_seeded_database).
add_database_env() {
    if [ "$1" = postgres ]; then
        example_env+=(DATABASE_KIND=postgres DATABASE_URL="$POSTGRES_URL")
        baseline_env+=(DATABASE_KIND=postgres DATABASE_URL="$POSTGRES_URL")
    else
        example_env+=(DATABASE_PATH="$workdir/example.sqlite")
        baseline_env+=(DATABASE_PATH="$workdir/handwired.sqlite")
    fi
}
# copy_seeded_database: the baseline's SQLite file, and its WAL, copied from ExampleServer's.
copy_seeded_database() {
    for file in "$workdir"/example.sqlite*; do cp "$file" "${file/example.sqlite/handwired.sqlite}"; done
}
