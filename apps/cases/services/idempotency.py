"""Idempotency keys for creating requests (I2): a client that sends the same ``Idempotency-Key``
twice (a double click, a retry after a timeout) gets the object of the first request back
instead of a second one.

The key is remembered in Redis per user and scope: ``pending`` while the first request is
creating (a short lease, so a crashed request does not block the key for long), then the
new object's id for a day. A request that finds ``pending`` waits for the first one to finish.
Each value carries a fingerprint of the request body: the same key sent with a different body is
a client error (IdempotencyMismatch, HTTP 422), never the first request's object.
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


class IdempotencyMismatch(Exception):
    """The key was first used with another request body."""


def fingerprint(data) -> str:
    """A stable digest of a request's validated data (JSON with sorted keys; dates and model
    instances as text, a model instance by its primary key)."""
    import json

    def plain(value):
        return getattr(value, "pk", None) or str(value)

    return hashlib.sha256(json.dumps(data, sort_keys=True, default=plain, ensure_ascii=False).encode()).hexdigest()[:32]


def _parse(value: bytes) -> tuple[bytes, str]:
    """(state, fingerprint) of a stored value: b"pending" or the object id."""
    state, _sep, digest = value.partition(b":")
    return state, digest.decode()


def _redis_key(user_id: int, scope: str, key: str) -> str:
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
    return f"lextrace:idem:{scope}:{user_id}:{digest}"


def idempotent_create(*, user_id: int, scope: str, key: str, create: Callable[[], int],
                      body: str = "") -> tuple[int, bool]:
    """Run ``create`` (returns the new object's id) once per (user, scope, key).

    ``body`` is the request's fingerprint. Returns ``(id, created)``; ``created`` is False when an
    earlier request's object is returned. IdempotencyMismatch when the key came with another body.
    """
    from apps.core.operations import _redis

    client = _redis()
    name = _redis_key(user_id, scope, key)
    pending = PENDING + b":" + body.encode()
    try:
        if not client.set(name, pending, nx=True, ex=PENDING_LEASE_S):
            deadline = time.monotonic() + WAIT_S
            while True:
                value = client.get(name)
                if value is None:  # the first request failed and let go: this one may try
                    if client.set(name, pending, nx=True, ex=PENDING_LEASE_S):
                        break
                else:
                    state, first_body = _parse(value)
                    if first_body != body:
                        raise IdempotencyMismatch("this Idempotency-Key was used with a different request body")
                    if state != PENDING:
                        return int(state), False
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
        client.set(name, f"{object_id}:{body}", ex=REMEMBER_S)
    except redis.RedisError:
        logger.warning("could not remember idempotency key of %s %s (Redis)", scope, object_id)
    return object_id, True
