"""The number of SQL queries of each page grows with nothing the page lists (no N+1): each page
is rendered once with one case/run and once with several more, under the same cap
(django_assert_max_num_queries), and the counts must be equal."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.cases.conftest import make_case, make_run

pytestmark = pytest.mark.django_db


def count(client, url, **headers) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url, **headers)
    assert response.status_code == 200, (url, response.status_code)
    return len(ctx.captured_queries)


def more_runs(personas, run, n=4):
    """n more cases of team A, each with a finished copy of ``run``'s results (what the lists show)."""
    from apps.cases.models import DefendantResult, JudgmentRun
    from apps.review.models import Review

    for i in range(n):
        case = make_case(personas.staff_a, personas.team_a, title=f"extra {i}")
        extra = make_run(case, personas.staff_a)
        JudgmentRun.objects.filter(pk=extra.pk).update(status=JudgmentRun.Status.DONE, finished_at=run.finished_at)
        Review.objects.create(run_id=extra.pk)  # opened with the results, as the worker does
        for r in run.results.all():
            DefendantResult.objects.create(**{f.attname: getattr(r, f.attname) for f in r._meta.concrete_fields
                                              if f.attname not in ("id", "run_id")}, run_id=extra.pk)


# page -> (url, the cap, who reads it). The caps are the counts measured when they were set: a new
# query per page is a deliberate change of this table. (+1 on the case list, case detail and API run
# detail since a finished run's review is opened with its results: its decisions are read, in one query.)
PAGES = {
    "case list": (lambda run: "/cases/", 13, "staff_a"),
    "case detail": (lambda run: f"/cases/{run.case_id}/", 17, "staff_a"),
    "evidence page": (lambda run: f"/cases/runs/{run.pk}/defendants/0/", 18, "staff_a"),
    "API run detail": (lambda run: f"/api/v1/runs/{run.pk}/", 12, "staff_a"),
    "graph statistics": (lambda run: "/graph/", 26, "staff_a"),
    "graph explorer": (lambda run: "/graph/explore/?q=264", 19, "staff_a"),
    "review page": (lambda run: f"/review/runs/{run.pk}/", 33, "reviewer"),
}


@pytest.mark.parametrize("page", list(PAGES))
def test_a_page_does_a_bounded_number_of_queries(personas, judged_run, django_assert_max_num_queries, page):
    url, cap, who = PAGES[page]
    client = personas.client(getattr(personas, who))
    client.get(url(judged_run), HTTP_ACCEPT="text/html,application/json")  # first visit: a review is opened once
    with django_assert_max_num_queries(cap):
        first = count(client, url(judged_run), HTTP_ACCEPT="text/html,application/json")
    more_runs(personas, judged_run)
    with django_assert_max_num_queries(cap):
        again = count(client, url(judged_run), HTTP_ACCEPT="text/html,application/json")
    print(page, first, again)
    assert again == first, f"{page}: {first} queries with one case, {again} with more"


@pytest.mark.parametrize("url", ["/cases/runs/{pk}/bundle.json", "/api/v1/runs/{pk}/bundle/",
                                 "/api/v1/runs/{pk}/bundle/?defendant=1"])
def test_a_bundle_download_answers_a_conditional_get_with_304(personas, judged_run, url):
    from apps.cases.models import DefendantResult

    client = personas.client(personas.staff_a)
    url = url.format(pk=judged_run.pk)
    first = client.get(url, HTTP_ACCEPT="application/json")
    etag = first["ETag"]
    assert first.status_code == 200 and etag.startswith('"') and "private" in first["Cache-Control"]
    again = client.get(url, HTTP_ACCEPT="application/json", HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and again.content == b"" and again["ETag"] == etag
    # Another team never learns the validator (404 before any comparison).
    assert personas.client(personas.staff_b).get(url, HTTP_IF_NONE_MATCH=etag).status_code == 404
    # A changed bundle (a retention purge rewrites them) is a new validator and a full answer.
    result = judged_run.results.order_by("-position").first()
    DefendantResult.objects.filter(pk=result.pk).update(bundle={**result.bundle, "purged": True})
    changed = client.get(url, HTTP_ACCEPT="application/json", HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and changed["ETag"] != etag
    assert any(b.get("purged") for b in changed.json()["bundles"])
