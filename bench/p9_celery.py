"""P9: Celery overhead per case — a judgment run through a real worker on the real broker
against the same service called inline.

On the scratch database (corpus, indexes and graph from P1; runs are written there), for
each case (first defendant; statistical strategy), interleaved:
- inline (the baseline): ``judgment_request`` with the enqueue suppressed, then
  ``judgment_execute`` in this process — the case wall time without Celery;
- Celery: ``judgment_request`` as the web does it (the message goes out on commit to
  Redis, the broker URL of the run), a ``celery worker`` process (prefork, concurrency 1,
  started by the benchmark) executes it; the wall time ends at the run's ``finished_at``.
Overhead = Celery wall / inline wall − 1. Goal: ≤ 2 % of the case wall time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from unittest import mock

from bench.common import ROOT, Context, goal, process_stop, row, spread


def _start_worker(ctx: Context, log: Path) -> tuple[subprocess.Popen, str]:
    name = f"bench-{uuid.uuid4().hex[:8]}@localhost"
    env = {**os.environ, "DB_NAME": ctx.scratch_db, "CELERY_BROKER_URL": ctx.redis_url}
    with log.open("wb") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "celery", "-A", "worker.celery:app", "worker", "--queues", "default",
                                 "--concurrency", "1", "--pool", "prefork", "--loglevel", "INFO", "-n", name,
                                 "--without-gossip", "--without-mingle"], cwd=ROOT, env=env, stdout=fh, stderr=fh)
    return proc, name


def run(ctx: Context) -> list[dict]:
    import datetime as dt

    from django.conf import settings
    from django.db.models import Count

    from apps.accounts.demo import demo_users_ensure
    from apps.accounts.models import User
    from apps.cases.models import JudgmentRun, RunAttempt
    from apps.cases.services import runs as run_services
    from apps.cases.services.cases import case_create
    from worker.celery import app

    if settings.CELERY_BROKER_URL != ctx.redis_url:
        raise RuntimeError(f"the broker must be {ctx.redis_url} (got {settings.CELERY_BROKER_URL})")
    demo_users_ensure()
    clerk = User.objects.get(username="clerk_a")
    team = clerk.teams.first()
    records = ctx.eval_cases(ctx.size(10, 2))
    cases = [case_create(user=clerk, team=team, facts=r["fact"], offence_date=dt.date(2018, 6, 1),
                         defendants=r.get("defendants", [])[:1] or ["张某"], title=f"benchmark P9 {i}")
             for i, r in enumerate(records)]

    def inline(case) -> float:
        t = time.time()
        with mock.patch.object(run_services, "_enqueue"):
            run = run_services.judgment_request(case=case, user=clerk)
        run_services.judgment_execute(run_id=run.pk, worker="inline")
        return time.time() - t

    def celery(case, timeout: float = 600) -> tuple[float, float]:
        t = time.time()
        run = run_services.judgment_request(case=case, user=clerk)  # enqueued on commit
        deadline = time.monotonic() + timeout
        while True:
            run.refresh_from_db(fields=["status", "finished_at"])
            if run.status in JudgmentRun.FINISHED and run.finished_at:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"run {run.pk} not finished after {timeout} s (status {run.status})")
            # The wall time ends at the run's finished_at (written by the worker), so polling need not be
            # fine-grained; a tight loop would take CPU from the worker on a 2-core machine.
            time.sleep(0.05)
        attempt = RunAttempt.objects.filter(run=run).order_by("-number").first()
        queued = attempt.started_at.timestamp() - t if attempt else float("nan")
        return run.finished_at.timestamp() - t, queued

    app.control.purge()
    log = ROOT / ".local" / "bench" / "p9-celery-worker.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    worker, name = _start_worker(ctx, log)
    try:
        deadline = time.monotonic() + 120
        while not app.control.ping(destination=[name], timeout=0.5):
            if worker.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the Celery worker did not start (see {log})")
        celery(cases[0]), inline(cases[0])  # warm both sides: models, tokenizer, connections
        t_inline, t_celery, t_queue, diffs = [], [], [], []
        for case in cases:
            a = inline(case)
            b, q = celery(case)
            t_inline.append(a)
            t_celery.append(b)
            t_queue.append(q * 1000)
            diffs.append((b - a) * 1000)
    finally:
        process_stop(worker)
    s_inline, s_celery = spread(t_inline), spread(t_celery)
    ratio = s_celery["p50"] / s_inline["p50"]
    statuses = dict(JudgmentRun.objects.filter(case__in=cases).values_list("status").annotate(n=Count("pk")))
    return [row(
        "P9", "judgment run through Celery, per case (p50 wall)", s_celery["p50"], "s",
        baseline="the same service called inline in this process, same cases, same run", baseline_value=s_inline["p50"],
        ratio=ratio, stats=s_celery, baseline_stats=s_inline,
        goals=[goal("overhead ≤ 2 % of case wall time", None if ctx.tiny else ratio - 1 <= 0.02)],
        details={"overhead_pct_p50": (ratio - 1) * 100, "paired_difference_ms": spread(diffs),
                 "request_to_worker_start_ms": spread(t_queue), "cases": len(cases), "run_statuses": statuses,
                 "broker": ctx.redis_url.rsplit("@", 1)[-1]},
    )]
