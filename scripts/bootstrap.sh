#!/usr/bin/env bash
# Everything a fresh machine needs before Lextrace runs: system packages and
# services (provision.sh), the Python virtualenv, and the services started.
#   scripts/bootstrap.sh [dev]   -- "dev" adds the test tools
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

bash scripts/provision.sh

venv=.local/venv
# The hashed lock files (scripts/lock.py) are what is installed: every distribution pinned and
# checked against its sha256, nothing pulled in beside them (RELIABILITY J3).
lock=requirements.lock
[ "${1:-}" = dev ] && lock=requirements-dev.lock
stamp="$venv/.installed-$(cat requirements*.lock | sha256sum | cut -c1-16)-$(basename $lock .lock)"
if [ ! -f "$stamp" ]; then
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    log "installing Python dependencies ($lock, hashes required)"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --require-hashes --no-deps -r "$lock"
    rm -f "$venv"/.installed-*
    touch "$stamp"
fi
# Front-end libraries from npm, copied into static/vendor (git-ignored).
npm_stamp="node_modules/.lextrace-$(sha256sum package-lock.json | cut -c1-16)"
if [ ! -f "$npm_stamp" ]; then
    log "installing front-end libraries (npm ci)"
    npm ci --silent --no-audit --no-fund >/dev/null
    touch "$npm_stamp"
fi
mkdir -p static/vendor
# Source maps too: the static manifest checks every file a script refers to.
cp node_modules/cytoscape/dist/cytoscape.min.js static/vendor/
cp node_modules/chart.js/dist/chart.umd.min.js node_modules/chart.js/dist/chart.umd.min.js.map static/vendor/

. scripts/env.sh
# The Chinese UI: compile locale/*.po into .mo catalogs (git-ignored) with msgfmt.
if ! command -v msgfmt >/dev/null; then
    log "apt-get install gettext (msgfmt)"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gettext >/dev/null
fi
python manage.py compilemessages --ignore=.local --ignore=node_modules >/dev/null
bash scripts/services.sh start
