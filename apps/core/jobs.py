"""One shape for long-running work (judgment runs, import batches, training runs, evaluation runs,
worker pings): a job row (``apps.core.models.Job``, one status vocabulary ``JobStatus``), claimed by
one worker with an atomic conditional update, finished the same way, and a page fragment polled
until it is settled.

The life of every kind: ``queued`` → ``running`` → a finished status (done, failed, cancelled, or
one of the few outcomes a kind has of its own: an import published, a training run promoted)."""

from __future__ import annotations

import zlib
from contextlib import contextmanager

from django.db import connection, models
from django.db.models.functions import Coalesce
from django.shortcuts import render
from django.utils import timezone
from django_htmx.http import HttpResponseStopPolling

from apps.core.models import Job, JobStatus

QUEUED, RUNNING = JobStatus.QUEUED.value, JobStatus.RUNNING.value


def _statuses(status: str | tuple[str, ...]) -> tuple[str, ...]:
    return (status,) if isinstance(status, str) else tuple(status)


def job_claim(*, model: type[Job], pk: int, from_status: str | tuple[str, ...] = QUEUED, to: str = RUNNING,
              where: dict | None = None, **changes) -> Job | None:
    """Take job ``pk`` for this worker (or a person's next step: an admin confirming an import): one
    ``UPDATE … WHERE status IN from_status [AND where]``, so of two deliveries of the same task exactly
    one gets the job. A claim into ``running`` records ``started_at`` the first time, and clears a
    ``finished_at`` left by an earlier end (a failed evaluation resumed). Returns the claimed row, or
    None (another worker has it, or it is no longer waiting)."""
    if to == RUNNING:
        changes.setdefault("started_at", Coalesce("started_at", models.Value(timezone.now())))
        changes.setdefault("finished_at", None)
    claimed = model.objects.filter(pk=pk, status__in=_statuses(from_status),
                                   **(where or {})).update(status=to, **changes)
    return model.objects.get(pk=pk) if claimed == 1 else None


def job_finish(*, model: type[Job], pk: int, status: str, from_status: str | tuple[str, ...] = RUNNING,
               where: dict | None = None, **changes) -> bool:
    """Record the end of job ``pk`` if it is still ``from_status`` [and ``where``]: a job cancelled,
    finished or taken over meanwhile keeps what happened to it. A finished status records
    ``finished_at`` (a kind's waiting status, an import checked, does not). Returns whether this call
    finished it."""
    if status in model.FINISHED:
        changes.setdefault("finished_at", timezone.now())
    return model.objects.filter(pk=pk, status__in=_statuses(from_status),
                                **(where or {})).update(status=status, **changes) == 1


def polled_fragment(request, template: str, context: dict, *, finished: bool, reload_when_finished: bool = False):
    """The htmx answer of a fragment polled until its job finishes (templates/_polling.html): the
    fragment; once finished, status 286 so htmx stops polling, or with ``reload_when_finished`` a
    full reload (the rest of the page is out of date too)."""
    response = render(request, template, context)
    if finished and reload_when_finished:
        response["HX-Refresh"] = "true"
    elif finished:
        response.status_code = HttpResponseStopPolling.status_code
    return response


@contextmanager
def job_lock(kind: str, pk: int):
    """Hold a session advisory lock on job ``pk`` of ``kind`` for the block (two 32-bit keys: a space of
    their own, apart from the judgment runs' 64-bit keys); yields whether it was obtained. For a job
    that is continued in several tasks (an evaluation), so two deliveries never work on it at once."""
    key = (zlib.crc32(kind.encode()) & 0x7FFFFFFF, int(pk))
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", key)
        got = bool(cursor.fetchone()[0])
    try:
        yield got
    finally:
        if got:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", key)
