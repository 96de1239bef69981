"""D7 (P part): a run whose message was lost — the broker refused it or died with it — is found
in PostgreSQL and sent again by the reconciler; a live or recent run is left alone."""

import datetime as dt
import uuid

import pytest
import redis
from django.conf import settings
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError

from apps.cases.models import JudgmentRun, RunAttempt
from apps.cases.services.reconcile import _MARK, runs_reconcile
from apps.cases.services.runs import judgment_request, run_lock
from tests.cases.conftest import make_case, make_run


@pytest.fixture(autouse=True)
def unconsumed_queue(settings):
    """Send the runs these tests make to a queue no worker reads. The session's Celery worker (started by
    earlier tests) would otherwise take a re-sent run and write it while a transactional test's database is
    flushed: a deadlock in the flush, and the next test's set-up failing on the rows left behind."""
    settings.CELERY_TASK_DEFAULT_QUEUE = queue = f"reconcile-test-{uuid.uuid4().hex[:8]}"
    yield queue
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    for key in client.scan_iter(match=f"{queue}*"):
        client.delete(key)


@pytest.fixture
def marks():
    """Forget the reconciler's re-send markers of the runs a test made."""
    ids = []
    yield ids
    client = redis.Redis.from_url(settings.REDIS_URL)
    for run_id in ids:
        client.delete(_MARK.format(run_id))


def aged(run, seconds=3600):
    JudgmentRun.objects.filter(pk=run.pk).update(created_at=timezone.now() - dt.timedelta(seconds=seconds))


def sent_runs(published_args):
    return [args[0] for name, args in published_args if name == "worker.tasks.judgment_run_execute"]


@pytest.fixture
def published_args():
    from celery.signals import before_task_publish

    sent = []

    def record(sender=None, body=None, **kwargs):
        sent.append((sender, body[0] if isinstance(body, (list, tuple)) else body.get("args")))

    before_task_publish.connect(record, weak=False)
    yield sent
    before_task_publish.disconnect(record)


@pytest.mark.django_db
def test_an_old_queued_run_is_sent_again_once_per_window(personas, published_args, marks):
    case = make_case(personas.staff_a, personas.team_a)
    old, fresh = make_run(case, personas.staff_a), make_run(case, personas.staff_a)
    marks += [old.pk, fresh.pk]
    aged(old)
    report = runs_reconcile(stuck_after_s=600)
    assert report.queued == [old.pk] and sent_runs(published_args) == [old.pk]
    # Run again at once: the message just sent is not duplicated.
    again = runs_reconcile(stuck_after_s=600)
    assert again.requeued == [] and again.skipped_recent == [old.pk]
    assert sent_runs(published_args) == [old.pk]


@pytest.mark.django_db
def test_a_running_run_without_heartbeat_or_lock_holder_is_sent_again(personas, published_args, marks):
    case = make_case(personas.staff_a, personas.team_a)
    run = make_run(case, personas.staff_a)
    marks.append(run.pk)
    long_ago = timezone.now() - dt.timedelta(hours=1)
    JudgmentRun.objects.filter(pk=run.pk).update(status="running", started_at=long_ago, attempt_count=1)
    RunAttempt.objects.create(run=run, number=1, started_at=long_ago, heartbeat_at=long_ago)
    # While a worker holds the run's lock it is only slow: left alone.
    with run_lock(run.pk) as held:
        assert held
        assert runs_reconcile(stuck_after_s=600).requeued == []
    assert sent_runs(published_args) == []
    report = runs_reconcile(stuck_after_s=600)
    assert report.stalled == [run.pk] and sent_runs(published_args) == [run.pk]


@pytest.mark.django_db
def test_a_recent_heartbeat_keeps_a_running_run_out(personas, published_args, marks):
    case = make_case(personas.staff_a, personas.team_a)
    run = make_run(case, personas.staff_a)
    marks.append(run.pk)
    long_ago = timezone.now() - dt.timedelta(hours=1)
    JudgmentRun.objects.filter(pk=run.pk).update(status="running", started_at=long_ago, attempt_count=1)
    RunAttempt.objects.create(run=run, number=1, started_at=long_ago, heartbeat_at=timezone.now())
    assert runs_reconcile(stuck_after_s=600).requeued == [] and sent_runs(published_args) == []


@pytest.mark.django_db(transaction=True)
def test_a_submission_while_the_broker_refuses_is_stored_queued_and_reconciled(personas, published_args, marks,
                                                                               monkeypatch, caplog, unconsumed_queue):
    from worker.tasks import judgment_run_execute

    case = make_case(personas.staff_a, personas.team_a)

    def broker_down(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1. Connection refused.")

    with monkeypatch.context() as patch:
        patch.setattr(judgment_run_execute, "apply_async", broker_down)
        with transaction.atomic():
            run = judgment_request(case=case, user=personas.staff_a)
    marks.append(run.pk)
    # The request did not fail: the run is stored, queued, and the refusal was logged.
    assert JudgmentRun.objects.get(pk=run.pk).status == "queued"
    assert any("on_commit" in r.getMessage() or "OperationalError" in (r.exc_text or "") for r in caplog.records)
    aged(run)
    call_command("runs_reconcile", "--stuck-after", "60")
    assert sent_runs(published_args) == [run.pk]
    # On a queue nobody reads: the message waits there, and the run is still queued when the test ends.
    assert redis.Redis.from_url(settings.CELERY_BROKER_URL).llen(unconsumed_queue) == 1
    assert JudgmentRun.objects.get(pk=run.pk).status == "queued"


@pytest.mark.django_db
def test_the_dry_run_sends_nothing(personas, published_args, marks):
    case = make_case(personas.staff_a, personas.team_a)
    run = make_run(case, personas.staff_a)
    marks.append(run.pk)
    aged(run)
    assert runs_reconcile(stuck_after_s=600, dry_run=True).queued == [run.pk]
    assert sent_runs(published_args) == []
