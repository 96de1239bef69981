"""C3: nobody changes or removes an audit event through ordinary SQL.

The app role is a superuser of this private cluster (CREATE EXTENSION age
needs it), so for it the trigger is the guard; a role granted only SELECT and
INSERT is stopped earlier, by privileges.
"""

import pytest
from django.db import IntegrityError, ProgrammingError, transaction

from apps.audit.models import AuditEvent
from apps.audit.services import audit_append
from apps.audit.verify import chain_verify
from tests.audit.conftest import sql

pytestmark = pytest.mark.django_db

CHANGES = [
    "UPDATE audit_event SET reason = 'edited' WHERE seq = %(seq)s",
    "UPDATE audit_event SET after = '{\"i\": 99}' WHERE seq = %(seq)s",
    "DELETE FROM audit_event WHERE seq = %(seq)s",
    "TRUNCATE audit_event",
]


@pytest.mark.parametrize("statement", CHANGES)
def test_the_trigger_refuses_update_delete_and_truncate_for_the_app_role(events, statement):
    target = events[2]
    with pytest.raises(IntegrityError, match="audit_event is append-only"), transaction.atomic():
        sql(statement, {"seq": target.seq})
    assert AuditEvent.objects.get(seq=target.seq).hash == target.hash
    assert chain_verify().ok


def test_the_orm_cannot_change_or_delete_events_either(events):
    with pytest.raises(IntegrityError, match="append-only: UPDATE"), transaction.atomic():
        AuditEvent.objects.filter(seq=events[0].seq).update(reason="bulk edit")
    with pytest.raises(IntegrityError, match="append-only: DELETE"), transaction.atomic():
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


def test_an_insert_only_role_is_refused_by_privileges(events):
    # Created inside the test transaction: the role and its grants vanish with the rollback.
    sql("""DO $$ BEGIN
               IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'lextrace_audit_probe') THEN
                   CREATE ROLE lextrace_audit_probe NOLOGIN NOSUPERUSER NOBYPASSRLS;
               END IF;
           END $$""")
    sql("REVOKE ALL ON audit_event FROM lextrace_audit_probe")
    sql("GRANT SELECT, INSERT ON audit_event TO lextrace_audit_probe")
    assert sql("SELECT rolsuper FROM pg_roles WHERE rolname = 'lextrace_audit_probe'") == [(False,)]
    sql("SET LOCAL ROLE lextrace_audit_probe")
    try:
        assert sql("SELECT current_user") == [("lextrace_audit_probe",)]
        with transaction.atomic():
            appended = audit_append(action="test.probe", after={"by": "probe"})
        assert appended.seq == events[-1].seq + 1
        for statement in CHANGES:
            with pytest.raises(ProgrammingError, match="permission denied for table audit_event"), transaction.atomic():
                sql(statement, {"seq": events[0].seq})
    finally:
        sql("RESET ROLE")
    assert chain_verify().ok
