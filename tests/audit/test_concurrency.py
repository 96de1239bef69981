"""C6: concurrent appends from separate connections form one linear chain."""

import threading

import pytest
from django.db import connection, transaction

from apps.audit.models import AuditEvent
from apps.audit.services import AuditOutsideTransaction, audit_append
from apps.audit.verify import chain_verify
from tests.audit.conftest import head_seq, tamper

THREADS, PER_THREAD = 8, 50


def remove_committed_events_after(seq: int) -> None:
    # These rows were committed; the test flush leaves audit_event alone (the model is
    # unmanaged, because the trigger refuses TRUNCATE), so clean up as the owner could.
    with transaction.atomic():
        tamper("DELETE FROM audit_event WHERE seq > %s", [seq])


@pytest.mark.django_db(transaction=True)
def test_concurrent_appends_form_one_linear_chain():
    start = head_seq()
    barrier = threading.Barrier(THREADS)
    errors = []

    def writer(n: int) -> None:
        try:
            barrier.wait(timeout=30)
            for i in range(PER_THREAD):
                with transaction.atomic():
                    audit_append(action="test.concurrent", object_type="thread", object_id=str(n), after={"i": i})
        except Exception as exc:  # noqa: BLE001 - reported below; a thread's exception would otherwise vanish
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(THREADS)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not errors, errors
        assert not any(thread.is_alive() for thread in threads)

        rows = list(AuditEvent.objects.filter(seq__gt=start).order_by("seq").values_list("seq", "prev_hash", "hash", "object_id", "after"))
        total = THREADS * PER_THREAD
        assert [seq for seq, *_ in rows] == list(range(start + 1, start + total + 1))
        assert len({prev for _, prev, *_ in rows}) == total, "two events share a prev_hash: the chain forked"
        assert all(rows[i][1] == rows[i - 1][2] for i in range(1, total))
        for n in range(THREADS):
            assert [after["i"] for _, _, _, obj, after in rows if obj == str(n)] == list(range(PER_THREAD))
        report = chain_verify()
        assert report.ok, report.summary()
    finally:
        for thread in threads:
            thread.join(timeout=5)
        remove_committed_events_after(start)
    assert head_seq() == start


@pytest.mark.django_db(transaction=True)
def test_an_append_outside_a_transaction_is_refused():
    start = head_seq()
    with pytest.raises(AuditOutsideTransaction):
        audit_append(action="test.autocommit")
    assert head_seq() == start
