"""Judgment runs through a real Celery worker on the real broker, including a worker killed mid-run."""

import os
import signal

import pytest

from apps.cases.models import DefendantResult, JudgmentRun, RunAttempt, RunEvent
from apps.cases.services.runs import judgment_cancel, judgment_request
from tests.cases.conftest import make_case
from tests.conftest import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.slow]


def finished(run_id: int):
    run = JudgmentRun.objects.get(pk=run_id)
    return run if run.finished else None


def test_a_requested_run_is_executed_by_the_worker(live, celery_worker_process):
    case = make_case(live.staff_a, live.team_a)
    run = judgment_request(case=case, user=live.staff_a)
    done = wait_for(lambda: finished(run.pk), timeout=120, interval=0.5)
    assert done and done.status == "done", done and done.message
    assert [r.defendant for r in done.results.all()] == ["王某", "赵某"]
    [attempt] = done.attempts.all()
    assert attempt.status == "done" and attempt.worker.startswith("test-")


def test_a_worker_killed_mid_run_leaves_exactly_one_completed_run(live, celery_worker_process):
    # Enough defendants that the run is still going when the worker child is killed.
    defendants = ["王某", "赵某"] + [f"同案人{i}" for i in range(1, 9)]
    case = make_case(live.staff_a, live.team_a, defendants=defendants)
    run = judgment_request(case=case, user=live.staff_a)

    def second_defendant_started():
        return RunEvent.objects.filter(run=run, attempt__number=1, kind="stage", defendant="赵某").exists()

    assert wait_for(second_defendant_started, timeout=120, interval=0.1), "the first attempt never got going"
    first = RunAttempt.objects.get(run=run, number=1)
    # The attempt records the worker child's process; it belongs to the worker's process group.
    assert os.getpgid(first.pid) == celery_worker_process.pid and first.pid != celery_worker_process.pid
    assert not DefendantResult.objects.filter(run=run).exists()
    os.kill(first.pid, signal.SIGKILL)

    done = wait_for(lambda: finished(run.pk), timeout=240, interval=0.5)
    assert done and done.status == "done", done and (done.status, done.message)
    attempts = list(done.attempts.values_list("number", "status"))
    assert attempts == [(1, "aborted"), (2, "done")], attempts
    # Exactly one result per defendant, however often the message was delivered.
    assert list(done.results.values_list("defendant", flat=True)) == defendants
    assert JudgmentRun.objects.filter(case=case).count() == 1
    # The dead attempt's progress is kept with it.
    assert RunEvent.objects.filter(run=run, attempt__number=1).exists()


def test_a_running_run_is_cancelled_between_stages(live, celery_worker_process):
    defendants = ["王某", "赵某"] + [f"同案人{i}" for i in range(1, 9)]
    case = make_case(live.staff_a, live.team_a, defendants=defendants)
    run = judgment_request(case=case, user=live.staff_a)
    assert wait_for(lambda: RunEvent.objects.filter(run=run).exists(), timeout=120, interval=0.1)
    judgment_cancel(run=run, user=live.staff_a)
    done = wait_for(lambda: finished(run.pk), timeout=60, interval=0.2)
    assert done and done.status == "cancelled"
    assert not done.results.exists() and done.attempts.get().status == "cancelled"
    # It stopped long before the last defendant.
    assert not RunEvent.objects.filter(run=run, defendant=defendants[-1]).exists()
