"""The agentic mode per run: chosen in the case page's form and the API, stored on the run, executed
by the real Celery worker on the demo graph, its planner steps stored in the bundle and shown."""

import pytest

from apps.cases.models import JudgmentRun, RunEvent
from tests.cases.conftest import make_case
from tests.conftest import api_token_for, wait_for


def finished(run_id: int):
    run = JudgmentRun.objects.get(pk=run_id)
    return run if run.finished else None


@pytest.mark.worker
@pytest.mark.slow
def test_an_agentic_run_requested_through_the_api_runs_on_the_worker_and_stores_planner_steps(live,
                                                                                               celery_worker_process):
    from django.test import Client

    token = api_token_for(live.staff_a)
    api = Client(HTTP_AUTHORIZATION=f"Token {token}")
    case = make_case(live.staff_a, live.team_a)
    response = api.post(f"/api/v1/cases/{case.pk}/runs/", {"strategy": "statistical", "mode": "agentic"},
                        content_type="application/json")
    assert response.status_code == 201, response.content
    assert response.json()["mode"] == "agentic"
    run_id = response.json()["id"]

    done = wait_for(lambda: finished(run_id), timeout=180, interval=0.5)
    assert done and done.status == "done", done and done.message
    assert done.mode == "agentic" and done.versions["planner"] == "statistical/1"
    results = list(done.results.all())
    assert [r.defendant for r in results] == ["王某", "赵某"]
    for result in results:
        steps = result.bundle["research"]["steps"]
        assert steps[0]["action"] == "search_statutes" and steps[0]["status"] == "ok" and steps[0]["results"]
        assert steps[-1]["status"] in ("stop", "cap_steps")
        assert all("score" in r for s in steps for r in s["results"])
        assert result.bundle["params"]["mode"] == "agentic"
    # the worker reported every planner step as progress
    assert RunEvent.objects.filter(run_id=run_id, kind="step", stage="planner").count() >= 2
    polled = api.get(f"/api/v1/runs/{run_id}/bundle/").json()
    assert polled["bundles"][0]["research"]["steps"]
    progress = api.get(f"/api/v1/runs/{run_id}/").json()["progress"]
    assert [p["planner_steps"] >= 2 for p in progress] == [True, True]


@pytest.mark.django_db
def test_the_mode_is_chosen_in_the_run_form_and_shown(personas, judging_corpus, django_capture_on_commit_callbacks):
    from apps.cases.services.runs import judgment_execute

    from django.urls import reverse

    from apps.accounts.models import Role
    from apps.accounts.services import user_create

    # The research options (strategy, ablation, mode) are an administrator's; a clerk's form has none.
    assert 'name="mode"' not in personas.client(personas.staff_a).get(
        reverse("cases:case_detail", args=[make_case(personas.staff_a, personas.team_a).pk])).content.decode()
    researcher = user_create(username="researcher", password="researcher-password-1", roles=[Role.STAFF, Role.ADMIN],
                             teams=[personas.team_a])
    case = make_case(researcher, personas.team_a)
    client = personas.client(researcher)
    page = client.get(reverse("cases:case_detail", args=[case.pk]))
    assert 'name="mode"' in page.content.decode() and 'value="agentic"' in page.content.decode()
    with django_capture_on_commit_callbacks(execute=False):
        client.post(reverse("cases:run_create", args=[case.pk]), {"strategy": "statistical", "ablation": "full",
                                                                 "mode": "agentic"})
    run = JudgmentRun.objects.get(case=case)
    assert run.mode == "agentic"
    assert judgment_execute(run_id=run.pk, worker="test") == "done"
    run_page = client.get(reverse("cases:run_detail", args=[run.pk])).content.decode()
    assert 'id="run-mode"' in run_page
    result_page = client.get(reverse("cases:result_detail", args=[run.pk, 0]), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    # The planner's steps are in the analysis details, an htmx fragment loaded when it comes into view.
    assert 'hx-get="?part=analysis"' in result_page
    analysis = client.get(reverse("cases:result_detail", args=[run.pk, 0]) + "?part=analysis",
                          HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'id="planner-steps"' in analysis and "search statutes" in analysis
    first = run.results.first()
    if first.status == "judged":  # the severity index beside the predicted term
        assert 'id="judgment-psi"' in result_page
    # a retry keeps the mode
    JudgmentRun.objects.filter(pk=run.pk).update(status="failed")
    from apps.cases.services.runs import judgment_retry

    with django_capture_on_commit_callbacks(execute=False):
        again = judgment_retry(run=run, user=personas.staff_a)
    assert again.mode == "agentic"


@pytest.mark.django_db
def test_an_unknown_mode_is_refused_by_the_api(personas):
    token = api_token_for(personas.staff_a)
    api = personas.client(HTTP_AUTHORIZATION=f"Token {token}")
    case = make_case(personas.staff_a, personas.team_a)
    response = api.post(f"/api/v1/cases/{case.pk}/runs/", {"mode": "wander"}, content_type="application/json")
    assert response.status_code == 400 and "mode" in response.json().get("errors", response.json())
    assert not JudgmentRun.objects.filter(case=case).exists()


@pytest.mark.django_db
def test_approved_agentic_runs_are_exported_as_planner_trajectories(personas, judging_corpus, tmp_path):
    import json

    from django.core.management import call_command

    from apps.cases.services.runs import judgment_execute
    from apps.review.services.reviews import decision_make, review_for_run
    from tests.cases.conftest import make_run, review_complete

    case = make_case(personas.staff_a, personas.team_a)
    agentic = make_run(case, personas.staff_a)
    JudgmentRun.objects.filter(pk=agentic.pk).update(mode="agentic")
    fixed = make_run(case, personas.staff_a)
    pending = make_run(case, personas.staff_a)
    JudgmentRun.objects.filter(pk=pending.pk).update(mode="agentic")
    for run in (agentic, fixed, pending):
        assert judgment_execute(run_id=run.pk, worker="test") == "done"
    for run in (agentic, fixed):
        run.refresh_from_db()
        review_complete(run, personas.reviewer)
        decision_make(review=review_for_run(run), kind="approve", reason="checked", user=personas.reviewer)

    out = tmp_path / "traj.jsonl"
    call_command("export_trajectories", "--out", str(out))
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    # only the approved agentic run: one trajectory per defendant
    assert [x["defendant"] for x in lines] == ["王某", "赵某"] and all(x["case_ref"] == f"run:{agentic.pk}" for x in lines)
    for example in lines:
        weights = {(m["role"], m["weight"]) for m in example["messages"]}
        assert weights <= {("system", 0), ("user", 0), ("assistant", 1)}
        assert json.loads(example["messages"][-1]["content"])["action"] == "stop"
    raw = tmp_path / "bundles.jsonl"
    call_command("export_trajectories", "--out", str(raw), "--bundles")
    assert [json.loads(x)["research"]["steps"] != [] for x in raw.read_text(encoding="utf-8").splitlines()] == [True, True]
