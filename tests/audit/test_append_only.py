"""C3: nobody changes or removes an audit event through ordinary SQL.

Two guards, for two kinds of actor (apps/audit/migrations/0001_initial.py): the application role
(what the web and worker run as) is granted only SELECT and INSERT, so privileges stop it; the
owner of the table is stopped by the append-only triggers, which only an owner (or a superuser)
can disable. What is done with triggers disabled is found by the verifier (test_verify.py). The
role itself is checked in tests/security/test_db_roles.py.
"""

import pytest
from django.db import IntegrityError, ProgrammingError, transaction

from apps.audit.models import AuditEvent
from apps.audit.verify import chain_verify
from tests.audit.conftest import as_owner, sql

pytestmark = pytest.mark.django_db

CHANGES = [
    "UPDATE audit_event SET reason = 'edited' WHERE seq = %(seq)s",
    "UPDATE audit_event SET after = '{\"i\": 99}' WHERE seq = %(seq)s",
    "DELETE FROM audit_event WHERE seq = %(seq)s",
    "TRUNCATE audit_event",
]


@pytest.mark.parametrize("statement", CHANGES)
def test_privileges_refuse_update_delete_and_truncate_to_the_app_role(events, statement):
    target = events[2]
    with pytest.raises(ProgrammingError, match="permission denied for table audit_event"), transaction.atomic():
        sql(statement, {"seq": target.seq})
    assert AuditEvent.objects.get(seq=target.seq).hash == target.hash
    assert chain_verify().ok


@pytest.mark.parametrize("statement", CHANGES)
def test_the_trigger_refuses_update_delete_and_truncate_to_the_owner(events, statement):
    target = events[2]
    with pytest.raises(IntegrityError, match="audit_event is append-only"), transaction.atomic():
        as_owner(statement, {"seq": target.seq})
    assert AuditEvent.objects.get(seq=target.seq).hash == target.hash
    assert chain_verify().ok


def test_the_orm_cannot_change_or_delete_events_either(events):
    with pytest.raises(ProgrammingError, match="permission denied"), transaction.atomic():
        AuditEvent.objects.filter(seq=events[0].seq).update(reason="bulk edit")
    with pytest.raises(ProgrammingError, match="permission denied"), transaction.atomic():
        events[1].delete()
    assert AuditEvent.objects.filter(seq__gte=events[0].seq).count() == 5


def test_an_insert_that_does_not_extend_the_head_is_refused(events):
    forged = AuditEvent(seq=events[-1].seq + 1, at=events[-1].at, action="test.forged", prev_hash="f" * 64)
    forged.hash = forged.compute_hash()
    with pytest.raises(IntegrityError, match="prev_hash does not match"), transaction.atomic():
        forged.save(force_insert=True)
    skipping = AuditEvent(seq=events[-1].seq + 2, at=events[-1].at, action="test.forged", prev_hash=events[-1].hash)
    skipping.hash = skipping.compute_hash()
    with pytest.raises(IntegrityError, match="does not follow an existing event"), transaction.atomic():
        skipping.save(force_insert=True)
    fork = AuditEvent(seq=events[-1].seq, at=events[-1].at, action="test.fork", prev_hash=events[-2].hash)
    fork.hash = fork.compute_hash()
    with pytest.raises(IntegrityError), transaction.atomic():
        fork.save(force_insert=True)
    assert chain_verify().ok
