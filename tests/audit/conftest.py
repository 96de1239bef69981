"""Helpers for the audit tests: append events, and tamper as the table owner could (triggers off)."""

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


def tamper(statement: str, params=None) -> None:
    """What the owner of the audit tables (or a superuser) can do and the application role cannot:
    disable the append-only triggers and change rows. Inside the test transaction (rolled back)."""
    from tests.conftest import sql_as_owner

    sql_as_owner(statement, params, triggers_off=True)


def as_owner(statement: str, params=None) -> None:
    """A statement run by the owner with the triggers in place."""
    from tests.conftest import sql_as_owner

    sql_as_owner(statement, params)


@pytest.fixture
def events(db) -> list[AuditEvent]:
    return append(5)
