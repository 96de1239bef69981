# Shared helpers for the provisioning scripts (sourced, not run).
LEXTRACE_ROOT=$(pwd)
PGROOT="$LEXTRACE_ROOT/.local/pgroot"

log() { printf '\033[1m[lextrace]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[31m[lextrace] error:\033[0m %s\n' "$*" >&2; exit 1; }

debian_major() {
    local v
    v=$(cut -d. -f1 /etc/debian_version 2>/dev/null || true)
    case "$v" in
        trixie*) echo 13 ;;
        forky*) echo 14 ;;
        *) echo "$v" ;;
    esac
}

# Is something listening on 127.0.0.1:$1 ?
port_busy() {
    python3 - "$1" <<'PY'
import socket, sys
s = socket.socket()
s.settimeout(0.5)
try:
    s.connect(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
sys.exit(0)
PY
}

PG_PORT=${LEXTRACE_PG_PORT:-54329}
REDIS_PORT=${LEXTRACE_REDIS_PORT:-63799}
PG_SUPERUSER_PASSWORD_FILE="$LEXTRACE_ROOT/.local/pg-superuser-password"

# Run a command as the postgres OS user, inside the Debian 13 root when we use one.
pg_run() {
    if [ -d "$PGROOT" ] && [ "$(debian_major)" = 12 ]; then
        chroot "$PGROOT" su postgres -s /bin/sh -c "$*"
    else
        runuser -u postgres -- sh -c "$*"
    fi
}

# Run a command as root inside the root (or natively).
root_run() {
    if [ -d "$PGROOT" ] && [ "$(debian_major)" = 12 ]; then
        chroot "$PGROOT" sh -c "$*"
    else
        sh -c "$*"
    fi
}

# Paths as seen from inside the root (or natively).
if [ "$(debian_major)" = 12 ]; then
    PG_DATA_IN=/var/lib/lextrace/pgdata
    REDIS_DIR_IN=/var/lib/lextrace/redis
    STATE_HOST="$PGROOT/var/lib/lextrace"
else
    PG_DATA_IN="$LEXTRACE_ROOT/.local/state/pgdata"
    REDIS_DIR_IN="$LEXTRACE_ROOT/.local/state/redis"
    STATE_HOST="$LEXTRACE_ROOT/.local/state"
fi
PG_BIN=/usr/lib/postgresql/17/bin
