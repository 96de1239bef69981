"""Operational state shared by every web and worker process, kept in Redis.

* The LLM circuit breaker. Every worker process calls the same model server,
  so they share one breaker: once ``fail_max`` consecutive transient failures
  have been seen (by any process) the circuit opens and no process calls the
  model until ``reset_timeout`` has passed; then exactly one probe call is let
  through (half-open), and its outcome closes or re-opens the circuit for all.
* Worker liveness: each worker's main process refreshes a key every few
  seconds (see worker/celery.py); the key expires when no worker is left.

Both feed the degraded-mode banner (apps.core.context_processors) so staff see
at once that judgments are waiting for the model or for a worker. Nothing here
ever produces a result: an open circuit makes the LLM stages fail with
"model unavailable", which the pipeline reports as such.

When Redis itself cannot be reached the breaker lets calls through (the model
may well be up; a broken breaker must not stop judgments on its own) and the
state reads as "unknown".
"""

from __future__ import annotations

import logging
import time

import redis
from django.conf import settings

from worker.agents.llm import CircuitBreaker, CircuitOpen

logger = logging.getLogger(__name__)

CIRCUIT_KEY = "lextrace:ops:llm-circuit"
PROBE_KEY = "lextrace:ops:llm-circuit:probe"
WORKER_ALIVE_KEY = "lextrace:ops:worker-alive"
# Every worker's last heartbeat (sorted set: hostname -> time), read by /healthz to count live workers.
WORKERS_KEY = "lextrace:ops:workers"
UNKNOWN = "unknown"

_clients: dict[str, redis.Redis] = {}


def _redis(url: str | None = None) -> redis.Redis:
    url = url or settings.REDIS_URL
    client = _clients.get(url)
    if client is None:
        client = _clients[url] = redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)
    return client


class SharedCircuitBreaker:
    """The interface of worker.agents.llm.client.CircuitBreaker, with its state in Redis."""

    CLOSED = CircuitBreaker.CLOSED
    OPEN = CircuitBreaker.OPEN
    HALF_OPEN = CircuitBreaker.HALF_OPEN

    def __init__(self, fail_max: int | None = None, reset_timeout_s: float | None = None, *, key: str = CIRCUIT_KEY,
                 client: redis.Redis | None = None):
        self.fail_max = fail_max if fail_max is not None else settings.LLM_BREAKER_FAIL_MAX
        self.reset_timeout_s = reset_timeout_s if reset_timeout_s is not None else settings.LLM_BREAKER_RESET_S
        if self.fail_max < 1:
            raise ValueError("fail_max must be at least 1")
        self.key = key
        self.probe_key = key + ":probe"
        self._client = client

    @property
    def client(self) -> redis.Redis:
        return self._client or _redis()

    def _read(self) -> tuple[str, int, float]:
        raw = self.client.hgetall(self.key)
        state = raw.get(b"state", b"closed").decode()
        failures = int(raw.get(b"failures", 0))
        opened_at = float(raw.get(b"opened_at", 0.0))
        if state == self.OPEN and time.time() - opened_at >= self.reset_timeout_s:
            state = self.HALF_OPEN
        return state, failures, opened_at

    @property
    def state(self) -> str:
        try:
            return self._read()[0]
        except redis.RedisError:
            return UNKNOWN

    @property
    def failures(self) -> int:
        try:
            return self._read()[1]
        except redis.RedisError:
            return 0

    def before_call(self) -> None:
        """Raise CircuitOpen unless a call may go out now."""
        try:
            state, _failures, opened_at = self._read()
            if state == self.CLOSED:
                return
            if state == self.HALF_OPEN:
                # One probe for all processes; a probe that never reports back frees the slot
                # after another reset period (the key expires).
                ttl = max(1, round(self.reset_timeout_s))
                if self.client.set(self.probe_key, str(time.time()), nx=True, ex=ttl):
                    return
                raise CircuitOpen("model circuit half-open: a probe call is in flight")
        except redis.RedisError:
            logger.warning("the model circuit's state cannot be read (Redis); letting the call through")
            return
        remaining = self.reset_timeout_s - (time.time() - opened_at)
        raise CircuitOpen(f"model circuit open (retry in {max(0.0, remaining):.1f} s)")

    def record_success(self) -> None:
        try:
            pipe = self.client.pipeline()
            pipe.delete(self.key)
            pipe.delete(self.probe_key)
            pipe.execute()
        except redis.RedisError:
            logger.warning("could not record a model success in the shared circuit (Redis)")

    def record_failure(self) -> None:
        try:
            state, _failures, _opened = self._read()
            failures = self.client.hincrby(self.key, "failures", 1)
            if state == self.HALF_OPEN or failures >= self.fail_max:
                if state != self.OPEN:
                    logger.warning("model circuit opens after %s failures", failures)
                pipe = self.client.pipeline()
                pipe.hset(self.key, mapping={"state": self.OPEN, "opened_at": repr(time.time())})
                pipe.delete(self.probe_key)
                pipe.execute()
        except redis.RedisError:
            logger.warning("could not record a model failure in the shared circuit (Redis)")

    def reset(self) -> None:
        """Close the circuit (operators, tests)."""
        self.record_success()


def model_circuit() -> SharedCircuitBreaker:
    return SharedCircuitBreaker()


# --- worker liveness ---------------------------------------------------------------------


def worker_alive_mark(hostname: str) -> None:
    """Called by every worker's main process every WORKER_ALIVE_INTERVAL_S seconds."""
    now = time.time()
    try:
        pipe = _redis().pipeline()
        pipe.set(WORKER_ALIVE_KEY, hostname[:200], ex=settings.WORKER_ALIVE_TTL_S)
        pipe.zadd(WORKERS_KEY, {hostname[:200]: now})
        # Forget workers silent for ten lifetimes: the set stays as small as the fleet.
        pipe.zremrangebyscore(WORKERS_KEY, "-inf", now - 10 * settings.WORKER_ALIVE_TTL_S)
        pipe.expire(WORKERS_KEY, 10 * settings.WORKER_ALIVE_TTL_S)
        pipe.execute()
    except redis.RedisError:
        logger.warning("could not record worker liveness (Redis)")


def workers_alive() -> int | None:
    """How many workers sent a heartbeat within WORKER_ALIVE_TTL_S; None when Redis cannot be asked."""
    try:
        return int(_redis().zcount(WORKERS_KEY, time.time() - settings.WORKER_ALIVE_TTL_S, "+inf"))
    except redis.RedisError:
        return None


def worker_alive() -> bool | None:
    """Whether a worker marked itself alive recently; None when Redis cannot be asked."""
    try:
        return bool(_redis().exists(WORKER_ALIVE_KEY))
    except redis.RedisError:
        return None


# --- redelivery (D2) ----------------------------------------------------------------------

# Kombu's Redis transport keeps every delivered, not yet acknowledged message in the hash
# "unacked" and its delivery time in the sorted set "unacked_index"; a sweep puts messages older
# than the visibility timeout back on their queue. An entry much older than that bound means the
# sweep is not running (no worker left) and a run waits without anyone noticing.
UNACKED_INDEX_KEY = "unacked_index"


def redelivery_bound_s() -> float:
    """How long an unacknowledged message may legitimately wait: visibility timeout plus one sweep."""
    return float(settings.CELERY_VISIBILITY_TIMEOUT + settings.CELERY_UNACKED_RESTORE_INTERVAL)


def stale_unacked(now: float | None = None) -> tuple[int, float] | None:
    """(count, age of the oldest in s) of deliveries unacknowledged beyond the bound; None when Redis is unreachable."""
    now = time.time() if now is None else now
    cutoff = now - redelivery_bound_s()
    try:
        client = _redis(settings.CELERY_BROKER_URL)
        count = client.zcount(UNACKED_INDEX_KEY, "-inf", cutoff)
        oldest = client.zrange(UNACKED_INDEX_KEY, 0, 0, withscores=True) if count else []
    except redis.RedisError:
        return None
    if not count:
        return 0, 0.0
    age = now - oldest[0][1]
    logger.warning("%s deliveries unacknowledged for more than %.0f s (oldest %.0f s): no worker restores them",
                   count, redelivery_bound_s(), age)
    return count, age


def degraded_reasons() -> list[str]:
    """Short codes of what keeps judgments from running now: 'model', 'worker', 'broker'."""
    reasons = []
    alive = worker_alive()
    if alive is None:
        return ["broker"]
    if not alive:
        reasons.append("worker")
    if settings.LLM_BASE_URL and model_circuit().state in (SharedCircuitBreaker.OPEN, SharedCircuitBreaker.HALF_OPEN):
        reasons.append("model")
    return reasons
