"""One shape for long-running work (apps/core/jobs.py, apps/core/models.py Job): one status
vocabulary, an atomic conditional claim, a conditional finish, a lock for jobs continued over several
tasks, one polled-fragment answer."""

import threading

import pytest
from django.db import connection
from django.test import RequestFactory
from django.utils import timezone

from apps.cases.models import JudgmentRun
from apps.core.jobs import job_claim, job_finish, job_lock, polled_fragment
from apps.core.models import Job, JobStatus, WorkerPing
from apps.corpus.models import ImportBatch
from apps.evaluation.models import EvaluationRun
from apps.evaluation.services.evaluating import evaluation_claim, evaluation_run_chunk
from apps.registry.models import TrainingRun
from tests.cases.conftest import make_case, make_run

KINDS = (JudgmentRun, ImportBatch, TrainingRun, EvaluationRun, WorkerPing)


def _evaluation(path="/nonexistent/x.jsonl", **fields) -> EvaluationRun:
    return EvaluationRun.objects.create(label="jobs", dataset="x.jsonl", dataset_sha256="0" * 64,
                                        dataset_path=str(path), **fields)


def test_every_kind_is_a_job_speaking_the_one_status_vocabulary():
    for kind in KINDS:
        assert issubclass(kind, Job) and kind._meta.get_field("status").choices == kind.Status.choices
        assert kind.Status.values[:2] == [JobStatus.QUEUED, JobStatus.RUNNING]
        for status in kind.Status:
            assert JobStatus(status.value).label == status.label, f"{kind.__name__}: {status} is worded its own way"
    assert {k.__name__: set(k.FINISHED) for k in KINDS} == {
        "JudgmentRun": {"done", "failed", "cancelled"},
        "ImportBatch": {"published", "duplicate", "failed", "discarded"},  # checked waits for the admin
        "TrainingRun": {"promoted", "rejected", "failed"},
        "EvaluationRun": {"done", "failed"},
        "WorkerPing": {"done"},
    }
    batch = ImportBatch(status=ImportBatch.Status.CHECKED)
    assert batch.settled and not batch.finished


@pytest.mark.django_db
def test_a_claim_records_the_first_start_and_a_finish_its_end():
    run = TrainingRun.objects.create(source="corpus")
    claimed = job_claim(model=TrainingRun, pk=run.pk)
    assert claimed.started_at is not None and claimed.finished_at is None
    assert job_finish(model=TrainingRun, pk=run.pk, status=TrainingRun.Status.FAILED, message="x")
    run.refresh_from_db()
    assert run.finished and run.finished_at >= run.started_at
    # Resumed, a job keeps its first start and is no longer finished.
    evaluation = _evaluation(status=EvaluationRun.Status.FAILED, started_at=timezone.now() - timezone.timedelta(days=1),
                             finished_at=timezone.now())
    resumed = evaluation_claim(run_id=evaluation.pk)
    assert resumed.started_at == evaluation.started_at and resumed.finished_at is None
    # A kind's waiting status is not an end.
    batch = ImportBatch.objects.create(filename="x.jsonl", sha256="0" * 64, status=ImportBatch.Status.RUNNING)
    assert job_finish(model=ImportBatch, pk=batch.pk, status=ImportBatch.Status.CHECKED)
    batch.refresh_from_db()
    assert batch.settled and batch.finished_at is None


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
@pytest.mark.parametrize("status", [EvaluationRun.Status.QUEUED, EvaluationRun.Status.FAILED])
def test_two_concurrent_claims_of_an_evaluation_run_give_exactly_one_winner(status):
    """Started (queued) or resumed (failed): two processes claiming the run at the same moment, each on its
    own connection, get it once between them, however often it is tried."""
    for _ in range(5):
        run = _evaluation(status=status)
        start, won = threading.Barrier(2), []

        def claim():
            try:
                start.wait(10)
                won.append(evaluation_claim(run_id=run.pk))
            finally:
                connection.close()

        claimers = [threading.Thread(target=claim) for _ in range(2)]
        for thread in claimers:
            thread.start()
        for thread in claimers:
            thread.join(30)
        winners = [w for w in won if w is not None]
        assert len(won) == 2 and len(winners) == 1, won
        assert winners[0].status == EvaluationRun.Status.RUNNING
        assert EvaluationRun.objects.get(pk=run.pk).status == EvaluationRun.Status.RUNNING
    assert evaluation_claim(run_id=run.pk) is None, "a running run is not claimed again"


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


@pytest.mark.django_db
def test_the_lists_of_running_work_are_polled_fragments_until_every_job_finished(personas):
    case = make_case(personas.staff_a, personas.team_a)
    run = make_run(case, personas.staff_a)
    client = personas.client(personas.staff_a)
    for url, fragment in ((f"/cases/{case.pk}/?part=runs", 'id="case-runs"'), ("/?part=running", 'id="clerk-running"')):
        polling = client.get(url, HTTP_HX_REQUEST="true")
        body = polling.content.decode()
        assert polling.status_code == 200 and body.lstrip().startswith("<section") and fragment in body
        assert f'hx-get="{url}"' in body and "<html" not in body
    JudgmentRun.objects.filter(pk=run.pk).update(status=JudgmentRun.Status.DONE, finished_at=timezone.now())
    for url in (f"/cases/{case.pk}/?part=runs", "/?part=running"):
        finished = client.get(url, HTTP_HX_REQUEST="true")
        assert finished.status_code == 286 and "hx-get" not in finished.content.decode()
