"""Idempotency keys for creating requests (I2): a client that sends the same ``Idempotency-Key``
twice (a double click, a retry after a timeout) gets the object of the first request back
instead of a second one.

The key is remembered in Redis per user and scope: ``pending`` while the first request is
creating (a short lease, so a crashed request does not block the key for long), then the
new object's id for a day. A request that finds ``pending`` waits for the first one to finish.
Without Redis the request goes ahead unprotected (logged): refusing every submission because
the cache is down would be worse than the rare duplicate.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable

import redis

logger = logging.getLogger(__name__)

KEY_MAX_LENGTH = 100
PENDING = b"pending"
PENDING_LEASE_S = 60
REMEMBER_S = 24 * 3600
WAIT_S = 30.0


class IdempotencyConflict(Exception):
    """The first request with this key is still running after WAIT_S."""


def _redis_key(user_id: int, scope: str, key: str) -> str:
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
    return f"lextrace:idem:{scope}:{user_id}:{digest}"


def idempotent_create(*, user_id: int, scope: str, key: str, create: Callable[[], int]) -> tuple[int, bool]:
    """Run ``create`` (returns the new object's id) once per (user, scope, key).

    Returns ``(id, created)``; ``created`` is False when an earlier request's object is returned.
    """
    from apps.core.operations import _redis

    client = _redis()
    name = _redis_key(user_id, scope, key)
    try:
        if not client.set(name, PENDING, nx=True, ex=PENDING_LEASE_S):
            deadline = time.monotonic() + WAIT_S
            while True:
                value = client.get(name)
                if value is None:  # the first request failed and let go: this one may try
                    if client.set(name, PENDING, nx=True, ex=PENDING_LEASE_S):
                        break
                elif value != PENDING:
                    return int(value), False
                if time.monotonic() >= deadline:
                    raise IdempotencyConflict("a request with this Idempotency-Key is still being processed")
                time.sleep(0.1)
    except redis.RedisError:
        logger.warning("idempotency keys unavailable (Redis); creating without protection")
        return create(), True
    try:
        object_id = create()
    except BaseException:
        try:
            client.delete(name)
        except redis.RedisError:
            pass
        raise
    try:
        client.set(name, str(object_id), ex=REMEMBER_S)
    except redis.RedisError:
        logger.warning("could not remember idempotency key of %s %s (Redis)", scope, object_id)
    return object_id, True
