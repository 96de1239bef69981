"""Configuration invariants of the worker and the database (D3, D12, H3, H7)."""

import pytest
from django.conf import settings
from django.db import connection

from worker.celery import app


def test_there_is_no_result_backend_to_lose():
    # D12: task state is PostgreSQL's (runs, attempts, events); a wiped Redis loses no result.
    assert settings.CELERY_RESULT_BACKEND is None
    assert type(app.backend).__name__ == "DisabledBackend"


def test_redelivery_is_bounded():
    # D2/D3: a dead worker's message comes back after the visibility timeout plus one restore sweep,
    # and a running task is never redelivered because of its own length.
    options = app.conf.broker_transport_options
    assert app.conf.task_time_limit < options["visibility_timeout"]
    assert options["unacked_restore_throttle"] == 1 and options["unacked_restore_interval"] <= 60
    assert app.conf.worker_prefetch_multiplier == 1 and app.conf.task_acks_late
    assert app.conf.task_reject_on_worker_lost


def test_every_message_carries_the_configured_time_limits():
    # D10: the worker enforces the limits stamped into each message by its *sender* (the web
    # process), taken from the sender's task_time_limit / task_soft_time_limit. They must be the
    # configured ones, with room for cleanup between the soft and the hard limit.
    from worker.tasks import judgment_run_execute

    message = app.amqp.create_task_message("id-1", judgment_run_execute.name, (1,), {},
                                           time_limit=judgment_run_execute.time_limit,
                                           soft_time_limit=judgment_run_execute.soft_time_limit)
    hard, soft = message.headers["timelimit"]
    assert (hard, soft) == (settings.CELERY_TASK_TIME_LIMIT, settings.CELERY_TASK_SOFT_TIME_LIMIT)
    assert soft < hard < settings.CELERY_VISIBILITY_TIMEOUT


@pytest.mark.django_db
def test_the_cluster_checksums_its_data_pages():
    # H3: the development/CI cluster is initialised with --data-checksums (scripts/services.sh).
    with connection.cursor() as cursor:
        cursor.execute("SHOW data_checksums")
        assert cursor.fetchone()[0] == "on"


def _procfile_connections() -> dict[str, int]:
    """Database connections each Procfile process type can hold at most: one per gunicorn thread,
    and per Celery worker one per pool child plus its main process (heartbeats, liveness)."""
    import re
    from pathlib import Path

    def option(command: str, flag: str) -> int:
        found = re.findall(rf"{flag}\s+(\S+)", command)
        # "${LEXTRACE_LLM_CONCURRENCY:-1}" counts as its default
        return int(re.sub(r"\$\{[^:}]+:-(\d+)\}", r"\1", found[0])) if found else 1

    budget = {}
    for line in (Path(__file__).resolve().parents[2] / "Procfile").read_text().splitlines():
        name, _, command = line.partition(":")
        if "gunicorn" in command:
            budget[name] = option(command, "--workers") * option(command, "--threads")
        elif "celery" in command:
            budget[name] = option(command, "--concurrency") + 1
    return budget


@pytest.mark.django_db
def test_the_connection_budget_fits_max_connections():
    # H7: every process the Procfile starts, the health check and a reserve for operators stay
    # within max_connections (CONN_MAX_AGE keeps one connection per thread, never more).
    budget = _procfile_connections()
    assert set(budget) == {"web", "worker", "llm-worker"} and budget["web"] == 4 and budget["worker"] == 2
    with connection.cursor() as cursor:
        cursor.execute("SHOW max_connections")
        max_connections = int(cursor.fetchone()[0])
    health, reserve = 1, 10
    assert sum(budget.values()) + health + reserve <= max_connections
