"""One shape for long-running work (apps/core/jobs.py): an atomic conditional claim, a conditional
finish, a lock for jobs continued over several tasks, one polled-fragment answer."""

import threading

import pytest
from django.db import connection
from django.test import RequestFactory

from apps.core.jobs import job_claim, job_finish, job_lock, polled_fragment
from apps.evaluation.models import EvaluationRun
from apps.evaluation.services.evaluating import evaluation_run_chunk
from apps.registry.models import TrainingRun


def _evaluation(path="/nonexistent/x.jsonl", **fields) -> EvaluationRun:
    return EvaluationRun.objects.create(label="jobs", dataset="x.jsonl", dataset_sha256="0" * 64,
                                        dataset_path=str(path), **fields)


@pytest.mark.django_db
def test_of_two_claims_of_a_queued_job_exactly_one_wins():
    run = TrainingRun.objects.create(source="corpus")
    first = job_claim(model=TrainingRun, pk=run.pk, message="")
    second = job_claim(model=TrainingRun, pk=run.pk)
    assert first is not None and first.status == TrainingRun.Status.RUNNING and second is None
    assert job_claim(model=TrainingRun, pk=run.pk + 1000) is None


@pytest.mark.django_db
def test_a_finish_only_ends_a_job_still_in_the_expected_state():
    run = _evaluation(status=EvaluationRun.Status.DONE)
    assert not job_finish(model=EvaluationRun, pk=run.pk, status=EvaluationRun.Status.FAILED, message="late")
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.DONE and run.message == ""
    other = _evaluation(status=EvaluationRun.Status.RUNNING)
    assert job_finish(model=EvaluationRun, pk=other.pk, status=EvaluationRun.Status.FAILED, message="stopped")
    other.refresh_from_db()
    assert other.status == EvaluationRun.Status.FAILED and other.message == "stopped"


@pytest.mark.django_db(transaction=True)
def test_a_job_continued_over_tasks_is_worked_on_by_one_delivery_at_a_time(tmp_path):
    dataset = tmp_path / "x.jsonl"
    dataset.write_text('{"id": "1", "fact": "某事实"}\n')  # not the hash the run recorded: it fails explicitly
    run = _evaluation(dataset, status=EvaluationRun.Status.RUNNING)
    seen = {}

    def second_delivery():
        try:
            with job_lock("evaluation", run.pk) as mine:
                seen["lock"] = mine
            seen["chunk"] = evaluation_run_chunk(run.pk)
        finally:
            connection.close()

    with job_lock("evaluation", run.pk) as mine:
        assert mine
        thread = threading.Thread(target=second_delivery)
        thread.start()
        thread.join(60)
    assert seen == {"lock": False, "chunk": False}, "the second delivery neither locks nor predicts"
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.RUNNING and run.message == "", "it changed nothing"
    # Free again: the next delivery takes it (and fails the run explicitly: its dataset changed).
    assert evaluation_run_chunk(run.pk) is False
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.FAILED and run.message


def test_a_polled_fragment_stops_the_polling_or_reloads_once_finished(tmp_path, settings):
    template = tmp_path / "frag.html"
    template.write_text('<div id="f"{% include "_polling.html" %}>x</div>')
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [str(tmp_path), *settings.TEMPLATES[0]["DIRS"]]}]
    request = RequestFactory().get("/", HTTP_HX_REQUEST="true")
    polling = polled_fragment(request, "frag.html", {"finished": False, "poll_url": "/p/"}, finished=False)
    assert polling.status_code == 200 and 'hx-get="/p/" hx-trigger="every 2s"' in polling.content.decode()
    done = polled_fragment(request, "frag.html", {"finished": True, "poll_url": "/p/"}, finished=True)
    assert done.status_code == 286 and "hx-get" not in done.content.decode()
    reload = polled_fragment(request, "frag.html", {"finished": True}, finished=True, reload_when_finished=True)
    assert reload.status_code == 200 and reload["HX-Refresh"] == "true"
