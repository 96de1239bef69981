# Local environment for `make demo` / `make test` (sourced). Values already set
# in the caller's environment win; the secret key is generated once.
_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$_root/.local"
if [ ! -s "$_root/.local/secret_key" ]; then
    python3 -c 'import secrets; print(secrets.token_urlsafe(64))' > "$_root/.local/secret_key"
    chmod 600 "$_root/.local/secret_key"
fi
export DJANGO_SETTINGS_MODULE=${DJANGO_SETTINGS_MODULE:-legalsite.settings}
export DJANGO_SECRET_KEY_FILE=${DJANGO_SECRET_KEY_FILE:-$_root/.local/secret_key}
export DJANGO_DEBUG=${DJANGO_DEBUG:-0}
export DJANGO_ALLOWED_HOSTS=${DJANGO_ALLOWED_HOSTS:-127.0.0.1,localhost}
export LEXTRACE_PG_PORT=${LEXTRACE_PG_PORT:-54329}
export LEXTRACE_REDIS_PORT=${LEXTRACE_REDIS_PORT:-63799}
export LEXTRACE_WEB_PORT=${LEXTRACE_WEB_PORT:-8000}
export DB_NAME=${DB_NAME:-lextrace}
export DB_USER=${DB_USER:-lextrace}
export DB_PASSWORD=${DB_PASSWORD:-lextrace}
# The application role above connects the web and the worker; the owner role runs migrations and
# restores (apps/core/db_roles.py). Local passwords only: production sets both explicitly and gives
# the owner's to nothing but `migrate` and `restore`.
export DB_APP_USER=${DB_APP_USER:-$DB_USER}
export DB_OWNER_USER=${DB_OWNER_USER:-lextrace_owner}
export DB_OWNER_PASSWORD=${DB_OWNER_PASSWORD:-lextrace-owner}
export DB_HOST=${DB_HOST:-127.0.0.1}
export DB_PORT=${DB_PORT:-$LEXTRACE_PG_PORT}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:$LEXTRACE_REDIS_PORT/0}
# Two cores: BLAS/OpenMP with 2 threads crawls when the other core is busy.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
export PATH="$_root/.local/venv/bin:$PATH"
unset _root
