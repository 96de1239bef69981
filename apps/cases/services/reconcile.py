"""The reconciler: runs whose Celery message was lost are sent again.

A run's message can be lost when the broker dies without persistence (D7), when
it was never sent because the broker was down at submission time (the run is
committed first and stays 'queued'), or when a worker host vanished and its
unacknowledged message went with a wiped broker. PostgreSQL is the source of
truth, so the reconciler looks there:

* 'queued' runs requested longer than ``stuck_after`` ago;
* 'running' runs whose current attempt has not beaten its heart for
  ``stuck_after`` and whose advisory lock is free (no live worker holds it).

Each is enqueued once more. That is always safe: the worker claims a run under
its lock and a conditional update (apps.cases.services.runs), so a message
for a run that is in fact still on its way, or already finished, does nothing,
and a 'running' run whose worker died is taken over by the next attempt (the
dead one is kept as 'aborted'). A run is re-sent at most once per
``stuck_after`` window (a marker in Redis), so a long backlog is not flooded
with duplicates.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta

import redis
from django.conf import settings
from django.db.models import Max
from django.utils import timezone

from apps.cases.models import JudgmentRun
from apps.cases.services.runs import run_lock, run_message_send

logger = logging.getLogger(__name__)

_MARK = "lextrace:ops:requeued:run:{}"


@dataclass
class ReconcileReport:
    queued: list[int] = field(default_factory=list)
    stalled: list[int] = field(default_factory=list)
    skipped_recent: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)

    @property
    def requeued(self) -> list[int]:
        return self.queued + self.stalled


def _recently_requeued(client, run_id: int, window_s: int) -> bool:
    try:
        return not client.set(_MARK.format(run_id), "1", nx=True, ex=window_s)
    except redis.RedisError:
        return False  # cannot tell; a duplicate message is harmless


def runs_reconcile(*, stuck_after_s: int | None = None, dry_run: bool = False) -> ReconcileReport:
    """Re-enqueue runs that are stuck because their message was lost. Returns what was done."""
    from apps.core.operations import _redis

    window = int(stuck_after_s if stuck_after_s is not None else settings.RUNS_STUCK_AFTER_S)
    cutoff = timezone.now() - timedelta(seconds=window)
    report = ReconcileReport()
    queued = list(JudgmentRun.objects.filter(status=JudgmentRun.Status.QUEUED, created_at__lt=cutoff)
                  .order_by("pk").values_list("pk", flat=True))
    stalled = []
    running = (JudgmentRun.objects.filter(status=JudgmentRun.Status.RUNNING, started_at__lt=cutoff)
               .annotate(last_beat=Max("attempts__heartbeat_at")).order_by("pk"))
    for run in running:
        if run.last_beat is not None and run.last_beat >= cutoff:
            continue
        with run_lock(run.pk) as free:  # held by a live worker: it is just slow, leave it
            if free:
                stalled.append(run.pk)
    strategies = dict(JudgmentRun.objects.filter(pk__in=queued + stalled).values_list("pk", "strategy"))
    client = _redis()
    for kind, ids in (("queued", queued), ("stalled", stalled)):
        for run_id in ids:
            if dry_run:
                getattr(report, kind).append(run_id)
                continue
            if _recently_requeued(client, run_id, window):
                report.skipped_recent.append(run_id)
                continue
            try:
                run_message_send(run_id, strategies[run_id])
            except Exception:  # the broker is still down: report it, try again next time
                logger.exception("could not re-enqueue run %s", run_id)
                try:
                    client.delete(_MARK.format(run_id))
                except redis.RedisError:
                    pass
                report.failed.append(run_id)
                continue
            logger.warning("re-enqueued %s run %s", kind, run_id)
            getattr(report, kind).append(run_id)
    return report
