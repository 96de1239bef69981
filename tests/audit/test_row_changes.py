"""C2: writes that bypass the services (queryset.update, bulk_create, raw SQL, delete) are still captured
by the row triggers of the reviewed tables, and that capture is append-only."""

import pytest
from django.db import IntegrityError, ProgrammingError, connection, transaction

from apps.audit.models import AuditRowChange
from apps.cases.models import Case, DefendantResult
from tests.audit.conftest import as_owner

pytestmark = pytest.mark.django_db


def _changes(tbl, row_id):
    return list(AuditRowChange.objects.filter(tbl=tbl, row_id=str(row_id)).values_list("op", "old", "new"))


def test_update_bulk_create_raw_sql_and_delete_are_captured(personas):
    case = Case.objects.create(team=personas.team_a, title="captured", facts="事实甲", offence_date="2020-01-01",
                               defendants=["甲"])
    Case.objects.filter(pk=case.pk).update(title="changed by queryset.update")
    [bulk] = Case.objects.bulk_create([Case(team=personas.team_a, title="bulk", facts="事实乙", offence_date="2020-01-01",
                                            defendants=["乙"])])
    with connection.cursor() as cursor:
        cursor.execute("UPDATE cases_case SET facts = '改写的事实' WHERE id = %s", [case.pk])
    Case.objects.filter(pk=bulk.pk).delete()

    ops = _changes("cases_case", case.pk)
    assert [op for op, *_ in ops] == ["INSERT", "UPDATE", "UPDATE"]
    assert ops[1][1]["title"] == "captured" and ops[1][2]["title"] == "changed by queryset.update"
    assert "facts" not in ops[2][2] and ops[2][1]["facts_md5"] != ops[2][2]["facts_md5"], "large text kept as md5"
    assert [op for op, *_ in _changes("cases_case", bulk.pk)] == ["INSERT", "DELETE"]


def test_an_evidence_bundle_change_is_captured_as_its_hash(personas):
    from apps.cases.models import JudgmentRun

    case = Case.objects.create(team=personas.team_a, title="t", facts="f", offence_date="2020-01-01", defendants=["甲"])
    run = JudgmentRun.objects.create(case=case, requested_by=personas.staff_a, strategy="statistical", ablation="full",
                                     case_version=1, facts="f", defendants=["甲"], offence_date="2020-01-01")
    result = DefendantResult.objects.create(run=run, position=0, defendant="甲", status="judged",
                                            bundle={"judgment": {"status": "judged"}})
    DefendantResult.objects.filter(pk=result.pk).update(bundle={"tampered": True})
    op, old, new = _changes("cases_defendantresult", result.pk)[-1]
    assert op == "UPDATE" and old["bundle_md5"] != new["bundle_md5"] and "bundle" not in new


def test_the_capture_cannot_be_changed_or_removed(personas):
    Case.objects.create(team=personas.team_a, title="x", facts="y", offence_date="2020-01-01", defendants=["z"])
    row = AuditRowChange.objects.order_by("-id").first()
    statements = ("UPDATE audit_row_change SET tbl = 'x' WHERE id = %s", "DELETE FROM audit_row_change WHERE id = %s",
                  "TRUNCATE audit_row_change")
    for statement in statements:
        params = [row.pk] if "%s" in statement else None
        # The application role: refused by privileges (it may only SELECT and INSERT).
        with pytest.raises(ProgrammingError, match="permission denied"), transaction.atomic(), \
                connection.cursor() as cursor:
            cursor.execute(statement, params)
        # The owner: refused by the append-only triggers.
        with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
            as_owner(statement, params)
    assert AuditRowChange.objects.filter(pk=row.pk).exists()
