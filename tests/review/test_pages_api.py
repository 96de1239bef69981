"""Review pages and API: the queue, the review page with its controls, decisions through the API
(403 / 400 / 409), legal holds (C9), the retention purge, and the memo export."""

import datetime as dt
import io

import pytest
from django.db import IntegrityError, connection, transaction
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from apps.audit.models import AuditEvent
from apps.cases.models import Case
from apps.review.models import Decision, Review, ReviewItem
from apps.review.services.holds import legal_hold_set, retention_purge
from apps.review.services.reviews import decision_make, review_for_run
from tests.audit.conftest import head_seq
from tests.review.conftest import first_item, make_case, make_run, review_complete

pytestmark = pytest.mark.django_db


def api(user):
    client = APIClient(enforce_csrf_checks=True)
    client.force_authenticate(user)
    return client


# --- queue and page ----------------------------------------------------------------------------


def test_the_queue_lists_finished_runs_awaiting_review(judged_run, personas):
    client = personas.client(personas.reviewer, HTTP_ACCEPT_LANGUAGE="en")
    page = client.get(reverse("review:queue")).content.decode()
    assert f'href="/review/runs/{judged_run.pk}/"' in page and "alpha-marker" in page
    assert "awaiting review (1)" in page
    decision_make(review=review_for_run(judged_run), kind="reject", reason="wrong charge", user=personas.reviewer)
    assert "alpha-marker" not in client.get(reverse("review:queue")).content.decode()
    assert "alpha-marker" in client.get(reverse("review:queue") + "?status=rejected").content.decode()


def test_assign_to_me_filters_the_queue(judged_run, personas):
    client = personas.client(personas.reviewer)
    client.post(reverse("review:assign", args=[judged_run.pk]), {"to": "me"})
    assert Review.objects.get(run=judged_run).assigned_to == personas.reviewer
    assert "alpha-marker" in client.get(reverse("review:queue") + "?assigned=me").content.decode()
    assert "alpha-marker" not in client.get(reverse("review:queue") + "?assigned=none").content.decode()


@pytest.mark.parametrize("who, status", [("staff_a", 403), ("staff_b", 403), ("admin", 403)])
def test_only_reviewers_open_the_review_pages(judged_run, personas, who, status):
    client = personas.client(getattr(personas, who))
    assert client.get(reverse("review:queue")).status_code == status
    assert client.get(reverse("review:review_detail", args=[judged_run.pk])).status_code == status


def test_viewing_a_review_writes_nothing(judged_run, personas):
    from django.test.utils import CaptureQueriesContext

    assert Review.objects.filter(run=judged_run).exists()  # opened when the run finished
    client = personas.client(personas.reviewer)
    with CaptureQueriesContext(connection) as seen:
        assert client.get(reverse("review:review_detail", args=[judged_run.pk])).status_code == 200
        assert api(personas.reviewer).get(f"/api/v1/runs/{judged_run.pk}/review/").status_code == 200
    writes = [q["sql"] for q in seen.captured_queries
              if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE")) and "django_session" not in q["sql"]
              and "axes_" not in q["sql"]]
    assert writes == []


def test_a_reviewer_of_another_team_gets_404(judged_run, personas):
    from apps.accounts.models import Role, Team
    from apps.accounts.services import user_create

    outsider = user_create(username="rev_c", password="x-password-1", roles=[Role.REVIEWER],
                           teams=[Team.objects.create(name="Team C")])
    client = personas.client(outsider)
    assert client.get(reverse("review:review_detail", args=[judged_run.pk])).status_code == 404
    assert "alpha-marker" not in client.get(reverse("review:queue") + "?status=all").content.decode()
    assert api(outsider).post(f"/api/v1/runs/{judged_run.pk}/review/decision/",
                              {"kind": "approve", "reason": "x"}, format="json").status_code == 404


def test_the_review_page_has_a_control_per_item_and_shows_the_what_if(judged_run, personas):
    client = personas.client(personas.reviewer)
    url = reverse("review:review_detail", args=[judged_run.pk])
    page = client.get(url).content.decode()
    assert page.count('class="review-control"') >= 5 and 'id="decision-form"' in page
    result, article, item = first_item(judged_run)
    response = client.post(reverse("review:item_set", args=[judged_run.pk]), {
        "target": "item", "ref": f"{article['article_pk']}:{item['item_pk']}", "position": result.position,
        "version": 1, "action": "override", "value": "0", "reason": "no evidence of entry", "anchor": "x"})
    assert response.status_code == 302 and response["Location"].endswith("?d=0#x")
    page = client.get(url).content.decode()
    assert "no evidence of entry" in page and 'id="whatif-outcome"' in page
    assert "No override yet" not in page


def test_an_override_without_reason_is_shown_as_an_error_and_saves_nothing(judged_run, personas):
    client = personas.client(personas.reviewer, HTTP_ACCEPT_LANGUAGE="en")
    result, article, item = first_item(judged_run)
    response = client.post(reverse("review:item_set", args=[judged_run.pk]), {
        "target": "item", "ref": f"{article['article_pk']}:{item['item_pk']}", "position": 0, "action": "override",
        "value": "0", "reason": "  "}, follow=True)
    assert "A reason is required." in response.content.decode()
    assert not ReviewItem.objects.exists()


# --- decisions through the API (B5, B6, B7-lite) -------------------------------------------------


def test_the_api_refuses_a_self_approval_with_403(personas, lawyer, judging_corpus):
    from apps.cases.services.runs import judgment_execute

    run = make_run(make_case(lawyer, personas.team_a), lawyer)
    judgment_execute(run_id=run.pk, worker="test")
    response = api(lawyer).post(f"/api/v1/runs/{run.pk}/review/decision/", {"kind": "approve", "reason": "mine"},
                                format="json")
    assert response.status_code == 403 and not Decision.objects.exists()


@pytest.mark.parametrize("body", [{"kind": "approve"}, {"kind": "approve", "reason": "   "},
                                  {"kind": "approve", "reason": "x" * 2001}, {"kind": "bless", "reason": "ok"}])
def test_the_api_refuses_a_decision_without_a_valid_reason_with_400(judged_run, personas, body):
    response = api(personas.reviewer).post(f"/api/v1/runs/{judged_run.pk}/review/decision/", body, format="json")
    assert response.status_code == 400 and not Decision.objects.exists()


def test_the_api_records_one_decision_and_answers_409_to_the_next(judged_run, personas, reviewer2):
    url = f"/api/v1/runs/{judged_run.pk}/review/decision/"
    review_complete(judged_run, personas.reviewer)
    first = api(personas.reviewer).post(url, {"kind": "approve", "reason": "all verified", "version": 1}, format="json")
    assert first.status_code == 201 and len(first.json()["snapshot_sha256"]) == 64
    second = api(reviewer2).post(url, {"kind": "reject", "reason": "disagree", "version": 1}, format="json")
    assert second.status_code == 409
    state = api(personas.reviewer).get(f"/api/v1/runs/{judged_run.pk}/review/").json()
    assert state["status"] == "approved" and state["approval_valid"] and len(state["decisions"]) == 1


def test_the_verify_endpoint_invalidates_a_changed_approval(judged_run, personas):
    url = f"/api/v1/runs/{judged_run.pk}/review/"
    review_complete(judged_run, personas.reviewer)
    assert api(personas.reviewer).post(url + "decision/", {"kind": "approve", "reason": "ok"},
                                       format="json").status_code == 201
    with connection.cursor() as cursor:
        cursor.execute("UPDATE cases_defendantresult SET term_months = coalesce(term_months, 0) + 12 WHERE run_id = %s",
                       [judged_run.pk])
    state = api(personas.reviewer).post(url + "verify/").json()
    assert state["status"] == "pending" and state["version"] == 2 and not state["approval_valid"]
    assert not state["decisions"][0]["valid"] and "defendant" in state["decisions"][0]["invalidation_reason"]


# --- legal hold, deletion and retention (C9) -----------------------------------------------------


def test_a_held_case_cannot_be_deleted_by_api_orm_or_sql(judged_run, personas):
    case = judged_run.case
    start = head_seq()
    assert api(personas.reviewer).post(f"/api/v1/cases/{case.pk}/hold/", {"reason": "appeal pending"},
                                       format="json").status_code == 201
    from apps.accounts.models import Role
    from apps.accounts.services import user_create

    admin = user_create(username="admin_a", password="x-password-1", roles=[Role.ADMIN], teams=[personas.team_a])
    response = api(admin).post(f"/api/v1/cases/{case.pk}/delete/", {"reason": "cleanup"}, format="json")
    assert response.status_code == 409
    with pytest.raises(IntegrityError), transaction.atomic():
        Case.objects.filter(pk=case.pk).delete()
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM cases_case WHERE id = %s", [case.pk])
    assert Case.objects.filter(pk=case.pk).exists()
    # Released with a reason, the case can be deleted by an administrator (not by a reviewer).
    assert api(personas.reviewer).delete(f"/api/v1/cases/{case.pk}/hold/", {"reason": ""},
                                         format="json").status_code == 400
    assert api(personas.reviewer).delete(f"/api/v1/cases/{case.pk}/hold/", {"reason": "appeal decided"},
                                         format="json").status_code == 200
    assert api(personas.reviewer).post(f"/api/v1/cases/{case.pk}/delete/", {"reason": "x"},
                                       format="json").status_code == 403
    assert api(admin).post(f"/api/v1/cases/{case.pk}/delete/", {"reason": "duplicate filing"},
                           format="json").status_code == 204
    assert not Case.objects.filter(pk=case.pk).exists()
    actions = list(AuditEvent.objects.filter(seq__gt=start, object_type="cases.case").order_by("seq")
                   .values_list("action", "reason"))
    assert actions == [("case.hold", "appeal pending"), ("case.hold_release", "appeal decided"),
                       ("case.delete", "duplicate filing")]


def test_the_retention_purge_skips_held_cases(personas, judging_corpus):
    old, held, recent = (make_case(personas.staff_a, personas.team_a, title=t) for t in ("old", "held", "recent"))
    long_ago = timezone.now() - dt.timedelta(days=4000)
    Case.objects.filter(pk__in=[old.pk, held.pk]).update(updated_at=long_ago, created_at=long_ago)
    run = make_run(held, personas.staff_a)
    from apps.cases.models import JudgmentRun

    JudgmentRun.objects.filter(pk=run.pk).update(created_at=long_ago, status="done")
    decided = make_run(old, personas.staff_a)
    JudgmentRun.objects.filter(pk=decided.pk).update(created_at=long_ago, status="done")
    Review.objects.create(run=decided)
    legal_hold_set(case=held, reason="litigation hold", user=personas.reviewer)
    start = head_seq()
    dry = retention_purge(days=3650, dry_run=True)
    assert old.pk in dry["candidates"] and held.pk not in dry["candidates"] and recent.pk not in dry["candidates"]
    report = retention_purge(days=3650)
    assert old.pk in report["purged"] and report["held"] >= 1
    assert not Case.objects.filter(pk=old.pk).exists()
    assert Case.objects.filter(pk__in=[held.pk, recent.pk]).count() == 2
    assert AuditEvent.objects.filter(seq__gt=start, action="case.purge", object_id=str(old.pk)).exists()


# --- memo export ---------------------------------------------------------------------------------


def test_the_memo_is_only_for_an_approved_run_and_carries_the_approval(judged_run, personas):
    from docx import Document

    client = personas.client(personas.reviewer)
    assert client.get(reverse("review:memo", args=[judged_run.pk, "docx"])).status_code == 404
    review_complete(judged_run, personas.reviewer)
    decision = decision_make(review=review_for_run(judged_run), kind="approve", reason="verified", user=personas.reviewer)
    response = client.get(reverse("review:memo", args=[judged_run.pk, "docx"]))
    assert response.status_code == 200 and response["Content-Disposition"].startswith("attachment;")
    doc = Document(io.BytesIO(response.content))
    text = "\n".join(p.text for p in doc.paragraphs)
    assert decision.snapshot_sha256 in text and "reviewer" in text and "王某" in text
    result = judged_run.results.order_by("position").first()
    for charge in result.charges:
        assert charge in text
    assert "[1]" in text, "the evidence appendix is numbered as the citations"
    assert doc.tables and doc.tables[0].rows[0].cells[1].text in ("Element", "构成要件")


def test_the_pdf_memo_is_printed_by_chromium(judged_run, personas):
    from apps.review.memo import pdf_renderer

    if pdf_renderer() is None:
        pytest.skip("no Chromium on this machine: the PDF memo answers 501")
    review_complete(judged_run, personas.reviewer)
    decision_make(review=review_for_run(judged_run), kind="approve", reason="verified", user=personas.reviewer)
    response = personas.client(personas.reviewer).get(reverse("review:memo", args=[judged_run.pk, "pdf"]))
    assert response.status_code == 200 and response.content.startswith(b"%PDF")
