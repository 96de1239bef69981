"""Helpers for the audit tests: append events, and tamper as a superuser would (triggers off)."""

from contextlib import contextmanager

import pytest
from django.db import connection, transaction

from apps.audit.models import AuditEvent
from apps.audit.services import audit_append


def head_seq() -> int:
    """Events committed by other (transactional) tests may precede ours; tests count from here."""
    return AuditEvent.objects.order_by("-seq").values_list("seq", flat=True).first() or 0


def sql(statement: str, params=None):
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall() if cursor.description else None


def append(n: int = 1, **fields) -> list[AuditEvent]:
    fields.setdefault("action", "test.event")
    events = []
    with transaction.atomic():
        for i in range(n):
            events.append(audit_append(**{"object_type": "test.thing", "object_id": str(i), "after": {"i": i}, **fields}))
    return events


@contextmanager
def triggers_off():
    """What a superuser can do: replica mode skips ordinary triggers. Local to the test transaction."""
    sql("SET LOCAL session_replication_role = replica")
    try:
        yield
    finally:
        sql("SET LOCAL session_replication_role = origin")


@pytest.fixture
def events(db) -> list[AuditEvent]:
    return append(5)
