"""D6, D7 (tier N): the broker restarted or hard-killed under real workers.

Each test runs its own redis-server on a free loopback port and its own Celery worker;
submissions come from separate `manage.py` processes, as from the web tier.
"""

import json
import time

import pytest

from apps.cases.models import JudgmentRun
from apps.core.models import WorkerPing
from tests.cases.conftest import make_case
from tests.conftest import wait_for
from tests.faults import ScratchRedis, WorkerProcess, manage, session_db_name

pytestmark = [pytest.mark.n, pytest.mark.worker, pytest.mark.slow,
              # Without a django_db mark in the session pytest-django sets up no test database at all.
              pytest.mark.django_db(transaction=True)]


ENQUEUE_PINGS = ("import json; from apps.core.services import worker_ping_request; "
                 "print(json.dumps([worker_ping_request().pk for _ in range({n})]))")


def test_d6_queued_tasks_survive_a_broker_restart_with_aof():
    from django.conf import settings

    queue = settings.HEALTH_PING_QUEUE  # pings have a queue of their own (apps/core/services.py)
    with ScratchRedis(aof=True) as broker:
        env = {"DB_NAME": session_db_name(), "REDIS_URL": broker.url(), "CELERY_BROKER_URL": broker.url()}
        sent = manage("shell", "-c", ENQUEUE_PINGS.format(n=50), env=env)
        assert sent.returncode == 0, sent.stderr
        ids = json.loads(sent.stdout.strip().splitlines()[-1])
        assert len(ids) == 50 and broker.client().llen(queue) == 50
        time.sleep(1.2)  # appendfsync everysec; SHUTDOWN also flushes the AOF
        broker.shutdown()
        broker.start()  # same port, same directory: the AOF is replayed
        assert broker.client().llen(queue) == 50
        with WorkerProcess(broker_url=broker.url(), db_name=session_db_name(), queues=queue):
            answered = wait_for(lambda: WorkerPing.objects.filter(pk__in=ids, finished_at__isnull=False).count() == 50,
                                timeout=90, interval=0.5)
        assert answered, WorkerPing.objects.filter(pk__in=ids, finished_at__isnull=False).count()
        # Each exactly once: one answering worker per ping, and nothing left in the queue.
        assert broker.client().llen(queue) == 0


def test_d7_a_submission_while_the_broker_is_dead_is_kept_and_the_reconciler_finishes_it(live):
    case = make_case(live.staff_a, live.team_a)
    with ScratchRedis(aof=False) as broker:
        env = {"DB_NAME": session_db_name(), "REDIS_URL": broker.url(), "CELERY_BROKER_URL": broker.url()}
        with WorkerProcess(broker_url=broker.url(), db_name=session_db_name()):
            broker.kill()  # kill -9, no persistence: whatever was queued is gone
            submit = manage("shell", "-c", (
                "from apps.cases.models import Case; from apps.accounts.models import User; "
                "from apps.cases.services.runs import judgment_request; "
                f"print(judgment_request(case=Case.objects.get(pk={case.pk}), "
                f"user=User.objects.get(pk={live.staff_a.pk})).pk)"), env=env, timeout=180)
            # The request itself succeeded: the run is stored, the broker's refusal only logged.
            assert submit.returncode == 0, submit.stderr[-3000:]
            run_id = int(submit.stdout.strip().splitlines()[-1])
            assert JudgmentRun.objects.get(pk=run_id).status == "queued"
            assert "in on_commit()" in submit.stderr
            broker.start()  # back, empty
            time.sleep(2.5)
            reconciled = manage("runs_reconcile", "--stuck-after", "2", env=env)
            assert reconciled.returncode == 0, reconciled.stderr
            assert f"[{run_id}]" in reconciled.stdout, reconciled.stdout
            done = wait_for(lambda: JudgmentRun.objects.filter(pk=run_id, status="done").exists(), timeout=180,
                            interval=0.5)
        run = JudgmentRun.objects.get(pk=run_id)
        assert done, (run.status, run.message)
        assert run.results.count() == len(case.defendants) and run.attempts.count() == 1
