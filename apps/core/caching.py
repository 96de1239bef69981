"""Derived, immutable data kept in the shared cache (Redis), and the generation it was derived from.

A page that shows the same derived data on every load (a finished run's evidence view-model, the
graph's statistics, a page of a vertex's neighbours) computes it once and keeps it under a key that
names everything it depends on: its own input (e.g. a digest of the bundle), the page language, the
database, and the *generation* of the shared data it also reads (the published corpus and the graph
built from it). Whatever changes that shared data (a corpus import, a graph build, projection or sync,
an edit in the corpus admin) calls :func:`generation_bump`; the next read derives again under a new
key, and the old entries expire unread. Nothing is ever invalidated by searching for keys. A change
made past all of these (SQL in a console) is seen when the value expires (DERIVED_TIMEOUT_S).

The cache is an optimisation only: when Redis cannot be reached, :func:`cached` computes the value
and the page is served as before.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.core.cache import cache
from django.db import transaction

logger = logging.getLogger(__name__)

T = TypeVar("T")
CORPUS = "corpus"  # the published corpus, the graph built from it, the registered models
# How long a derived value is kept (a new generation makes it unreachable sooner). An hour, as the
# cache's default: Redis also carries the broker and has no memory limit of its own, so what a page
# derived is not kept longer than a reviewer's sitting needs it.
DERIVED_TIMEOUT_S = 3600
_MISSING = object()


def _database() -> str:
    return str(settings.DATABASES["default"]["NAME"])


def _generation_key(name: str) -> str:
    return f"generation:{_database()}:{name}"


def generation(name: str = CORPUS) -> str:
    """The current generation of ``name`` (a short random token; a new one when none is known)."""
    key = _generation_key(name)
    try:
        value = cache.get(key)
        if value is None:
            value = uuid.uuid4().hex[:16]
            if not cache.add(key, value, timeout=None):
                value = cache.get(key) or value
        return value
    except Exception:  # noqa: BLE001 - Redis unreachable: nothing is cached, so any token will do
        logger.warning("cache unreachable: derived data is computed on every request")
        return "uncached"


def _bump(name: str) -> None:
    try:
        cache.set(_generation_key(name), uuid.uuid4().hex[:16], timeout=None)
    except Exception:  # noqa: BLE001 - nothing can be read from an unreachable cache either
        logger.warning("cache unreachable: the %s generation was not advanced", name)


def generation_bump(name: str = CORPUS) -> None:
    """``name`` changed: values derived from it are derived again. Advanced at once (a reader in this
    transaction, or a test that never commits, sees the change) and again when the transaction
    commits (a reader that derived from the old rows in between keeps nothing)."""
    _bump(name)
    transaction.on_commit(lambda: _bump(name))


def derived_key(kind: str, *parts: object, generation_of: str | None = CORPUS) -> str:
    """The cache key of a derived value: its kind, the database, the generation it depends on, and ``parts``."""
    gen = generation(generation_of) if generation_of else "-"
    return ":".join(["derived", kind, _database(), gen, *(str(p) for p in parts)])


def cached(key: str, compute: Callable[[], T], *, timeout: int = DERIVED_TIMEOUT_S) -> T:
    """The value under ``key``, computed and stored when missing. A value comes back as a fresh copy
    (unpickled), so the caller may change it."""
    try:
        value = cache.get(key, _MISSING)
    except Exception:  # noqa: BLE001 - Redis unreachable
        return compute()
    if value is not _MISSING:
        return value
    value = compute()
    try:
        cache.set(key, value, timeout=timeout)
    except Exception:  # noqa: BLE001
        logger.warning("cache unreachable: %s not stored", key.split(":")[1])
    return value


def code_token(*modules) -> str:
    """A digest of the source of ``modules`` and of the compiled translation catalogs: part of the key
    of a value derived by that code, so a deployment that changes either derives again."""
    import hashlib
    from pathlib import Path

    digest = hashlib.sha256()
    files = [Path(m.__file__) for m in modules]
    for folder in getattr(settings, "LOCALE_PATHS", []):
        files += sorted(Path(folder).rglob("*.mo"))
    for path in files:
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(str(path).encode())
    return digest.hexdigest()[:12]
