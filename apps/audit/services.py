"""audit_append: the only writer of the audit trail."""

from __future__ import annotations

import hashlib

from django.db import connection
from django.utils import timezone

from lexlib.canonical import GENESIS_HASH, normalize
from apps.audit.context import current
from apps.audit.models import AuditEvent

# One transaction-scoped advisory lock serialises appends from every process,
# so concurrent writers form one linear chain. Derived from a fixed name so
# it does not collide with locks other code takes by small integers.
APPEND_LOCK_KEY = int.from_bytes(hashlib.sha256(b"lextrace.audit_event.append").digest()[:8], "big", signed=True)


class AuditOutsideTransaction(RuntimeError):
    """audit_append was called in autocommit mode: the event could outlive a rolled-back change."""


def _actor_roles(actor) -> str:
    return ",".join(sorted(str(r) for r in (getattr(actor, "roles", None) or [])))


def audit_append(*, action: str, obj=None, object_type: str | None = None, object_id=None, before=None, after=None,
                 reason: str = "", actor=None, request=None) -> AuditEvent:
    """Record one event, in the caller's transaction: the change and its event commit or roll back together.

    ``obj`` names the object (``app_label.model`` and its pk) unless
    ``object_type``/``object_id`` are given. The actor is ``actor``, else the
    user of ``request``, else the actor or request user of the current context
    (RequestContextMiddleware, ``request_context``). ``before``/``after`` are stored in canonical
    form (lexlib/canonical.py: floats become strings).

    Call it as late as possible in the transaction: from here to the commit,
    every other audited write waits on the append lock.
    """
    if not connection.in_atomic_block:
        raise AuditOutsideTransaction(
            f"audit_append({action!r}) must run inside the business transaction (transaction.atomic)"
        )
    if not action:
        raise ValueError("an audit event needs an action")

    context = current()
    if actor is None and request is not None:
        actor = getattr(request, "user", None)
    if request is None and context is not None:
        request = context.request
        if actor is None:
            actor = context.actor or getattr(request, "user", None)
    if actor is not None and not getattr(actor, "is_authenticated", False):
        actor = None
    if request is not None:
        request_id = getattr(request, "request_id", "") or (context.request_id if context else "")
        ip = request.META.get("REMOTE_ADDR", "")
    else:
        request_id, ip = (context.request_id, context.ip) if context else ("", "")

    if obj is not None:
        object_type = object_type or obj._meta.label_lower
        object_id = obj.pk if object_id is None else object_id
    fields = {
        "actor_id": actor.pk if actor is not None else None,
        "actor_username": normalize(actor.get_username() if actor is not None else ""),
        "role": normalize(_actor_roles(actor)),
        "request_id": normalize(str(request_id)[:128]),
        "ip": normalize(str(ip)[:64]),
        "action": normalize(action),
        "object_type": normalize(object_type or ""),
        "object_id": normalize("" if object_id is None else str(object_id)),
        "before": normalize(before),
        "after": normalize(after),
        "reason": normalize(reason or ""),
    }

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [APPEND_LOCK_KEY])
        # Read after the lock: in READ COMMITTED each statement sees what the previous
        # holder committed. Under REPEATABLE READ the head could be stale; the primary
        # key, the unique prev_hash and the link trigger then refuse the insert rather
        # than fork the chain.
        cursor.execute("SELECT seq, hash FROM audit_event ORDER BY seq DESC LIMIT 1")
        head = cursor.fetchone()
    seq, prev_hash = (head[0] + 1, head[1]) if head else (1, GENESIS_HASH)
    event = AuditEvent(seq=seq, at=timezone.now(), prev_hash=prev_hash, **fields)
    event.hash = event.compute_hash()
    event.save(force_insert=True)
    return event
