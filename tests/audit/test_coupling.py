"""C8: the audit event and the business change commit or roll back together."""

import pytest
from django.db import DatabaseError, transaction

from apps.audit.models import AuditEvent
from apps.corpus.models import Article, ArticleVersion, ImportBatch
from apps.corpus.services.importing import corpus_import
from apps.registry.models import ModelVersion
from apps.registry.services import model_activate
from tests.audit.conftest import as_owner, head_seq
from tests.corpus.conftest import jsonl, statute

pytestmark = pytest.mark.django_db


class BusinessFailure(Exception):
    pass


def make_audit_inserts_fail():
    """A real failure of the audit insert (inside the test transaction, so it is rolled back after).
    Triggers are the table owner's to add."""
    as_owner("""CREATE FUNCTION audit_event_test_fail() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN RAISE EXCEPTION 'injected audit failure'; END $$""")
    as_owner("CREATE TRIGGER audit_event_test_fail BEFORE INSERT ON audit_event FOR EACH ROW EXECUTE FUNCTION audit_event_test_fail()")


def model_version(n: int) -> ModelVersion:
    return ModelVersion.objects.create(kind=ModelVersion.Kind.CHARGES, model_id=f"test-model-{n}", artefact_dir=f"/nonexistent/{n}")


def test_a_rolled_back_business_change_leaves_no_event(personas):
    start = head_seq()
    version = model_version(1)
    with pytest.raises(BusinessFailure), transaction.atomic():
        model_activate(version=version, user=personas.admin)
        assert head_seq() == start + 1
        raise BusinessFailure
    assert head_seq() == start
    version.refresh_from_db()
    assert not version.active


def test_a_failed_audit_insert_stops_the_corpus_import_from_publishing(personas):
    start = head_seq()
    make_audit_inserts_fail()
    with pytest.raises(DatabaseError, match="injected audit failure"):
        corpus_import(data=jsonl(statute(264)), filename="statutes.jsonl", user=personas.admin)
    batch = ImportBatch.objects.get()
    assert batch.status == ImportBatch.Status.FAILED
    assert Article.objects.count() == 0 and ArticleVersion.objects.count() == 0
    assert head_seq() == start


def test_a_failed_audit_insert_keeps_the_previous_model_active(personas):
    first, second = model_version(1), model_version(2)
    model_activate(version=first, user=personas.admin)
    start = head_seq()
    make_audit_inserts_fail()
    with pytest.raises(DatabaseError, match="injected audit failure"):
        model_activate(version=second, user=personas.admin)
    assert list(ModelVersion.objects.filter(active=True)) == [first]
    assert head_seq() == start


def test_every_import_outcome_is_an_event_of_its_own(personas):
    """Published, refused (failed) and duplicate imports each leave one event; a refused import's
    event commits although the import itself wrote nothing."""
    start = head_seq()
    assert corpus_import(data=b"{broken", filename="statutes.jsonl").status == ImportBatch.Status.FAILED
    assert head_seq() == start + 1
    assert corpus_import(data=jsonl(statute(264)), filename="statutes.jsonl").status == ImportBatch.Status.PUBLISHED
    assert corpus_import(data=jsonl(statute(264)), filename="statutes.jsonl").status == ImportBatch.Status.DUPLICATE
    events = list(AuditEvent.objects.filter(seq__gt=start).order_by("seq").values_list("action", "after"))
    assert [a for a, _ in events] == ["corpus.import_failed", "corpus.import", "corpus.import_duplicate"]
    assert events[0][1]["errors"] >= 1 and events[2][1]["filename"] == "statutes.jsonl"