"""Lextrace settings: one module, configured only through the environment.

See docs/CONFIGURATION.md for every variable. `make demo` and `make test`
write sensible local values to .local/env; production sets them explicitly.
"""

from pathlib import Path

from csp.constants import NONCE
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

from legalsite.env import env_bool, env_float, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = env_str("DJANGO_SECRET_KEY")
if len(SECRET_KEY) < 50 and not DEBUG:
    raise ImproperlyConfigured("environment variable DJANGO_SECRET_KEY must be at least 50 characters")
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", "")

# Served over HTTPS (behind a TLS-terminating proxy). Turns on secure cookies,
# HSTS and the HTTP->HTTPS redirect. Off for the loopback demo.
HTTPS = env_bool("LEXTRACE_HTTPS", False)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    # Content-Security-Policy with a per-request nonce (CONTENT_SECURITY_POLICY below).
    "csp",
    # Login lockout per (username, IP) (AXES_* below).
    "axes",
    # TOTP second factor for the roles in OTP_ROLES (apps/accounts/second_factor.py).
    "django_otp",
    "django_otp.plugins.otp_totp",
    "apps.core",
    "apps.accounts",
    "apps.graph",
    "apps.corpus",
    "apps.registry",
    "apps.cases",
    "apps.evaluation",
    "apps.audit",
    "apps.review",
]

MIDDLEWARE = [
    # First: an oversized body is refused from its Content-Length, before anything reads it (G1).
    "apps.core.middleware.RequestSizeLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # After static files: every dynamic response without a policy of its own is private, no-store.
    "apps.core.middleware.NoStoreMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    # NUL characters in parameters and form fields (400) and ids beyond bigint in the path (404).
    "apps.core.middleware.RequestInputMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",
    # Idle and absolute session timeouts (LEXTRACE_SESSION_IDLE_SECONDS, SESSION_COOKIE_AGE).
    "apps.accounts.middleware.SessionTimeoutMiddleware",
    # Request id (X-Request-ID), actor and IP for the audit trail (apps/audit).
    "apps.audit.middleware.RequestContextMiddleware",
    # Deny by default: every view needs a login unless marked @login_not_required.
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    # Reviewers and administrators give a one-time code after the password (OTP_ROLES).
    "apps.accounts.middleware.SecondFactorMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last: turns a locked-out login into the lockout page (429).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "legalsite.urls"
WSGI_APPLICATION = "legalsite.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "apps.core.context_processors.degraded_mode",
            ],
        },
    },
]

# PostgreSQL 17 with pgvector and Apache AGE. The custom backend loads AGE and
# sets the search path on every connection it opens.
DATABASES = {
    "default": {
        "ENGINE": "legalsite.db",
        "NAME": env_str("DB_NAME", "lextrace"),
        "USER": env_str("DB_USER", "lextrace"),
        "PASSWORD": env_str("DB_PASSWORD", ""),
        "HOST": env_str("DB_HOST", "127.0.0.1"),
        "PORT": env_int("DB_PORT", 54329, minimum=1, maximum=65535),
        "CONN_MAX_AGE": env_int("DB_CONN_MAX_AGE", 60, minimum=0),
        "CONN_HEALTH_CHECKS": True,
        "TEST": {"NAME": env_str("DB_TEST_NAME", "test_" + env_str("DB_NAME", "lextrace"))},
    }
}
# The role web and worker connect as. `manage.py migrate`, run as the owner role (DB_USER and
# DB_PASSWORD set to the owner's for that command only), grants this role exactly what it needs
# (apps/core/db_roles.py; docs/OPERATIONS.md "Database roles").
DB_APP_USER = env_str("DB_APP_USER", DATABASES["default"]["USER"])
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "accounts.User"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "accounts:login"
# Roles that must give a TOTP code after the password; empty turns the second factor off.
OTP_ROLES = env_list("LEXTRACE_OTP_ROLES", "reviewer,admin")
# A production site (HTTPS) where reviewers and administrators sign in with a password alone is
# refused at start-up unless that is said explicitly (docs/CONFIGURATION.md).
OTP_OFF_ALLOWED = env_bool("LEXTRACE_ALLOW_NO_SECOND_FACTOR", False)
if HTTPS and not OTP_ROLES and not OTP_OFF_ALLOWED:
    raise ImproperlyConfigured(
        "LEXTRACE_HTTPS=1 with LEXTRACE_OTP_ROLES empty: reviewers and administrators would sign in with a "
        "password alone. Set LEXTRACE_OTP_ROLES=reviewer,admin (the default), or LEXTRACE_ALLOW_NO_SECOND_FACTOR=1 "
        "to run without a second factor on purpose.")
OTP_TOTP_ISSUER = "Lextrace"
LOGIN_REDIRECT_URL = "core:home"
LOGOUT_REDIRECT_URL = "accounts:login"

LANGUAGE_CODE = "zh-hans"
LANGUAGES = [("zh-hans", _("Chinese (Simplified)")), ("en", _("English"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env_str("LEXTRACE_TIME_ZONE", "Asia/Shanghai")
# The court named in the header of review memos (empty: the case's team).
COURT_NAME = env_str("LEXTRACE_COURT_NAME", "")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("LEXTRACE_STATIC_ROOT", str(BASE_DIR / ".local" / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
MEDIA_ROOT = Path(env_str("LEXTRACE_MEDIA_ROOT", str(BASE_DIR / ".local" / "media")))

# --- security -------------------------------------------------------------
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_AGE = env_int("LEXTRACE_SESSION_SECONDS", 8 * 3600, minimum=60)
CSRF_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_SSL_REDIRECT = HTTPS
SECURE_HSTS_SECONDS = 31536000 if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_HSTS_PRELOAD = HTTPS
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Sessions end after this long without activity (htmx GETs, i.e. polls and partials, do not
# count as activity) and, whatever the activity, SESSION_COOKIE_AGE after login.
SESSION_IDLE_SECONDS = env_int("LEXTRACE_SESSION_IDLE_SECONDS", 30 * 60, minimum=60)
CSRF_COOKIE_HTTPONLY = True
# No inline or eval'd script: every script is a static file; the nonce is there for any inline
# script a page may still need. Styles allow inline attributes (bar widths, legend dots).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'", NONCE],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}
# Login lockout (django-axes): LEXTRACE_LOGIN_FAILURE_LIMIT failed logins for one username from
# one address lock that pair out, even with the right password, for the cool-off time or until an
# admin deletes the attempt (admin site, "Access attempts") or runs `manage.py axes_reset_username`.
AUTHENTICATION_BACKENDS = [
    # Every login from an address with LEXTRACE_LOGIN_IP_FAILURE_LIMIT failures is refused (apps/accounts/lockout.py).
    "apps.accounts.lockout.IpLockoutBackend",
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("LEXTRACE_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = env_float("LEXTRACE_LOGIN_COOLOFF_HOURS", 1.0)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
LEXTRACE_LOGIN_IP_FAILURE_LIMIT = env_int("LEXTRACE_LOGIN_IP_FAILURE_LIMIT", 50, minimum=1)
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "accounts/locked_out.html"
AXES_CLIENT_IP_CALLABLE = "apps.accounts.services.client_ip"
# Reverse proxies whose X-Forwarded-For is believed by the login lockout. Empty: none, the
# peer address is the client.
TRUSTED_PROXIES = env_list("LEXTRACE_TRUSTED_PROXIES", "")
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("LEXTRACE_MAX_REQUEST_BYTES", 5 * 1024 * 1024, minimum=1024)
DATA_UPLOAD_MAX_NUMBER_FIELDS = 1000
DATA_UPLOAD_MAX_NUMBER_FILES = 20
# HMAC key signing audit checkpoints (apps/audit/checkpoint.py). Empty: derived from
# SECRET_KEY, which ties checkpoints to it; production sets a key of its own.
LEXTRACE_AUDIT_SIGNING_KEY = env_str("LEXTRACE_AUDIT_SIGNING_KEY", "")
if LEXTRACE_AUDIT_SIGNING_KEY and len(LEXTRACE_AUDIT_SIGNING_KEY) < 32:
    raise ImproperlyConfigured("environment variable LEXTRACE_AUDIT_SIGNING_KEY must be at least 32 characters")
# Review (apps/review): cases untouched for this many days are purged by `manage.py retention_purge`,
# unless under legal hold.
LEXTRACE_RETENTION_DAYS = env_int("LEXTRACE_RETENTION_DAYS", 3650, minimum=1)

# --- Celery ---------------------------------------------------------------
REDIS_URL = env_str("REDIS_URL", "redis://127.0.0.1:63799/0")
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL)
CELERY_RESULT_BACKEND = None  # PostgreSQL is the source of truth for task effects.
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
# acks_late alone loses a task whose worker child is SIGKILLed (RELIABILITY.md).
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_TASK_DEFAULT_QUEUE", "default")  # tests give their own workers a queue
# Worker round trips (POST /health/pings/) go to a queue of their own, never the one judgments run on.
HEALTH_PING_QUEUE = env_str("LEXTRACE_HEALTH_PING_QUEUE", "ops")
CELERY_TASK_ROUTES = {"worker.tasks.training_*": {"queue": "training"},
                      "worker.tasks.worker_ping": {"queue": HEALTH_PING_QUEUE}}
CELERY_VISIBILITY_TIMEOUT = env_int("CELERY_VISIBILITY_TIMEOUT", 3600, minimum=5)
# Unacknowledged messages of a dead worker are restored by a sweep every CELERY_UNACKED_RESTORE_INTERVAL
# seconds once older than the visibility timeout (kombu's default sweep is 10 x 10 s: a lost task
# waited ~100 s more).
CELERY_UNACKED_RESTORE_INTERVAL = env_int("CELERY_UNACKED_RESTORE_INTERVAL", 10, minimum=1)
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_VISIBILITY_TIMEOUT,
                                   "unacked_restore_interval": CELERY_UNACKED_RESTORE_INTERVAL,
                                   "unacked_restore_throttle": 1}
# A task must end before the broker redelivers it (INV-6): hard limit < visibility timeout.
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 3000, minimum=1)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", CELERY_TASK_TIME_LIMIT - 60 if CELERY_TASK_TIME_LIMIT > 120 else CELERY_TASK_TIME_LIMIT, minimum=1)
if CELERY_TASK_TIME_LIMIT >= CELERY_VISIBILITY_TIMEOUT:
    raise ImproperlyConfigured(
        "CELERY_TASK_TIME_LIMIT must be below CELERY_VISIBILITY_TIMEOUT, "
        f"got {CELERY_TASK_TIME_LIMIT} >= {CELERY_VISIBILITY_TIMEOUT}: a running task would be delivered twice"
    )
CELERY_TASK_ALWAYS_EAGER = False
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# A web process builds the reviewers' what-if strategy (tokenizer, checklist statistics, the active
# statistical models) in the background when it starts, not in the first reviewer's request.
WHATIF_PRELOAD = env_bool("LEXTRACE_WHATIF_PRELOAD", True)
# /healthz and the health page answer from a report at most this old (apps/core/health.py).
HEALTH_CACHE_S = env_float("LEXTRACE_HEALTH_CACHE_SECONDS", 5.0)
# Worker round trips a user may request (POST /health/pings/), as "N/second|minute|hour".
HEALTH_PING_RATE = env_str("LEXTRACE_HEALTH_PING_RATE", "6/minute")
# `manage.py migrate` gives up on a lock it cannot get within this many seconds (RELIABILITY H5).
MIGRATION_LOCK_TIMEOUT = f'{env_int("LEXTRACE_MIGRATION_LOCK_TIMEOUT", 5, minimum=1)}s'
# Workers mark themselves alive every WORKER_ALIVE_INTERVAL_S; the mark lasts WORKER_ALIVE_TTL_S.
WORKER_ALIVE_INTERVAL_S = env_float("LEXTRACE_WORKER_ALIVE_INTERVAL", 10.0)
WORKER_ALIVE_TTL_S = env_int("LEXTRACE_WORKER_ALIVE_TTL", 30, minimum=2)
# Runs queued (or running without a heartbeat) longer than this are re-enqueued by `manage.py runs_reconcile`.
RUNS_STUCK_AFTER_S = env_int("LEXTRACE_RUNS_STUCK_AFTER", 600, minimum=1)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Named, expiring, revocable, scoped tokens, stored hashed (/cases/api-token/; apps/accounts/authentication.py).
        # First: DRF answers 401 (with WWW-Authenticate: Token) only when the first class names a scheme.
        "apps.accounts.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 25,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Per user; "runs" limits starting judgment runs (each one occupies a worker).
    "DEFAULT_THROTTLE_RATES": {
        "user": env_str("LEXTRACE_API_RATE_USER", "1200/hour"),
        "runs": env_str("LEXTRACE_API_RATE_RUNS", "60/hour"),
    },
}
# API tokens: the lifetime offered by default and the longest one anybody may mint.
LEXTRACE_API_TOKEN_DAYS = env_int("LEXTRACE_API_TOKEN_DAYS", 90, minimum=1)
LEXTRACE_API_TOKEN_MAX_DAYS = env_int("LEXTRACE_API_TOKEN_MAX_DAYS", 365, minimum=1)
if LEXTRACE_API_TOKEN_DAYS > LEXTRACE_API_TOKEN_MAX_DAYS:
    raise ImproperlyConfigured("LEXTRACE_API_TOKEN_DAYS must not exceed LEXTRACE_API_TOKEN_MAX_DAYS")
SPECTACULAR_SETTINGS = {
    "TITLE": "Lextrace API",
    "DESCRIPTION": "Cases, judgment runs and their evidence bundles. Objects of teams you are not in are 404.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SCHEMA_PATH_PREFIX": "/api/v1",
    # Swagger UI from the drf-spectacular-sidecar package (served by us, no CDN).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    # Database error details quote row data (case facts): redacted before anything is written.
    "filters": {"redact_row_data": {"()": "apps.core.log_redaction.RedactRowData"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["redact_row_data"]}},
    "root": {"handlers": ["console"], "level": env_str("LEXTRACE_LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "INFO"}},
}

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "lextrace",
        "TIMEOUT": 3600,
    }
}
# Uploaded corpus files are kept (provenance) under MEDIA_ROOT, which is never served.
LEXTRACE_MAX_UPLOAD_BYTES = env_int("LEXTRACE_MAX_UPLOAD_BYTES", 50 * 1024 * 1024, minimum=1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
# Facts documents uploaded at case intake (TXT, DOCX, PDF); one no case was saved from is deleted by
# `manage.py purge_unconfirmed_uploads` after this many hours.
LEXTRACE_UPLOAD_UNCONFIRMED_HOURS = env_float("LEXTRACE_UPLOAD_UNCONFIRMED_HOURS", 24.0)
LEXTRACE_CASE_UPLOAD_MAX_BYTES = env_int("LEXTRACE_CASE_UPLOAD_MAX_BYTES", 10 * 1024 * 1024, minimum=1024)
# The largest request body accepted at all: the largest file plus room for the form around it.
LEXTRACE_MAX_REQUEST_BODY_BYTES = env_int(
    "LEXTRACE_MAX_REQUEST_BODY_BYTES",
    max(LEXTRACE_MAX_UPLOAD_BYTES, LEXTRACE_CASE_UPLOAD_MAX_BYTES) + DATA_UPLOAD_MAX_MEMORY_SIZE, minimum=4096)

# --- LLM (OpenAI-compatible server: vLLM on a GPU host, llama.cpp for demos) ---
# Empty base URL: no LLM configured; the statistical strategy is used.
LLM_BASE_URL = env_str("LEXTRACE_LLM_BASE_URL", "")
# LLM runs have a queue of their own, consumed by a worker whose concurrency matches the model
# server's capacity (Procfile: llm-worker), so statistical runs never wait behind them (E2).
LLM_QUEUE = env_str("LEXTRACE_LLM_QUEUE", "llm")
LLM_MODEL = env_str("LEXTRACE_LLM_MODEL", "")
LLM_API_KEY = env_str("LEXTRACE_LLM_API_KEY", "")
LLM_TIMEOUT_S = env_float("LEXTRACE_LLM_TIMEOUT", 120.0)
LLM_MAX_CALLS_PER_CASE = env_int("LEXTRACE_LLM_MAX_CALLS", 80, minimum=1)
LLM_MAX_TOKENS_PER_CASE = env_int("LEXTRACE_LLM_MAX_TOKENS", 60000, minimum=100)
# The model circuit breaker shared by all processes (apps.core.operations): opens after this many
# consecutive transient failures, lets one probe call through after the reset time.
LLM_BREAKER_FAIL_MAX = env_int("LEXTRACE_LLM_BREAKER_FAIL_MAX", 5, minimum=1)
LLM_BREAKER_RESET_S = env_float("LEXTRACE_LLM_BREAKER_RESET", 30.0)
# "article": one call decides all checklist items of an article; "item": one call per item (the paper's Auditor).
# The server's context window and the longest reply asked for: in "article" checklist mode the
# checklists of several candidate articles share one call while prompt and reply fit in both.
LLM_CONTEXT_TOKENS = env_int("LEXTRACE_LLM_CONTEXT", 16384, minimum=1024)
LLM_MAX_REPLY_TOKENS = env_int("LEXTRACE_LLM_MAX_REPLY_TOKENS", 4096, minimum=128)
LLM_CHECKLIST_MODE = env_str("LEXTRACE_LLM_CHECKLIST_MODE", "article")
if LLM_CHECKLIST_MODE not in ("article", "item"):
    raise ImproperlyConfigured(f"LEXTRACE_LLM_CHECKLIST_MODE must be article or item, got {LLM_CHECKLIST_MODE!r}")
# IRAC-guided keyword expansion of the sparse article search (one more LLM call per defendant).
LLM_KEYWORD_EXPANSION = env_bool("LEXTRACE_LLM_KEYWORD_EXPANSION", True)
# The model picks the community and keeps the most similar precedents (two calls per defendant).
LLM_RESEARCH_CHOICES = env_bool("LEXTRACE_LLM_RESEARCH_CHOICES", True)
if LLM_BASE_URL and not LLM_MODEL:
    raise ImproperlyConfigured("LEXTRACE_LLM_MODEL must be set when LEXTRACE_LLM_BASE_URL is")
# Agentic retrieval mode (worker.agents.agentic): caps of the planner loop per defendant.
AGENTIC_MAX_STEPS = env_int("LEXTRACE_AGENTIC_MAX_STEPS", 6, minimum=1, maximum=50)
AGENTIC_MAX_PLANNER_CALLS = env_int("LEXTRACE_AGENTIC_MAX_PLANNER_CALLS", 8, minimum=1, maximum=100)
