"""The REST API: the same operations as the pages, token or session auth, throttles, and a valid schema."""

import re

import pytest
from django.conf import settings
from django.core.cache import cache
from django.core.management import call_command
from django.test import override_settings

from apps.cases.models import Case, JudgmentRun
from apps.cases.services.runs import judgment_execute
from tests.cases.conftest import demo_case, make_case, make_run
from tests.conftest import api_token_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(personas):
    token = api_token_for(personas.staff_a)
    return personas.client(HTTP_AUTHORIZATION=f"Token {token}")


def case_payload(team, **extra):
    record = demo_case()
    return {"team": team.pk, "title": "API case", "facts": record["fact"], "offence_date": "2018-09-14",
            "defendants": record["defendants"], **extra}


def test_a_case_is_submitted_run_polled_and_its_bundle_fetched(api, personas, judging_corpus,
                                                              django_capture_on_commit_callbacks):
    created = api.post("/api/v1/cases/", case_payload(personas.team_a), content_type="application/json")
    assert created.status_code == 201, created.content
    case = created.json()
    assert case["version"] == 1 and case["defendants"] == ["王某", "赵某"] and case["team_name"] == "Team A"

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        started = api.post(f"/api/v1/cases/{case['id']}/runs/", {"strategy": "statistical", "ablation": "full"},
                           content_type="application/json")
    assert started.status_code == 201 and len(callbacks) == 1
    run = started.json()
    assert (run["status"], run["strategy"], run["ablation"], run["case_version"]) == \
        ("queued", "statistical", "full", 1)

    # What the worker would do with the message.
    assert judgment_execute(run_id=run["id"], worker="api-test") == "done"
    polled = api.get(f"/api/v1/runs/{run['id']}/").json()
    assert polled["status"] == "done" and [r["defendant"] for r in polled["results"]] == ["王某", "赵某"]
    assert all(p["finished"] for p in polled["progress"]) and polled["attempts"][0]["status"] == "done"
    assert polled["versions"]["pipeline"].startswith("lextrace-pipeline/")

    bundles = api.get(f"/api/v1/runs/{run['id']}/bundle/").json()
    assert [b["defendant"] for b in bundles["bundles"]] == ["王某", "赵某"]
    assert {"research", "audit", "judgment", "costs", "versions"} <= set(bundles["bundles"][0])
    one = api.get(f"/api/v1/runs/{run['id']}/bundle/?defendant=1").json()
    assert [b["defendant"] for b in one["bundles"]] == ["赵某"]
    assert api.get(f"/api/v1/runs/{run['id']}/bundle/?defendant=x").status_code == 400

    listed = api.get(f"/api/v1/cases/{case['id']}/runs/").json()
    assert listed["count"] == 1 and listed["results"][0]["id"] == run["id"]


def test_cases_are_listed_and_searched(api, personas):
    make_case(personas.staff_a, personas.team_a, title="甲案")
    make_case(personas.staff_b, personas.team_b, title="乙案")
    body = api.get("/api/v1/cases/").json()
    assert [c["title"] for c in body["results"]] == ["甲案"]
    assert api.get("/api/v1/cases/?q=赵某").json()["count"] == 1
    assert api.get("/api/v1/cases/?q=无此人").json()["count"] == 0
    assert api.get("/api/v1/cases/?status=none").json()["count"] == 1
    assert api.get("/api/v1/cases/?status=bogus").status_code == 400
    assert api.get("/api/v1/cases/?page=99").status_code == 404


def test_an_edit_through_the_api_is_versioned_and_conflicts_are_409(api, personas):
    case = make_case(personas.staff_a, personas.team_a)
    edited = api.patch(f"/api/v1/cases/{case.pk}/", {"version": 1, "defendants": ["王某"]},
                       content_type="application/json")
    assert edited.status_code == 200 and edited.json()["version"] == 2
    stale = api.patch(f"/api/v1/cases/{case.pk}/", {"version": 1, "title": "x"}, content_type="application/json")
    assert stale.status_code == 409
    assert case.revisions.count() == 2


def test_cancel_and_retry(api, personas):
    case = make_case(personas.staff_a, personas.team_a)
    run = make_run(case, personas.staff_a)
    cancelled = api.post(f"/api/v1/runs/{run.pk}/cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert api.post(f"/api/v1/runs/{run.pk}/cancel/").status_code == 400
    retried = api.post(f"/api/v1/runs/{run.pk}/retry/")
    assert retried.status_code == 201 and retried.json()["retry_of"] == run.pk
    assert JudgmentRun.objects.filter(case=case).count() == 2


def test_invalid_input_is_a_400_with_reasons(api, personas):
    response = api.post("/api/v1/cases/", case_payload(personas.team_a, defendants=[], facts="  "),
                        content_type="application/json")
    assert response.status_code == 400 and {"defendants", "facts"} <= set(response.json())
    case = make_case(personas.staff_a, personas.team_a)
    with override_settings(LLM_BASE_URL=""):
        llm = api.post(f"/api/v1/cases/{case.pk}/runs/", {"strategy": "llm"}, content_type="application/json")
    assert llm.status_code == 400 and "strategy" in llm.json()
    assert not Case.objects.filter(title="API case").exists()


def test_session_authentication_works_too(personas):
    client = personas.client(personas.staff_a)
    assert client.get("/api/v1/cases/").status_code == 200


def test_starting_runs_is_throttled(api, personas):
    case = make_case(personas.staff_a, personas.team_a)
    cache.clear()
    rates = {"user": "1000/hour", "runs": "2/hour"}
    with override_settings(REST_FRAMEWORK={**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}):
        codes = [api.post(f"/api/v1/cases/{case.pk}/runs/", {}, content_type="application/json").status_code
                 for _ in range(3)]
        assert codes == [201, 201, 429]
        # Reads are not in the "runs" scope.
        assert api.get(f"/api/v1/cases/{case.pk}/runs/").status_code == 200
    cache.clear()


def test_the_openapi_schema_validates(tmp_path):
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    text = out.read_text()
    for path in ("/api/v1/cases/", "/api/v1/runs/{id}/bundle/", "/api/v1/cases/{id}/runs/"):
        assert path in text


def test_the_swagger_ui_is_self_hosted(personas):
    page = personas.client(personas.staff_a).get("/api/docs/").content.decode()
    assert "drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page), "an asset from another host"
    schema = personas.client(personas.staff_a).get("/api/schema/")
    assert schema.status_code == 200 and b"Lextrace API" in schema.content


def test_cancel_of_a_finished_run_is_refused(api, judged_run):
    assert api.post(f"/api/v1/runs/{judged_run.pk}/cancel/").status_code == 400
    judged_run.refresh_from_db()
    assert judged_run.status == "done"


def test_the_run_throttle_holds_when_one_user_starts_runs_at_the_same_moment(api, personas):
    """DRF's throttle reads the history and writes it back; without the lock two simultaneous requests both
    read the old history and both pass (apps/cases/api.py _OneAtATime)."""
    import threading

    from rest_framework.test import APIRequestFactory, force_authenticate

    from apps.cases.api import RunThrottle

    cache.clear()
    factory, decided, start = APIRequestFactory(), [], threading.Barrier(8)
    view = type("View", (), {"throttle_scope": "runs"})()
    with override_settings(REST_FRAMEWORK={**settings.REST_FRAMEWORK,
                                           "DEFAULT_THROTTLE_RATES": {"user": "1000/hour", "runs": "2/hour"}}):
        def attempt():
            request = factory.post("/api/v1/cases/1/runs/")
            force_authenticate(request, user=personas.staff_a)
            request.user = personas.staff_a
            start.wait()
            decided.append(RunThrottle().allow_request(request, view))

        threads = [threading.Thread(target=attempt) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(decided) == [False] * 6 + [True] * 2
    cache.clear()


def test_a_dangerous_driving_term_is_criminal_detention_in_the_api_and_on_the_run_page(api, personas, judging_corpus,
                                                                                        client):
    """危险驾驶 provides 拘役 alone: whatever the term's length, every surface writes it as 拘役, never 有期徒刑."""
    import datetime as dt

    case = make_case(personas.staff_a, personas.team_a, ext_id="demo-case-044", offence_date=dt.date(2015, 11, 20))
    run = make_run(case, personas.staff_a)
    assert judgment_execute(run_id=run.pk, worker="test") == "done"
    result = api.get(f"/api/v1/runs/{run.pk}/").json()["results"][0]
    assert result["status"] == "judged" and result["charges"] == ["危险驾驶罪"], result
    assert result["term"]["kind"] == "detention" and result["term_text"].startswith("拘役"), result
    client.force_login(personas.staff_a)
    page = client.get(f"/cases/runs/{run.pk}/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert result["term_text"] in page
