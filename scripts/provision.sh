#!/usr/bin/env bash
# Install the system services Lextrace needs (PostgreSQL 17 + pgvector + AGE,
# Redis) and the browser-test tools, idempotently.
#
# Debian 13: the packages install natively with apt.
# Debian 12: Debian does not package pgvector/AGE for it, and Debian 13's AGE
# build needs glibc 2.38, so we build a Debian 13 root with mmdebstrap under
# .local/pgroot and run PostgreSQL and Redis inside it (chroot), on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

want_host_pkgs=(chromium fonts-noto-cjk)
root_pkgs="postgresql-17,postgresql-17-pgvector,postgresql-17-age,redis-server"

apt_install() {
    local missing=()
    for p in "$@"; do
        dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "apt-get install ${missing[*]}"
    if [ ! -f .local/.apt-updated ] || [ -n "$(find .local/.apt-updated -mmin +720 2>/dev/null)" ]; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        touch .local/.apt-updated
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# A failed mmdebstrap can leave its chroot's /proc mounted: unmount before removing.
discard_tmp_root() {
    if [ -d "$PGROOT.tmp" ]; then
        grep -o " $PGROOT.tmp[^ ]*" /proc/mounts | sort -r | while read -r m; do umount -l "$m" || true; done
        rm -rf "$PGROOT.tmp"
    fi
}

mkdir -p .local
case "$(debian_major)" in
    12)
        apt_install mmdebstrap "${want_host_pkgs[@]}"
        if [ ! -x "$PGROOT/usr/lib/postgresql/17/bin/postgres" ] || [ ! -x "$PGROOT/usr/bin/redis-server" ]; then
            log "building a Debian 13 root for PostgreSQL 17 + pgvector + AGE + Redis in $PGROOT (about a minute)"
            # A mirror hiccup fails apt inside mmdebstrap now and then: up to three tries, from scratch.
            for try in 1 2 3; do
                discard_tmp_root
                if mmdebstrap --quiet --variant=apt --include="$root_pkgs" trixie "$PGROOT.tmp"; then
                    break
                fi
                [ "$try" -lt 3 ] || die "could not build the Debian 13 root (mmdebstrap failed three times)"
                log "mmdebstrap failed (try $try of 3); retrying in 10 s"
                sleep 10
            done
            rm -rf "$PGROOT"
            mv "$PGROOT.tmp" "$PGROOT"
        fi
        ;;
    13|14)
        apt_install postgresql-17 postgresql-17-pgvector postgresql-17-age redis-server "${want_host_pkgs[@]}"
        ;;
    *)
        die "unsupported OS: Lextrace provisions on Debian 12 or 13 (found: $(cat /etc/debian_version 2>/dev/null || echo unknown))"
        ;;
esac
log "provisioned ($(debian_major))"
