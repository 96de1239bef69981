"""Review services and their database guards: overrides with what-if, four-eyes (B5), reasons (B6),
one decision per version, snapshot-bound approvals (B8), immutable decisions, the golden audit
sequence (C1)."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction

from apps.audit.models import AuditEvent
from apps.review.models import Decision, Review, ReviewItem, WhatIf
from apps.review.services.reviews import (
    FourEyesViolation,
    ReviewConflict,
    approval_verify,
    decision_make,
    review_for_run,
    review_item_set,
    review_item_undo,
)
from tests.audit.conftest import head_seq
from tests.review.conftest import first_item, make_case, make_run, review_complete

pytestmark = pytest.mark.django_db


def sql(statement, params=None):
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall() if cursor.description else None


def override_first_item(run, user, *, value=False, reason="the facts do not show it"):
    review = review_for_run(run)
    result, article, item = first_item(run)
    return review_item_set(review=review, result=result, target="item", ref=f"{article['article_pk']}:{item['item_pk']}",
                           action="override", value=value, reason=reason, user=user)


# --- overrides and the what-if -----------------------------------------------------------


def test_an_override_re_adjudicates_and_undo_restores(judged_run, personas):
    review = review_for_run(judged_run)
    # The defendant with two verified articles (赵某: theft and fraud), so one remains to adjudicate on.
    result = next(r for r in judged_run.results.order_by("position")
                  if sum(a["passed"] for a in r.bundle["audit"]["articles"]) >= 2)
    article = next(a for a in result.bundle["audit"]["articles"] if a["passed"] and a["items"])
    item = article["items"][0]
    ref = f"{article['article_pk']}:{item['item_pk']}"
    review_item_set(review=review, result=result, target="item", ref=ref, action="accept", user=personas.reviewer)
    assert not WhatIf.objects.exists(), "accepting changes nothing: no what-if"
    review_item_set(review=review, result=result, target="article", ref=str(article["article_pk"]), action="override",
                    value=False, reason="the article does not apply to this defendant", user=personas.reviewer)
    whatif = WhatIf.objects.get(review=review, result=result)
    assert whatif.error == "" and whatif.bundle["versions"]["whatif"] == "1"
    assert [c["stage"] for c in whatif.bundle["costs"]] == ["adjudicator"]
    changed = next(a for a in whatif.bundle["audit"]["articles"] if a["article_pk"] == article["article_pk"])
    assert not changed["passed"] and changed["reason"].startswith("reviewer:")
    assert article["key"] not in whatif.bundle["judgment"].get("article_keys", [])
    # The stored result is untouched.
    result.refresh_from_db()
    assert next(a for a in result.bundle["audit"]["articles"] if a["article_pk"] == article["article_pk"])["passed"]

    item_row = ReviewItem.objects.get(review=review, target="article")
    review_item_undo(review=review, item=item_row, user=personas.reviewer)
    assert not WhatIf.objects.filter(review=review, result=result).exists()
    assert list(ReviewItem.objects.filter(review=review).values_list("target", "action")) == [("item", "accept")]


@pytest.mark.parametrize("reason", ["", "   \n\t", "x" * 2001])
def test_an_override_needs_a_real_reason(judged_run, personas, reason):
    with pytest.raises(ValidationError):
        override_first_item(judged_run, personas.reviewer, reason=reason)
    assert not ReviewItem.objects.exists()


def test_an_override_of_something_not_in_the_evidence_is_refused(judged_run, personas):
    review = review_for_run(judged_run)
    result = judged_run.results.first()
    with pytest.raises(ValidationError):
        review_item_set(review=review, result=result, target="item", ref="999999:1", action="override", value=False,
                        reason="x", user=personas.reviewer)


def test_staff_cannot_review(judged_run, personas):
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied):
        decision_make(review=review_for_run(judged_run), kind="approve", reason="ok", user=personas.staff_a)


# --- four-eyes (B5) and reasons (B6) -------------------------------------------------------


def test_the_submitter_cannot_decide_and_the_refusal_is_audited(personas, lawyer, judging_corpus):
    from apps.cases.services.runs import judgment_execute

    case = make_case(lawyer, personas.team_a)
    run = make_run(case, lawyer)
    assert judgment_execute(run_id=run.pk, worker="test") == "done"
    run.refresh_from_db()
    start = head_seq()
    with pytest.raises(FourEyesViolation):
        decision_make(review=review_for_run(run), kind="approve", reason="looks right", user=lawyer)
    with pytest.raises(FourEyesViolation):
        override_first_item(run, lawyer)
    assert not Decision.objects.exists() and not ReviewItem.objects.exists()
    denied = list(AuditEvent.objects.filter(seq__gt=start, action="review.denied").values_list("actor_username", "after"))
    assert [(who, after["rule"]) for who, after in denied] == [("lawyer", "four-eyes"), ("lawyer", "four-eyes")]
    # Another reviewer may.
    review_complete(run, personas.reviewer)
    decision_make(review=review_for_run(run), kind="approve", reason="verified every item", user=personas.reviewer)


def _raw_decision(review, *, reviewer_id, submitter_id, reason="ok", kind="reject", version=None):
    sql("INSERT INTO review_decision (review_id, version, kind, reason, reviewer_id, submitter_id, snapshot_sha256, "
        "decided_at, valid, invalidation_reason) VALUES (%s, %s, %s, %s, %s, %s, '', now(), true, '')",
        [review.pk, version or review.version, kind, reason, reviewer_id, submitter_id])


def test_raw_sql_cannot_record_a_self_approval(judged_run, personas):
    review = review_for_run(judged_run)
    submitter = judged_run.requested_by_id
    with pytest.raises(IntegrityError), transaction.atomic():
        _raw_decision(review, reviewer_id=submitter, submitter_id=submitter)  # CHECK reviewer <> submitter
    with pytest.raises(IntegrityError, match="submitter"), transaction.atomic():
        # A forged submitter does not help: the trigger compares with the run's real submitter.
        _raw_decision(review, reviewer_id=submitter, submitter_id=personas.reviewer.pk)
    with pytest.raises(IntegrityError), transaction.atomic():
        _raw_decision(review, reviewer_id=personas.reviewer.pk, submitter_id=submitter, reason="   ")
    with pytest.raises(IntegrityError), transaction.atomic():
        _raw_decision(review, reviewer_id=personas.reviewer.pk, submitter_id=submitter, kind="approve")  # no snapshot
    _raw_decision(review, reviewer_id=personas.reviewer.pk, submitter_id=submitter)
    with pytest.raises(IntegrityError), transaction.atomic():
        _raw_decision(review, reviewer_id=personas.admin.pk, submitter_id=submitter)  # second decision, same version


@pytest.mark.parametrize("kind, reason", [("approve", ""), ("approve", "  \n "), ("reject", "x" * 2001), ("maybe", "ok")])
def test_a_decision_needs_a_known_kind_and_a_reason(judged_run, personas, kind, reason):
    review = review_for_run(judged_run)
    with pytest.raises(ValidationError):
        decision_make(review=review, kind=kind, reason=reason, user=personas.reviewer)
    review.refresh_from_db()
    assert review.status == Review.Status.PENDING and not Decision.objects.exists()


def test_one_decision_per_review_version(judged_run, personas, reviewer2):
    review = review_for_run(judged_run)
    decision_make(review=review, kind="return", reason="the facts need the victim's statement", user=personas.reviewer)
    with pytest.raises(ReviewConflict):
        decision_make(review=review, kind="approve", reason="fine", user=reviewer2)
    with pytest.raises(ReviewConflict):
        override_first_item(judged_run, reviewer2)
    assert Decision.objects.count() == 1
    assert Review.objects.get(pk=review.pk).status == Review.Status.RETURNED


def test_a_stale_page_gets_a_conflict(judged_run, personas):
    review = review_for_run(judged_run)
    with pytest.raises(ReviewConflict):
        decision_make(review=review, kind="approve", reason="ok", user=personas.reviewer, version=review.version + 1)


def test_a_decision_is_immutable_except_for_its_invalidation(judged_run, personas):
    review_complete(judged_run, personas.reviewer)
    decision = decision_make(review=review_for_run(judged_run), kind="approve", reason="ok", user=personas.reviewer)
    with pytest.raises(IntegrityError), transaction.atomic():
        Decision.objects.filter(pk=decision.pk).update(reason="rewritten later")
    with pytest.raises(IntegrityError), transaction.atomic():
        Decision.objects.filter(pk=decision.pk).update(snapshot_sha256="0" * 64)
    with pytest.raises(IntegrityError), transaction.atomic():
        sql("DELETE FROM review_decision WHERE id = %s", [decision.pk])
    Decision.objects.filter(pk=decision.pk).update(valid=False, invalidated_at="2026-01-01T00:00:00Z",
                                                   invalidation_reason="test")
    with pytest.raises(IntegrityError), transaction.atomic():
        Decision.objects.filter(pk=decision.pk).update(valid=True)  # never valid again


# --- approvals bound to a snapshot (B8) ----------------------------------------------------


def _approve(run, user):
    review_complete(run, user)
    decision = decision_make(review=review_for_run(run), kind="approve", reason="every item checked", user=user)
    assert len(decision.snapshot_sha256) == 64
    assert approval_verify(review_for_run(run)) is None, "nothing changed: the approval holds"
    return decision


def _assert_invalidated(run, decision, words):
    review = review_for_run(run)
    invalidated = approval_verify(review)
    assert invalidated is not None and invalidated.pk == decision.pk
    decision.refresh_from_db()
    review.refresh_from_db()
    assert not decision.valid and words in decision.invalidation_reason
    assert review.status == Review.Status.PENDING and review.version == 2
    event = AuditEvent.objects.filter(action="review.invalidate").order_by("-seq").first()
    assert event.object_id == str(review.pk) and event.after["version"] == 2
    # The run is reviewed again from a clean slate and can be approved anew.
    assert approval_verify(review) is None
    review_complete(run, decision.reviewer)  # the new version is covered anew
    decision_make(review=review, kind="approve", reason="re-checked", user=decision.reviewer)


def test_an_evidence_change_through_the_orm_invalidates_the_approval(judged_run, personas):
    decision = _approve(judged_run, personas.reviewer)
    result = judged_run.results.order_by("position").first()
    result.bundle["judgment"]["reasoning"] += "（事后添加）"
    result.save(update_fields=["bundle"])
    _assert_invalidated(judged_run, decision, "result of defendant 1")


def test_an_evidence_change_through_raw_sql_invalidates_the_approval(judged_run, personas):
    decision = _approve(judged_run, personas.reviewer)
    sql("UPDATE cases_defendantresult SET charges = array_append(charges, '诈骗罪') WHERE run_id = %s AND position = 0",
        [judged_run.pk])
    _assert_invalidated(judged_run, decision, "result of defendant 1")


def test_a_changed_statute_text_invalidates_the_approval(judged_run, personas):
    decision = _approve(judged_run, personas.reviewer)
    result = judged_run.results.order_by("position").first()
    version_pk = next(a["version_pk"] for a in result.bundle["audit"]["articles"] if a["passed"])
    sql("UPDATE corpus_articleversion SET text = text || '（篡改）' WHERE id = %s", [version_pk])
    _assert_invalidated(judged_run, decision, "statute")


def test_an_override_is_part_of_the_snapshot(judged_run, personas):
    override_first_item(judged_run, personas.reviewer)
    decision = _approve(judged_run, personas.reviewer)
    assert "override" in {i["action"] for i in decision.snapshot["review"]["overrides"]}
    assert decision.snapshot["results"][0]["whatif_sha256"]
    sql("UPDATE review_reviewitem SET reason = 'changed afterwards' WHERE review_id = %s", [decision.review_id])
    _assert_invalidated(judged_run, decision, "overrides")


# --- C1: the golden workflow ----------------------------------------------------------------


def test_the_golden_workflow_leaves_the_expected_audit_sequence(personas, judging_corpus):
    from apps.cases.services.runs import judgment_execute, judgment_request

    start = head_seq()
    case = make_case(personas.staff_a, personas.team_a)
    run = judgment_request(case=case, user=personas.staff_a)
    assert judgment_execute(run_id=run.pk, worker="test") == "done"
    run.refresh_from_db()
    override_first_item(run, personas.reviewer, reason="element not shown")
    review_complete(run, personas.reviewer)
    decision_make(review=review_for_run(run), kind="approve", reason="overrides applied; approved", user=personas.reviewer)
    events = list(AuditEvent.objects.filter(seq__gt=start).order_by("seq"))
    rest = [e for e in events if e.action == "review.accept_rest"]
    assert rest and all((e.actor_username, e.role) == ("reviewer", "reviewer") for e in rest)
    opened = [e for e in events if e.action == "review.open"]
    assert len(opened) == run.results.count() and all(e.actor_username == "reviewer" for e in opened), \
        "the reviewer's first opening of each judgment is on the record"
    events = [e for e in events if e.action not in ("review.accept_rest", "review.open")]
    assert [(e.action, e.actor_username, e.role) for e in events] == [
        ("case.create", "staff_a", "staff"),
        ("run.request", "staff_a", "staff"),
        ("review.override", "reviewer", "reviewer"),
        ("review.approve", "reviewer", "reviewer"),
    ]
    override, approve = events[2], events[3]
    assert override.reason == "element not shown" and override.before is None and override.after["action"] == "override"
    assert approve.before == {"status": "pending", "version": 1}
    assert approve.after["status"] == "approved" and len(approve.after["snapshot_sha256"]) == 64
    assert approve.reason == "overrides applied; approved"
