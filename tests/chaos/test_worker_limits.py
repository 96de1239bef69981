"""D10 (tier N): a model that hangs, under the Celery time limits."""

import time

import pytest
from django.conf import settings

from apps.cases.models import JudgmentRun, RunAttempt
from apps.cases.services.runs import run_lock
from apps.core.operations import model_circuit
from tests.cases.conftest import make_case, make_run
from tests.conftest import wait_for
from tests.faults import WorkerProcess, own_queue, session_db_name
from worker.agents.testing.stub_server import StubServer
from worker.tasks import judgment_run_execute


@pytest.mark.n
@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_d10_a_hanging_model_is_cut_by_the_soft_time_limit_and_the_worker_goes_on(live):
    queue = own_queue()
    circuit = model_circuit()
    circuit.reset()
    with StubServer(max_sleep_s=60) as stub:
        stub.set_mode("hang")
        env = {"CELERY_VISIBILITY_TIMEOUT": "40", "CELERY_TASK_TIME_LIMIT": "15", "CELERY_TASK_SOFT_TIME_LIMIT": "5",
               "LEXTRACE_LLM_BASE_URL": stub.url, "LEXTRACE_LLM_MODEL": "stub-model", "LEXTRACE_LLM_TIMEOUT": "60"}
        case = make_case(live.staff_a, live.team_a)
        hung = JudgmentRun.objects.create(case=case, requested_by=live.staff_a, strategy="llm", ablation="full",
                                          case_version=case.version, facts=case.facts,
                                          defendants=list(case.defendants), offence_date=case.offence_date)
        after = make_run(case, live.staff_a)
        with WorkerProcess(broker_url=settings.REDIS_URL, db_name=session_db_name(), queues=queue, env=env):
            started = time.monotonic()
            # Celery stamps the *sender's* limits into each message and the worker obeys those; in
            # production web and worker share one configuration, here the test process sends as the
            # web would with the worker's settings.
            limits = {"time_limit": int(env["CELERY_TASK_TIME_LIMIT"]),
                      "soft_time_limit": int(env["CELERY_TASK_SOFT_TIME_LIMIT"])}
            judgment_run_execute.apply_async((hung.pk,), queue=queue, **limits)
            judgment_run_execute.apply_async((after.pk,), queue=queue, **limits)
            finished = wait_for(lambda: JudgmentRun.objects.filter(pk=hung.pk, status__in=JudgmentRun.FINISHED)
                                .first(), timeout=60, interval=0.3)
            elapsed = time.monotonic() - started
            assert finished, JudgmentRun.objects.get(pk=hung.pk).status
            # The next run on the same worker is not held up by the hung one.
            assert wait_for(lambda: JudgmentRun.objects.filter(pk=after.pk, status="done").exists(), timeout=90)
        assert stub.stats()["calls"] >= 1
    circuit.reset()
    hung.refresh_from_db()
    print(f"D10: hung run ended after {elapsed:.1f} s as {hung.status}: {hung.message[:120]}")
    assert elapsed < 15 + 10  # cut by the soft limit (5 s), long before the model's 60 s timeout
    # Cleaned up: the attempt is closed, the lock released, and no judgment was produced.
    assert not RunAttempt.objects.filter(run=hung, status="running").exists()
    with run_lock(hung.pk) as free:
        assert free
    statuses = set(hung.results.values_list("status", flat=True))
    assert hung.status == "failed" and "SoftTimeLimitExceeded" in hung.message or statuses <= {"model_unavailable"}
    assert not hung.results.filter(status="judged").exists()
