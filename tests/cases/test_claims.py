"""Claiming runs across database connections: the advisory lock and the conditional update.

These tests commit their rows (fixture ``live``): the competing claimers run on
threads with their own connections, which cannot see an uncommitted test
transaction. No django_db mark: the fixture opens the database and cleans up.
"""

import threading

from django.db import connection

from apps.cases.models import RunAttempt
from apps.cases.services.runs import judgment_cancel, judgment_execute, run_claimed
from tests.cases.conftest import make_case, make_run


def _in_thread(fn):
    """Run fn on its own thread (its own database connection) and return its result."""
    box = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test through the box
            box["error"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=target)
    thread.start()
    return thread, box


def test_of_two_simultaneous_claims_exactly_one_wins(live):
    case = make_case(live.staff_a, live.team_a)
    run = make_run(case, live.staff_a)
    start, hold = threading.Barrier(2), threading.Barrier(2)

    def claim(name):
        def body():
            start.wait()
            with run_claimed(run_id=run.pk, worker=name) as attempt:
                hold.wait()  # both have tried before either lets go
                return attempt.number if attempt else None
        return body

    threads = [_in_thread(claim(f"w{i}")) for i in range(2)]
    for thread, _ in threads:
        thread.join(30)
    outcomes = [box.get("value", box.get("error")) for _, box in threads]
    assert sorted(outcomes, key=str) == [1, None], outcomes
    assert RunAttempt.objects.filter(run=run).count() == 1
    run.refresh_from_db()
    assert run.status == "running" and run.attempt_count == 1


def test_a_run_whose_worker_died_is_taken_over_and_the_dead_attempt_kept_as_aborted(live):
    case = make_case(live.staff_a, live.team_a)
    run = make_run(case, live.staff_a)

    def die():
        with run_claimed(run_id=run.pk, worker="doomed") as attempt:
            # The worker's session ends without finishing: PostgreSQL drops its lock.
            connection.close()
            return attempt.number

    thread, box = _in_thread(die)
    thread.join(30)
    assert box.get("value") == 1, box
    # Redelivered: the run is still 'running', but nobody holds it.
    assert judgment_execute(run_id=run.pk, worker="rescuer") == "done"
    run.refresh_from_db()
    assert run.status == "done" and run.attempt_count == 2
    attempts = list(run.attempts.values_list("number", "status", "worker"))
    assert attempts == [(1, "aborted", "doomed"), (2, "done", "rescuer")]
    assert run.results.count() == 2


def test_a_duplicate_delivery_while_the_run_is_executing_does_nothing(live):
    case = make_case(live.staff_a, live.team_a)
    run = make_run(case, live.staff_a)
    with run_claimed(run_id=run.pk, worker="first") as attempt:
        assert attempt is not None
        thread, box = _in_thread(lambda: judgment_execute(run_id=run.pk, worker="duplicate"))
        thread.join(60)
    assert box.get("value") == "busy", box
    assert RunAttempt.objects.filter(run=run).count() == 1



def test_cancelling_a_run_whose_worker_is_gone_finishes_at_once(live):
    case = make_case(live.staff_a, live.team_a)
    run = make_run(case, live.staff_a)

    def die():
        with run_claimed(run_id=run.pk, worker="doomed"):
            connection.close()

    thread, _ = _in_thread(die)
    thread.join(30)
    cancelled = judgment_cancel(run=run, user=live.staff_a)
    assert cancelled.status == "cancelled"
    assert run.attempts.get().status == "aborted"
