import time

from django.conf import settings
from django.core.cache import cache

from apps.core.jobs import job_claim, job_finish
from apps.core.models import WorkerPing

_PERIODS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


class PingThrottled(Exception):
    """Too many worker round trips by one user; ``retry_after`` in seconds."""

    def __init__(self, retry_after: int):
        super().__init__(f"too many pings; retry in {retry_after} s")
        self.retry_after = retry_after


def _rate(text: str) -> tuple[int, int]:
    count, _sep, period = text.partition("/")
    return int(count), _PERIODS[period.strip().rstrip("s")]


def _throttle(user_key: str, rate: str) -> None:
    """A fixed window per user in the shared cache. Without the cache there is no limit, rather than
    no pings at all (the ping then shows the broker's state)."""
    limit, period = _rate(rate)
    window = int(time.time() // period)
    key = f"ping-rate:{user_key}:{window}"
    try:
        cache.add(key, 0, timeout=period + 1)
        used = cache.incr(key)
    except Exception:  # noqa: BLE001 - the cache is down: the broker probably too; let the ping show it
        return
    if used > limit:
        raise PingThrottled(retry_after=max(1, int((window + 1) * period - time.time())))


def worker_ping_request(*, user=None) -> WorkerPing:
    """Record a ping and send it to a worker once the row is committed.

    Throttled per user (LEXTRACE_HEALTH_PING_RATE), and routed to its own queue
    (LEXTRACE_HEALTH_PING_QUEUE), so pings can neither flood the broker nor wait in front of judgments.
    """
    from worker.tasks import worker_ping

    user = user if user and user.is_authenticated else None
    if user is not None:
        _throttle(str(user.pk), settings.HEALTH_PING_RATE)
    ping = WorkerPing.objects.create(requested_by=user)
    # After commit: a rolled-back request never reaches the broker, and the
    # worker never looks for a row that does not exist yet.
    worker_ping.delay_on_commit(ping.pk)
    return ping


def worker_ping_answer(*, ping_id: int, hostname: str) -> bool:
    """Answer a ping: claim it, then mark it done. Safe to run twice: only the first claim answers."""
    if job_claim(model=WorkerPing, pk=ping_id, worker=hostname[:200]) is None:
        return False
    return job_finish(model=WorkerPing, pk=ping_id, status=WorkerPing.Status.DONE)
