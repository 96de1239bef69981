import pytest
from celery.signals import before_task_publish
from django.db import transaction

from apps.core.models import WorkerPing
from apps.core.services import worker_ping_answer, worker_ping_request
from tests.conftest import wait_for


@pytest.fixture
def published():
    names = []

    def record(sender=None, **kwargs):
        names.append(sender)

    before_task_publish.connect(record, weak=False)
    yield names
    before_task_publish.disconnect(record)


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_consumes_the_task_from_redis_and_writes_to_the_database(celery_worker_process, published):
    with transaction.atomic():
        ping = worker_ping_request()
        # Not sent while the transaction is open: the worker could not see the row yet.
        assert published == []
    assert published == ["worker.tasks.worker_ping"]

    answered = wait_for(lambda: WorkerPing.objects.filter(pk=ping.pk, finished_at__isnull=False).first(), timeout=30)
    assert answered, "the worker did not answer within 30 s"
    assert answered.worker.startswith("test-")
    assert answered.round_trip_ms >= 0


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_request_enqueues_nothing(published):
    class Boom(Exception):
        pass

    with pytest.raises(Boom):
        with transaction.atomic():
            worker_ping_request()
            raise Boom
    assert published == []
    assert WorkerPing.objects.count() == 0


@pytest.mark.django_db
def test_answering_twice_counts_once():
    ping = WorkerPing.objects.create()
    assert worker_ping_answer(ping_id=ping.pk, hostname="w1") is True
    assert worker_ping_answer(ping_id=ping.pk, hostname="w2") is False
    ping.refresh_from_db()
    assert ping.worker == "w1"


def test_tasks_refuse_anything_but_json():
    from worker.celery import app

    assert app.conf.accept_content == ["json"]
    assert app.conf.task_serializer == "json"
    assert app.conf.task_acks_late and app.conf.task_reject_on_worker_lost
    assert app.conf.task_time_limit < app.conf.broker_transport_options["visibility_timeout"]
