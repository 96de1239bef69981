"""Health checks for the health page and /healthz.

They report states, never secrets: no host names, ports, users or URLs. Anonymous callers get the
status alone; signed-in users see each component (with versions).

The report is computed at most once per ``LEXTRACE_HEALTH_CACHE_SECONDS`` (5) for every process
(the cache is Redis): a monitor polling /healthz, or many at once, costs one computation per
period, and the worker check reads the workers' heartbeats (apps.core.operations) instead of
asking every worker over the broker. While one process recomputes an expired report, the others
answer with the previous one (kept a minute).
"""

import time
from dataclasses import asdict, dataclass

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.utils.translation import gettext_noop, pgettext_lazy

from apps.core.templated import Translations

CACHE_KEY = "health-report"
LOCK_KEY = "health-report:computing"
STALE_FOR_S = 60

REQUIRED_EXTENSIONS = ("vector", "age")


@dataclass
class Check:
    name: str
    ok: bool
    detail: str = ""


def check_database() -> Check:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('server_version_num')::int")
            version = cursor.fetchone()[0]
        return Check("database", True, f"PostgreSQL {version // 10000}")
    except Exception as exc:  # noqa: BLE001 - any failure means "down"
        return Check("database", False, type(exc).__name__)


def check_extensions() -> Check:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT extname, extversion FROM pg_extension WHERE extname = ANY(%s)", [list(REQUIRED_EXTENSIONS)])
            found = dict(cursor.fetchall())
    except Exception as exc:  # noqa: BLE001
        return Check("extensions", False, type(exc).__name__)
    missing = [e for e in REQUIRED_EXTENSIONS if e not in found]
    if missing:
        return Check("extensions", False, "missing: " + ", ".join(missing))
    return Check("extensions", True, ", ".join(f"{k} {v}" for k, v in sorted(found.items())))


def check_broker() -> Check:
    from worker.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=1)
        return Check("broker", True, "reachable")
    except Exception as exc:  # noqa: BLE001
        return Check("broker", False, type(exc).__name__)


def check_worker() -> Check:
    """Workers that sent a heartbeat within LEXTRACE_WORKER_ALIVE_TTL seconds (worker/celery.py)."""
    from apps.core.operations import workers_alive

    count = workers_alive()
    if count is None:
        return Check("worker", False, "heartbeats unreadable")
    if not count:
        return Check("worker", False, f"no heartbeat in {settings.WORKER_ALIVE_TTL_S} s")
    return Check("worker", True, f"{count} worker(s) alive")


def check_model() -> Check:
    """The LLM server as the shared circuit breaker sees it (no URL, no model name)."""
    from apps.core.operations import UNKNOWN, SharedCircuitBreaker, model_circuit

    if not settings.LLM_BASE_URL:
        return Check("model", True, "not configured: statistical strategy")
    state = model_circuit().state
    if state == SharedCircuitBreaker.CLOSED:
        return Check("model", True, "circuit closed")
    if state == UNKNOWN:
        return Check("model", False, "circuit state unknown")
    return Check("model", False, f"circuit {state}")


def check_redelivery() -> Check:
    """D2: deliveries left unacknowledged beyond visibility timeout + restore sweep."""
    from apps.core.operations import redelivery_bound_s, stale_unacked

    stale = stale_unacked()
    if stale is None:
        return Check("redelivery", False, "unknown")
    count, oldest = stale
    if count:
        return Check("redelivery", False,
                     f"{count} unacknowledged beyond {redelivery_bound_s():.0f} s (oldest {oldest:.0f} s)")
    return Check("redelivery", True, f"none older than {redelivery_bound_s():.0f} s")


def health_report() -> dict:
    checks = [check_database(), check_extensions(), check_broker()]
    # Only ask workers when the broker is up; otherwise the ping just times out.
    broker_up = checks[2].ok
    checks.append(check_worker() if broker_up else Check("worker", False, "broker down"))
    checks.append(check_model())
    checks.append(check_redelivery() if broker_up else Check("redelivery", False, "broker down"))
    essential_ok = all(c.ok for c in checks[:3])
    status = "ok" if essential_ok and all(c.ok for c in checks[3:]) else ("degraded" if essential_ok else "down")
    return {"status": status, "checks": [asdict(c) for c in checks]}


def health_report_cached() -> dict:
    """health_report(), computed at most once per LEXTRACE_HEALTH_CACHE_SECONDS across processes."""
    ttl = settings.HEALTH_CACHE_S
    if ttl <= 0:
        return health_report()
    try:
        cached = cache.get(CACHE_KEY)
        if cached and time.time() - cached["at"] < ttl:
            return cached["report"]
        # One process recomputes; the others answer with the previous report meanwhile.
        if cached and not cache.add(LOCK_KEY, 1, timeout=max(ttl, 5)):
            return cached["report"]
    except Exception:  # noqa: BLE001 - the cache is Redis; when it is down, the report says so
        return health_report()
    report = health_report()
    try:
        cache.set(CACHE_KEY, {"at": time.time(), "report": report}, timeout=STALE_FOR_S)
        cache.delete(LOCK_KEY)
    except Exception:  # noqa: BLE001
        pass
    return report


def public_view(report: dict) -> dict:
    """What an anonymous caller sees: the status, nothing about components or versions."""
    return {"status": report["status"]}


# The health page shows the report in the page language; /healthz, the cache and the logs keep the English.
STATUS_LABELS = {
    "ok": pgettext_lazy("system health", "ok"),
    "degraded": pgettext_lazy("system health", "degraded"),
    "down": pgettext_lazy("system health", "down"),
}
COMPONENT_LABELS = {
    "database": pgettext_lazy("system health component", "database"),
    "extensions": pgettext_lazy("system health component", "extensions"),
    "broker": pgettext_lazy("system health component", "broker"),
    "worker": pgettext_lazy("system health component", "worker"),
    "model": pgettext_lazy("system health component", "model"),
    "redelivery": pgettext_lazy("system health component", "redelivery"),
}
# Each detail the checks above write, with %(name)s where they put a value: the msgid of its translation
# and the way to recognise it. A detail no template recognises (an exception's class name, a database
# version, the extension versions) is shown as it is.
detail_label = Translations(
    gettext_noop("reachable"),
    gettext_noop("missing: %(names)s"),
    gettext_noop("heartbeats unreadable"),
    gettext_noop("no heartbeat in %(seconds)s s"),
    gettext_noop("%(count)s worker(s) alive"),
    gettext_noop("not configured: statistical strategy"),
    gettext_noop("circuit closed"),
    gettext_noop("circuit state unknown"),
    gettext_noop("circuit open"),
    gettext_noop("circuit half_open"),
    gettext_noop("unknown"),
    gettext_noop("%(count)s unacknowledged beyond %(bound)s s (oldest %(oldest)s s)"),
    gettext_noop("none older than %(bound)s s"),
    gettext_noop("broker down"),
)


def report_view(report: dict) -> dict:
    """The report for the health page: its status and each check's name and detail in the page language."""
    checks = [{**c, "label": COMPONENT_LABELS.get(c["name"], c["name"]), "detail_label": detail_label(c["detail"])}
              for c in report.get("checks", [])]
    return {**report, "status_label": STATUS_LABELS.get(report["status"], report["status"]), "checks": checks}
