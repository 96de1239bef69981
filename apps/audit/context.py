"""Who is acting, per request or task, without passing the request down to services.

The middleware opens a context for every request; a Celery task or a
management command can open one itself (``request_context(actor=user)``).
A contextvar follows the request through the thread (or the asyncio task)
that serves it and is reset when the request ends.
"""

from __future__ import annotations

import uuid
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RequestContext:
    request_id: str
    ip: str = ""
    # The request itself, so the user is read when the event is written: a login
    # view changes request.user halfway through the request.
    request: Any = None
    # For work outside a request (tasks, commands): the acting user.
    actor: Any = None


_current: ContextVar[RequestContext | None] = ContextVar("lextrace_audit_context", default=None)


def current() -> RequestContext | None:
    return _current.get()


@contextmanager
def request_context(*, request_id: str | None = None, ip: str = "", request=None, actor=None):
    context = RequestContext(request_id=request_id or str(uuid.uuid4()), ip=ip, request=request, actor=actor)
    token = _current.set(context)
    try:
        yield context
    finally:
        _current.reset(token)
