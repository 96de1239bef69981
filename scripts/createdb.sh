#!/usr/bin/env bash
# Create database NAME owned by the owner role if it does not exist (from template1, which has the
# extensions and AGE's catalog grants: scripts/services.sh).
#   scripts/createdb.sh [--fresh] NAME     (--fresh drops it first)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
. scripts/env.sh
fresh=0
if [ "${1:-}" = --fresh ]; then fresh=1; shift; fi
name=${1:?database name}
[[ "$name" =~ ^[a-z_][a-z0-9_]*$ ]] || die "invalid database name: $name"
{
    [ $fresh = 1 ] && echo "DROP DATABASE IF EXISTS \"$name\" WITH (FORCE);"
    cat <<SQL
SELECT format('CREATE DATABASE %I OWNER %I', '$name', '$DB_OWNER_USER')
WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = '$name') \gexec
SQL
} | pg_run "psql -h /tmp -p $LEXTRACE_PG_PORT -U postgres -qtAX -v ON_ERROR_STOP=1" >/dev/null
