"""The home page is a work list per role (issue 21, point 10)."""

import pytest
from django.utils import timezone

from apps.cases.models import JudgmentRun
from apps.review.models import Review
from tests.cases.conftest import make_case, make_run

pytestmark = pytest.mark.django_db


def test_a_clerk_sees_their_cases_running_work_and_runs_returned_for_rework(personas):
    case = make_case(personas.staff_a, personas.team_a, title="我的盗窃案")
    running = make_run(case, personas.staff_a)
    returned = make_run(case, personas.staff_a)
    JudgmentRun.objects.filter(pk=returned.pk).update(status="done", finished_at=timezone.now())
    Review.objects.create(run=returned, status=Review.Status.RETURNED)
    page = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="en").get("/").content.decode()
    assert "我的盗窃案" in page.split('id="clerk-cases"')[1]
    assert f"/cases/runs/{running.pk}/" in page.split('id="clerk-running"')[1].split("</section>")[0]
    assert 'hx-trigger="every 3s"' in page, "running work follows its state without a reload"
    assert f"/cases/runs/{returned.pk}/" in page.split('id="clerk-returned"')[1].split("</section>")[0]
    other = personas.client(personas.staff_b).get("/").content.decode()
    assert "我的盗窃案" not in other


def test_a_clerk_reads_why_a_run_was_returned_or_rejected(personas):
    from apps.review.services.reviews import decision_make

    case = make_case(personas.staff_a, personas.team_a, title="退回的案件")
    run = make_run(case, personas.staff_a)
    JudgmentRun.objects.filter(pk=run.pk).update(status="done", finished_at=timezone.now())
    review = Review.objects.create(run=run)
    decision_make(review=review, kind="return", reason="请补充被害人谅解书的日期。", user=personas.reviewer)
    client = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="zh-hans")
    returned = client.get("/").content.decode().split('id="clerk-returned"')[1].split("</section>")[0]
    assert "请补充被害人谅解书的日期。" in returned and personas.reviewer.username in returned
    panel = client.get(f"/cases/{case.pk}/").content.decode().split('id="case-review"')[1].split("</section>")[0]
    assert "请补充被害人谅解书的日期。" in panel and "已退回经办人" in panel

    rejected = make_run(case, personas.staff_a)
    JudgmentRun.objects.filter(pk=rejected.pk).update(status="done", finished_at=timezone.now())
    decision_make(review=Review.objects.create(run=rejected), kind="reject", reason="事实认定有误，不予采用。",
                  user=personas.reviewer)
    decided = client.get("/").content.decode().split('id="clerk-returned"')[1].split("</section>")[0]
    assert "事实认定有误，不予采用。" in decided.split("最近已作出决定")[1]


def test_a_reviewer_sees_the_queue_with_waiting_times(personas):
    case = make_case(personas.staff_a, personas.team_a, title="待审的案件")
    run = make_run(case, personas.staff_a)
    JudgmentRun.objects.filter(pk=run.pk).update(status="done", finished_at=timezone.now() - timezone.timedelta(hours=5))
    page = personas.client(personas.reviewer, HTTP_ACCEPT_LANGUAGE="en").get("/").content.decode()
    queue = page.split('id="reviewer-queue"')[1].split("</section>")[0]
    assert f"/review/runs/{run.pk}/" in queue and "待审的案件" in queue and "5\xa0hours" in queue


def test_an_admin_sees_failed_jobs_and_model_status(personas):
    case = make_case(personas.staff_a, personas.team_a)
    failed = make_run(case, personas.staff_a)
    JudgmentRun.objects.filter(pk=failed.pk).update(status="failed", message="the database went away")
    page = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="en").get("/").content.decode()
    failures = page.split('id="admin-failures"')[1].split("</section>")[0]
    assert f"/cases/runs/{failed.pk}/" in failures and "the database went away" in failures
    assert 'id="admin-models"' in page and "charge classifier" in page
