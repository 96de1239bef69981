"""Services of the cases app against the real database and the real pipeline (demo corpus)."""

import datetime as dt

import pytest
from celery.signals import before_task_publish
from django.core.exceptions import ValidationError
from django.test import override_settings

from apps.cases.models import CaseRevision, DefendantResult, JudgmentRun, RunEvent
from apps.cases.services.cases import CaseConflict, case_update, defendants_parse
from apps.cases.services.runs import (
    judgment_cancel,
    judgment_execute,
    judgment_request,
    judgment_retry,
    run_claimed,
)
from tests.cases.conftest import make_case, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def published():
    names = []

    def record(sender=None, **kwargs):
        names.append(sender)

    before_task_publish.connect(record, weak=False)
    yield names
    before_task_publish.disconnect(record)


# --- cases and revisions --------------------------------------------------------------------


def test_creating_a_case_records_version_1(personas):
    case = make_case(personas.staff_a, personas.team_a)
    [revision] = case.revisions.all()
    assert case.version == 1 and revision.version == 1
    assert revision.before is None and revision.after["defendants"] == ["王某", "赵某"]
    assert revision.changed_by == personas.staff_a


def test_an_edit_records_who_when_before_and_after(personas):
    case = make_case(personas.staff_a, personas.team_a)
    updated = case_update(case=case, user=personas.staff_a, expected_version=1, defendants=["王某", "赵某", "钱某"],
                          offence_date=dt.date(2018, 9, 15))
    assert updated.version == 2
    revision = CaseRevision.objects.get(case=case, version=2)
    assert revision.changed_fields == ["offence_date", "defendants"]
    assert revision.before["defendants"] == ["王某", "赵某"]
    assert revision.after["defendants"] == ["王某", "赵某", "钱某"]
    assert revision.before["offence_date"] == "2018-09-14" and revision.after["offence_date"] == "2018-09-15"
    assert revision.changed_by == personas.staff_a and revision.changed_at is not None


def test_an_edit_that_changes_nothing_leaves_no_revision(personas):
    case = make_case(personas.staff_a, personas.team_a)
    # A browser sends CRLF; the same text is not a change.
    same = case_update(case=case, user=personas.staff_a, expected_version=1, facts=case.facts.replace("\n", "\r\n"))
    assert same.version == 1 and case.revisions.count() == 1


def test_an_edit_of_a_stale_version_is_a_conflict(personas):
    case = make_case(personas.staff_a, personas.team_a)
    case_update(case=case, user=personas.staff_a, expected_version=1, title="first edit")
    with pytest.raises(CaseConflict):
        case_update(case=case, user=personas.staff_a, expected_version=1, title="second edit from an old page")
    case.refresh_from_db()
    assert case.title == "first edit" and case.version == 2


def test_a_case_goes_only_to_one_of_the_users_teams(personas):
    with pytest.raises(ValidationError) as caught:
        make_case(personas.staff_b, personas.team_a)
    assert "team" in caught.value.error_dict


def test_defendant_names_are_split_cleaned_and_required(personas):
    assert defendants_parse("王某\n赵某，钱某、孙某; 王某\n\n") == ["王某", "赵某", "钱某", "孙某", "王某"]
    case = make_case(personas.staff_a, personas.team_a, defendants=["王某", " 王某 ", "赵某"])
    assert case.defendants == ["王某", "赵某"]
    with pytest.raises(ValidationError):
        make_case(personas.staff_a, personas.team_a, defendants=[" "])


# --- requesting runs ----------------------------------------------------------------------------


def test_a_request_snapshots_the_case_and_enqueues_one_task_after_commit(personas, published,
                                                                           django_capture_on_commit_callbacks):
    case = make_case(personas.staff_a, personas.team_a)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        run = judgment_request(case=case, user=personas.staff_a)
        assert published == []  # nothing leaves before the transaction commits
    assert len(callbacks) == 1
    assert (run.status, run.strategy, run.ablation, run.case_version) == ("queued", "statistical", "full", 1)
    assert run.facts == case.facts and run.defendants == ["王某", "赵某"] and run.offence_date == case.offence_date
    # Later edits do not change what the run was asked to compute.
    case_update(case=case, user=personas.staff_a, facts=case.facts + "补充。")
    run.refresh_from_db()
    assert run.case_version == 1 and not run.facts.endswith("补充。")


def test_the_llm_strategy_needs_a_configured_server(personas):
    case = make_case(personas.staff_a, personas.team_a)
    with override_settings(LLM_BASE_URL=""), pytest.raises(ValidationError) as caught:
        judgment_request(case=case, user=personas.staff_a, strategy="llm")
    assert "strategy" in caught.value.error_dict
    with pytest.raises(ValidationError):
        judgment_request(case=case, user=personas.staff_a, ablation="no_such_ablation")
    assert not JudgmentRun.objects.filter(case=case).exists()


# --- executing runs ---------------------------------------------------------------------------------


def test_a_run_stores_one_result_per_defendant_with_its_bundle_and_progress(judged_run):
    run = judged_run
    assert run.status == "done" and run.finished_at and run.started_at
    results = list(run.results.all())
    assert [r.defendant for r in results] == ["王某", "赵某"]
    for r in results:
        assert r.status in {"judged", "no_evidence", "insufficient_evidence", "unresolved_citation"}
        assert r.bundle["defendant"] == r.defendant and r.bundle["judgment"]["status"] == r.status
        assert r.bundle["case"]["facts"] == run.facts
        if r.judged:
            assert r.charges and r.article_keys and r.bundle["judgment"]["citations"]
    assert run.versions["pipeline"].startswith("lextrace-pipeline/")
    assert run.versions["strategy"].startswith("statistical/")
    [attempt] = run.attempts.all()
    assert attempt.status == "done" and attempt.worker == "test" and attempt.backend_pid
    stages = set(RunEvent.objects.filter(run=run, kind="stage").values_list("defendant", "stage"))
    for name in ("王某", "赵某"):
        assert {(name, "researcher"), (name, "auditor")} <= stages
    assert RunEvent.objects.filter(run=run, kind="article").exists()


def test_a_duplicate_task_for_a_finished_run_does_nothing(judged_run):
    before = list(DefendantResult.objects.filter(run=judged_run).values_list("pk", flat=True))
    assert judgment_execute(run_id=judged_run.pk, worker="again") == "nothing to do"
    assert list(DefendantResult.objects.filter(run=judged_run).values_list("pk", flat=True)) == before
    assert judged_run.attempts.count() == 1


def test_an_offence_date_before_any_version_gives_an_explicit_failure_state(personas, judging_corpus):
    case = make_case(personas.staff_a, personas.team_a, offence_date=dt.date(1980, 1, 1))
    run = make_run(case, personas.staff_a)
    judgment_execute(run_id=run.pk, worker="test")
    run.refresh_from_db()
    assert run.status == "done"
    for r in run.results.all():
        assert r.status != "judged" and not r.charges and r.term_months is None, r.status


def test_a_pipeline_error_fails_the_run_with_a_clear_message(personas, judging_corpus):
    case = make_case(personas.staff_a, personas.team_a)
    with override_settings(LLM_BASE_URL="http://127.0.0.1:9/v1", LLM_MODEL="test-model"):
        run = judgment_request(case=case, user=personas.staff_a, strategy="llm")
    # The LLM server was unconfigured after the request: building the strategy raises.
    with override_settings(LLM_BASE_URL=""):
        assert judgment_execute(run_id=run.pk, worker="test") == "failed"
    run.refresh_from_db()
    assert run.status == "failed" and "no LLM is configured" in run.message
    assert run.message.startswith("ImproperlyConfigured")
    assert not run.results.exists()
    assert run.attempts.get().status == "failed"


# --- cancel and retry ------------------------------------------------------------------------------


def test_cancelling_a_queued_run_stops_it_before_it_starts(personas):
    case = make_case(personas.staff_a, personas.team_a)
    run = make_run(case, personas.staff_a)
    cancelled = judgment_cancel(run=run, user=personas.staff_a)
    assert cancelled.status == "cancelled" and cancelled.cancel_requested_by == personas.staff_a
    assert judgment_execute(run_id=run.pk, worker="late") == "nothing to do"
    assert not run.attempts.exists()


def test_cancelling_a_running_run_stops_it_at_the_next_stage(personas, judging_corpus):
    from apps.cases.services.runs import _execute

    case = make_case(personas.staff_a, personas.team_a)
    run = make_run(case, personas.staff_a)
    with run_claimed(run_id=run.pk, worker="w") as attempt:
        running = judgment_cancel(run=run, user=personas.staff_a)
        assert running.status == "running" and running.cancel_requested
        _execute(attempt)
    run.refresh_from_db()
    assert run.status == "cancelled" and not run.results.exists()
    assert run.attempts.get().status == "cancelled"
    # It stopped at the first progress report, not after the pipeline.
    assert RunEvent.objects.filter(run=run).count() == 1


def test_finished_runs_cannot_be_cancelled(judged_run, personas):
    with pytest.raises(ValidationError):
        judgment_cancel(run=judged_run, user=personas.staff_a)


def test_a_retry_is_a_new_run_with_the_same_inputs(personas):
    case = make_case(personas.staff_a, personas.team_a)
    run = judgment_cancel(run=make_run(case, personas.staff_a, ablation="no_com"), user=personas.staff_a)
    case_update(case=case, user=personas.staff_a, defendants=["王某"])
    retry = judgment_retry(run=run, user=personas.staff_a)
    assert retry.pk != run.pk and retry.retry_of == run and retry.status == "queued"
    assert (retry.case_version, retry.defendants) == (1, ["王某", "赵某"])
    assert (retry.ablation, retry.strategy) == ("no_com", "statistical")
    run.refresh_from_db()
    assert run.status == "cancelled"


def test_only_failed_or_cancelled_runs_are_retried(judged_run, personas):
    with pytest.raises(ValidationError):
        judgment_retry(run=judged_run, user=personas.staff_a)
