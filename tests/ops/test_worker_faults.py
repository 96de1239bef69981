"""D2, D11, D13: a real Celery worker under faults (D10 is in tests/chaos/test_worker_limits.py).

Each test starts its own worker (tests.faults.WorkerProcess) on the test broker, consuming a
queue of its own, so the suite's shared worker never takes these messages.
"""

import time
import uuid

import pytest
from django.conf import settings
from django.db import connection
from kombu import Connection, Exchange, Queue

from apps.cases.models import JudgmentRun, RunEvent
from apps.cases.services.runs import MAX_ATTEMPTS, MSG_TOO_MANY_ATTEMPTS, judgment_execute, run_claimed
from apps.core.models import WorkerPing
from tests.cases.conftest import make_case, make_run
from tests.cases.test_claims import _in_thread
from tests.conftest import wait_for
from tests.faults import WorkerProcess, own_queue, session_db_name
from worker.tasks import judgment_run_execute, worker_ping

pytestmark = [pytest.mark.slow]


def publish_raw(queue: str, *, body: bytes, content_type: str, task: str = "worker.tasks.worker_ping"):
    """A message with Celery's protocol-2 headers and whatever body and content type we like."""
    task_id = str(uuid.uuid4())
    with Connection(settings.REDIS_URL) as conn:
        producer = conn.Producer()
        producer.publish(body, routing_key=queue, exchange=Exchange(queue), declare=[Queue(queue, Exchange(queue),
                         routing_key=queue)], content_type=content_type, content_encoding="binary",
                         headers={"lang": "py", "task": task, "id": task_id, "root_id": task_id, "parent_id": None,
                                  "group": None, "retries": 0, "eta": None, "expires": None, "argsrepr": "",
                                  "kwargsrepr": "", "origin": "test"})


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_d11_d13_pickle_and_poison_messages_are_refused_and_the_rest_keeps_flowing():
    import pickle  # the point is that the worker refuses it

    queue = own_queue()
    smuggled = WorkerPing.objects.create()
    with WorkerProcess(broker_url=settings.REDIS_URL, db_name=session_db_name(), queues=queue) as worker:
        # D11: a pickle-typed message for a real task with a real id: never executed.
        publish_raw(queue, body=pickle.dumps(((smuggled.pk,), {}, {})), content_type="application/x-python-serialize")
        # D13: poison — an unknown task, and a body that is not JSON at all.
        worker_ping.app.send_task("worker.tasks.no_such_task", args=[1], queue=queue)
        publish_raw(queue, body=b"{not json", content_type="application/json")
        normal = [WorkerPing.objects.create() for _ in range(10)]
        for ping in normal:
            worker_ping.apply_async((ping.pk,), queue=queue)
        ids = [p.pk for p in normal]
        flowed = wait_for(lambda: WorkerPing.objects.filter(pk__in=ids, finished_at__isnull=False).count() == 10,
                          timeout=60, interval=0.3)
        assert flowed, "the normal messages after the poison ones were not all processed"
        log = worker.log_path.read_text(errors="replace")
    smuggled.refresh_from_db()
    assert smuggled.finished_at is None  # the pickle message did not run
    assert "ContentDisallowed" in log or "Refusing to deserialize" in log
    assert "no_such_task" in log  # reported, not silently dropped


@pytest.mark.django_db(transaction=True)
def test_d13_a_run_whose_worker_dies_every_time_is_failed_after_max_attempts(personas):
    case = make_case(personas.staff_a, personas.team_a)
    run = make_run(case, personas.staff_a)

    def die():
        with run_claimed(run_id=run.pk, worker="doomed") as attempt:
            connection.close()  # the worker's session ends mid-attempt
            return attempt and attempt.number

    for number in range(1, MAX_ATTEMPTS + 1):
        thread, box = _in_thread(die)
        thread.join(30)
        assert box.get("value") == number, box
    # The next delivery does not start a fourth attempt: the run is failed, the attempts kept.
    assert judgment_execute(run_id=run.pk, worker="last") == "nothing to do"
    run.refresh_from_db()
    assert run.status == "failed" and run.message == MSG_TOO_MANY_ATTEMPTS
    assert list(run.attempts.values_list("status", flat=True)) == ["aborted"] * MAX_ATTEMPTS


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)  # without it pytest-django would set up no test database
def test_d2_a_whole_worker_killed_mid_run_is_redelivered_to_the_next_worker(live):
    queue = own_queue()
    # Small bounds for the test; the start-up check still holds (time limit < visibility timeout).
    limits = {"CELERY_VISIBILITY_TIMEOUT": "20", "CELERY_TASK_TIME_LIMIT": "18", "CELERY_TASK_SOFT_TIME_LIMIT": "15",
              "CELERY_UNACKED_RESTORE_INTERVAL": "2"}
    defendants = ["王某", "赵某"] + [f"同案人{i}" for i in range(1, 5)]
    case = make_case(live.staff_a, live.team_a, defendants=defendants)
    run = make_run(case, live.staff_a)
    first = WorkerProcess(broker_url=settings.REDIS_URL, db_name=session_db_name(), queues=queue, env=limits).start()
    try:
        judgment_run_execute.apply_async((run.pk,), queue=queue)
        assert wait_for(lambda: RunEvent.objects.filter(run=run, attempt__number=1).exists(), timeout=60,
                        interval=0.05), "the first attempt never started"
        first.kill_group()  # the host is gone: parent and children, no goodbye
    finally:
        first.kill_group()
    killed_at = time.monotonic()
    assert not run.results.exists()
    with WorkerProcess(broker_url=settings.REDIS_URL, db_name=session_db_name(), queues=queue, env=limits):
        done = wait_for(lambda: JudgmentRun.objects.filter(pk=run.pk, status="done").first(), timeout=120,
                        interval=0.5)
    run.refresh_from_db()
    assert done, (run.status, run.message)
    took = time.monotonic() - killed_at
    print(f"D2: redelivered and finished {took:.1f} s after the kill")
    assert took < 20 + 2 + 60  # visibility timeout + restore sweep + the run itself, with room for a loaded CI
    assert list(run.attempts.values_list("number", "status")) == [(1, "aborted"), (2, "done")]
    assert run.results.count() == len(defendants)


def DefendantResultExists(run) -> bool:  # noqa: N802 - reads as a predicate in the assertion
    return run.results.exists()
