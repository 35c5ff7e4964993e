#!/usr/bin/env bash
# Make a PostgreSQL server available on 127.0.0.1 for the PostgresStore tests (Debian/Ubuntu, run as root).
#
# Installs the server only if its binaries are missing, starts a cluster (creating one if there is none), creates
# a role and a database for the tests, and prints the URL to use as PODIUM_TEST_POSTGRES_URL on stdout (all
# progress goes to stderr). Idempotent: running it again changes nothing and prints the same URL.
#
#   export PODIUM_TEST_POSTGRES_URL="$(bash .ci/postgres.sh)"
set -euo pipefail

ROLE="${PODIUM_TEST_PG_ROLE:-podium_test}"
PASSWORD="${PODIUM_TEST_PG_PASSWORD:-podium_test}"  # URL-safe characters only: it goes into the URL as is
DATABASE="${PODIUM_TEST_PG_DATABASE:-podium_test}"
PORT="${PODIUM_TEST_PG_PORT:-5432}"

log() { echo "postgres.sh: $*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
    log "run me as root (I start the cluster and run psql as the postgres user)"
    exit 1
fi

if ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || ! command -v pg_lsclusters >/dev/null; then
    log "PostgreSQL binaries missing: installing the postgresql package"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update >&2 && apt-get install -y postgresql >&2
fi

# the cluster on $PORT, else create one with the newest installed version
cluster="$(pg_lsclusters --no-header | awk -v port="$PORT" '$3 == port { print $1 " " $2; exit }')"
if [ -z "$cluster" ]; then
    version="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"
    log "no cluster on port $PORT: creating $version/podium"
    pg_createcluster "$version" podium --port "$PORT" >&2
    cluster="$version podium"
fi
read -r version name <<<"$cluster"
if ! pg_lsclusters --no-header | awk -v v="$version" -v n="$name" '$1 == v && $2 == n { print $4 }' | grep -q online; then
    log "starting cluster $version/$name"
    pg_ctlcluster "$version" "$name" start >&2
fi
for _ in $(seq 1 60); do
    pg_isready -q -h 127.0.0.1 -p "$PORT" && break
    sleep 0.5
done
pg_isready -h 127.0.0.1 -p "$PORT" >&2

psql_admin() { (cd / && runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -p "$PORT" "$@"); }

# role (password refreshed every time) and database, owned by the role so its tests can create schemas
psql_admin -d postgres -v role="$ROLE" -v password="$PASSWORD" >&2 <<'SQL'
SELECT format('CREATE ROLE %I LOGIN', :'role') WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'role')
\gexec
SELECT format('ALTER ROLE %I LOGIN PASSWORD %L', :'role', :'password')
\gexec
SQL
if [ -z "$(echo "SELECT 1 FROM pg_database WHERE datname = :'db'" | psql_admin -d postgres -tA -v db="$DATABASE")" ]; then
    log "creating database $DATABASE"
    (cd / && runuser -u postgres -- createdb -p "$PORT" -O "$ROLE" "$DATABASE") >&2
fi

url="postgresql://$ROLE:$PASSWORD@127.0.0.1:$PORT/$DATABASE"
PGCONNECT_TIMEOUT=5 psql -X -q "$url" -tA -c "SELECT 1" >/dev/null
log "ready: $ROLE@127.0.0.1:$PORT/$DATABASE"
echo "$url"
