#!/usr/bin/env bash
# start | stop | status of Lextrace's local services: PostgreSQL 17 (pgvector,
# AGE) and Redis, both on 127.0.0.1 and ports of our own.
#   LEXTRACE_PG_PORT (default 54329), LEXTRACE_REDIS_PORT (default 63799)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
. scripts/env.sh

pg_running() { pg_run "$PG_BIN/pg_ctl -D $PG_DATA_IN status" >/dev/null 2>&1; }
redis_pidfile_host() { echo "$STATE_HOST/redis/redis.pid"; }
redis_running() {
    local f; f=$(redis_pidfile_host)
    [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null
}

pg_init() {
    [ -f "$STATE_HOST/pgdata/PG_VERSION" ] && return 0
    log "initialising a PostgreSQL 17 cluster (data checksums on)"
    mkdir -p "$STATE_HOST"
    root_run "mkdir -p $(dirname $PG_DATA_IN) && chown postgres:postgres $(dirname $PG_DATA_IN)"
    pg_run "$PG_BIN/initdb -D $PG_DATA_IN --data-checksums --encoding=UTF8 --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256 -U postgres" >/dev/null
    cat >> "$STATE_HOST/pgdata/postgresql.conf" <<CONF
# --- lextrace ---
listen_addresses = '127.0.0.1'
unix_socket_directories = '/tmp'
dynamic_shared_memory_type = mmap
session_preload_libraries = 'age'
max_connections = 100
shared_buffers = 256MB
fsync = on
CONF
}

pg_start() {
    pg_init
    if pg_running; then
        log "PostgreSQL already running on 127.0.0.1:$PG_PORT"
        pg_bootstrap_roles  # idempotent: brings an older cluster's roles to the current design
        return 0
    fi
    if port_busy "$PG_PORT"; then
        die "port $PG_PORT is already in use by another program; set LEXTRACE_PG_PORT to a free port"
    fi
    pg_run "$PG_BIN/pg_ctl -D $PG_DATA_IN -o '-p $PG_PORT' -l $PG_DATA_IN/../postgres.log -w -t 60 start" >/dev/null \
        || { tail -n 20 "$STATE_HOST/postgres.log" >&2; die "PostgreSQL did not start"; }
    log "PostgreSQL 17 running on 127.0.0.1:$PG_PORT"
    pg_bootstrap_roles
}

# The two database roles (apps/core/db_roles.py, docs/OPERATIONS.md "Database roles"): the owner
# runs migrations and owns every table; the application role (web, worker) is no superuser and may
# only SELECT and INSERT on the audit tables. The extensions need a superuser: created here, as
# postgres, in every database and in template1 (so test databases and restores have them too).
pg_bootstrap_roles() {
    local owner=${DB_OWNER_USER:-lextrace_owner} user=${DB_USER:-lextrace} name=${DB_NAME:-lextrace}
    [ -n "${DB_PASSWORD:-}" ] && [ -n "${DB_OWNER_PASSWORD:-}" ] \
        || die "DB_PASSWORD and DB_OWNER_PASSWORD must be set (scripts/env.sh sets local ones)"
    local psql="psql -h /tmp -p $PG_PORT -U postgres -qtAX -v ON_ERROR_STOP=1"
    python3 apps/core/db_roles.py cluster --owner "$owner" --app "$user" | pg_run "$psql -d postgres" >/dev/null
    pg_run "$psql -d postgres" >/dev/null <<SQL
SELECT format('CREATE DATABASE %I OWNER %I', '$name', '$owner')
WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = '$name') \gexec
SQL
    local db
    for db in $(pg_run "$psql -d postgres -c \"SELECT datname FROM pg_database WHERE datallowconn AND datname <> 'postgres'\""); do
        local out
        out=$(python3 apps/core/db_roles.py database --owner "$owner" --app "$user" | pg_run "$psql -d $db" 2>&1) \
            || { printf '%s\n' "$out" >&2; die "could not set up the roles' privileges in database $db"; }
    done
}

redis_start() {
    if redis_running; then
        log "Redis already running on 127.0.0.1:$REDIS_PORT"
        return 0
    fi
    if port_busy "$REDIS_PORT"; then
        die "port $REDIS_PORT is already in use by another program; set LEXTRACE_REDIS_PORT to a free port"
    fi
    mkdir -p "$STATE_HOST/redis"
    root_run "redis-server --port $REDIS_PORT --bind 127.0.0.1 --protected-mode yes --dir $REDIS_DIR_IN \
        --appendonly yes --appendfsync everysec --daemonize yes --pidfile $REDIS_DIR_IN/redis.pid \
        --logfile $REDIS_DIR_IN/redis.log --save ''"
    for _ in $(seq 50); do port_busy "$REDIS_PORT" && break; sleep 0.1; done
    port_busy "$REDIS_PORT" || die "Redis did not start (see $STATE_HOST/redis/redis.log)"
    log "Redis running on 127.0.0.1:$REDIS_PORT"
}

stop_all() {
    if pg_running; then pg_run "$PG_BIN/pg_ctl -D $PG_DATA_IN -m fast -w stop" >/dev/null; log "PostgreSQL stopped"; fi
    if redis_running; then kill "$(cat "$(redis_pidfile_host)")"; log "Redis stopped"; fi
}

status() {
    local rc=0
    if pg_running; then echo "postgresql: running on 127.0.0.1:$PG_PORT"; else echo "postgresql: stopped"; rc=3; fi
    if redis_running; then echo "redis: running on 127.0.0.1:$REDIS_PORT"; else echo "redis: stopped"; rc=3; fi
    return $rc
}

case "${1:-status}" in
    start) pg_start; redis_start ;;
    stop) stop_all ;;
    restart) stop_all; pg_start; redis_start ;;
    status) status ;;
    *) die "usage: $0 start|stop|restart|status" ;;
esac
