"""E2 (tier C): a slow model does not starve other work.

LLM runs go to a queue of their own whose worker's concurrency is capped; a
statistical run requested after two hung LLM runs is done while they still wait
on the model, the LLM worker never runs more than one at a time, and each run
was executed by the worker of its own queue.
"""

import time

import pytest
import redis
from django.conf import settings
from django.test import override_settings

from apps.cases.models import JudgmentRun, RunAttempt
from apps.cases.services.runs import judgment_request
from apps.core.operations import model_circuit
from tests.cases.conftest import ensure_judging_corpus, make_case
from tests.conftest import wait_for
from tests.faults import WorkerProcess, own_queue, session_db_name
from worker.agents.testing.stub_server import StubServer

pytestmark = [pytest.mark.c, pytest.mark.worker, pytest.mark.slow]


@pytest.mark.django_db(transaction=True)
def test_e2_hung_llm_runs_wait_in_their_capped_queue_while_a_statistical_run_finishes(personas):
    ensure_judging_corpus()
    model_circuit().reset()
    default_q, llm_q = own_queue(), own_queue()
    case = make_case(personas.staff_a, personas.team_a)
    with StubServer(max_sleep_s=90) as stub:
        stub.set_mode("hang")  # each call waits twice the client's timeout
        llm_env = {"LEXTRACE_LLM_BASE_URL": stub.url, "LEXTRACE_LLM_MODEL": "stub-model", "LEXTRACE_LLM_TIMEOUT": "45",
                   "CELERY_TASK_DEFAULT_QUEUE": default_q, "LEXTRACE_LLM_QUEUE": llm_q}
        common = dict(broker_url=settings.REDIS_URL, db_name=session_db_name(), env=llm_env)
        with override_settings(LLM_BASE_URL=stub.url, LLM_MODEL="stub-model", LLM_QUEUE=llm_q,
                               CELERY_TASK_DEFAULT_QUEUE=default_q), \
                WorkerProcess(queues=default_q, **common) as general, \
                WorkerProcess(queues=llm_q, concurrency=1, **common) as llm_worker:
            llm_runs = [judgment_request(case=case, user=personas.staff_a, strategy="llm") for _ in range(2)]
            assert wait_for(lambda: stub.stats()["calls"] >= 1, timeout=60), "the LLM worker never called the model"
            started = time.monotonic()
            statistical = judgment_request(case=case, user=personas.staff_a)
            running_llm = []

            def statistical_done():
                running_llm.append(RunAttempt.objects.filter(run__in=llm_runs, status="running").count())
                return JudgmentRun.objects.filter(pk=statistical.pk, status="done").exists()

            assert wait_for(statistical_done, timeout=120, interval=0.5), JudgmentRun.objects.get(pk=statistical.pk).status
            latency = time.monotonic() - started
            states = list(JudgmentRun.objects.filter(pk__in=[r.pk for r in llm_runs]).values_list("status", flat=True))
            calls = stub.stats()["calls"]
        stub.set_mode("ok")
    print(f"E2: statistical run done {latency:.1f} s after its request; LLM runs {states}; model calls {calls}")
    assert latency < 90  # it did not wait for a hung model call (45 s timeout, retried)
    assert sorted(states) == ["queued", "running"]  # one LLM run at a time; the other waits in its queue
    assert max(running_llm) == 1
    workers = dict(RunAttempt.objects.filter(run__in=[statistical, *llm_runs]).values_list("run_id", "worker"))
    assert workers[statistical.pk] == general.name
    assert all(workers.get(r.pk, llm_worker.name) == llm_worker.name for r in llm_runs)
    redis.Redis.from_url(settings.REDIS_URL).delete(default_q, llm_q)
    model_circuit().reset()
