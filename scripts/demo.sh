#!/usr/bin/env bash
# `make demo`: migrate, load the demo data, start web + worker (Procfile).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
. scripts/env.sh

if port_busy "$LEXTRACE_WEB_PORT"; then
    die "port $LEXTRACE_WEB_PORT is already in use by another program; set LEXTRACE_WEB_PORT to a free port"
fi
bash scripts/services.sh start >/dev/null 2>&1 || bash scripts/services.sh start
scripts/createdb.sh "$DB_NAME"
# Migrations as the owner role, which then grants the application role its privileges; everything
# after this runs as the application role (docs/OPERATIONS.md, "Database roles").
DB_USER="$DB_OWNER_USER" DB_PASSWORD="$DB_OWNER_PASSWORD" python manage.py migrate --noinput >/dev/null
unset DB_OWNER_PASSWORD
python manage.py collectstatic --noinput >/dev/null
log "loading the demo corpus (apps/corpus/demo; illustrative, written for Lextrace)"
python manage.py import_corpus apps/corpus/demo --no-progress
# Built once, and again when the demo corpus changed (a new checkout's records): never silently stale.
python manage.py build_search_indexes --if-outdated >/dev/null
python manage.py build_graph --if-outdated >/dev/null
python manage.py train_statistical --cases apps/corpus/demo/cases.jsonl --statutes apps/corpus/demo/statutes.jsonl \
    --checklists apps/corpus/demo/checklists.jsonl --no-dev-split --if-outdated >/dev/null
# The demo's reviewer and admin sign in with their password only, unless LEXTRACE_OTP_ROLES is set:
# everywhere else reviewers and administrators also give a TOTP code (apps/accounts/second_factor.py).
export LEXTRACE_OTP_ROLES="${LEXTRACE_OTP_ROLES-}"
[ -n "$LEXTRACE_OTP_ROLES" ] || log "two-step sign-in is off in the demo (set LEXTRACE_OTP_ROLES=reviewer,admin to try it)"
log "demo logins:"
python manage.py demo_users
log "Lextrace is starting at http://127.0.0.1:$LEXTRACE_WEB_PORT/  (Ctrl-C stops web and worker)"
exec honcho --no-colour start -f Procfile
