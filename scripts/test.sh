#!/usr/bin/env bash
# `make test`: the whole pytest suite against the real services.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export DJANGO_SETTINGS_MODULE=legalsite.settings_test
export REDIS_URL=${LEXTRACE_TEST_REDIS_URL:-redis://127.0.0.1:$LEXTRACE_REDIS_PORT/1}
exec python -m pytest "$@"
