# Sourced by the PostgreSQL benchmarks: starts a throwaway cluster from Debian's postgresql
# binaries on 127.0.0.1 (as root, as the `postgres` user), creates the database `bench`, sets
# POSTGRES_URL, and stops and removes the cluster when the script exits. $pg_extra_options, if
# set, adds server options (`-c name=value …`).
pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
[ -x "$pg_bin/initdb" ] || { echo "PostgreSQL binaries are missing: apt-get install postgresql"; exit 1; }
pg_folder=$(mktemp -d)
pg_as_owner=()
if [ "$(id -u)" = "0" ]; then chown postgres:postgres "$pg_folder"; pg_as_owner=(runuser -u postgres --); fi
pg_port=$((20000 + RANDOM % 20000))
"${pg_as_owner[@]}" "$pg_bin/initdb" -D "$pg_folder/data" -A trust -U postgres --no-sync -E UTF8 --locale=C >/dev/null
"${pg_as_owner[@]}" "$pg_bin/pg_ctl" -D "$pg_folder/data" -l "$pg_folder/server.log" -w \
    -o "-p $pg_port -k $pg_folder -c listen_addresses=127.0.0.1 -c max_connections=200 ${pg_extra_options:-}" \
    start >/dev/null </dev/null
stop_postgres() {
    "${pg_as_owner[@]}" "$pg_bin/pg_ctl" -D "$pg_folder/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$pg_folder"
}
"$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -Atqc "CREATE DATABASE bench"
export POSTGRES_URL="postgres://postgres@127.0.0.1:$pg_port/bench"
