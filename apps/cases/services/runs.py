"""Judgment runs: request, cancel, retry (web side) and execute (worker side).

A run is executed by one Celery task, enqueued after the requesting
transaction commits. The broker delivers at least once, so the worker side
claims the run under two guards:

* a PostgreSQL session advisory lock on the run, held for the whole attempt.
  PostgreSQL releases it when the holder's connection ends, so a worker child
  that was SIGKILLed stops holding it at once, and a live attempt keeps a
  duplicate delivery out;
* a conditional update (``status='queued'`` → ``'running'``, apps.core.jobs.job_claim):
  exactly one claimer starts a fresh run.

A redelivered task that gets the lock of a run still marked 'running' knows
the previous attempt's worker died: it marks that RunAttempt 'aborted' and
starts the next attempt (at most MAX_ATTEMPTS in all). Results are written in
one transaction at the end, guarded by the attempt number, so a run has
exactly one result per defendant however often it was delivered.
"""

from __future__ import annotations

import logging
import os
import time
from contextlib import contextmanager

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import DatabaseError, connection, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop

from apps.audit.services import audit_append
from apps.core.jobs import job_claim, job_finish
from apps.cases.models import Case, DefendantResult, JudgmentRun, RunAttempt, RunEvent
from worker.agents.names import ABLATIONS
from worker.agents.types import CaseInput

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
# How long a redelivered task waits for the lock of a 'running' run: the backend of a
# killed worker notices its closed socket within milliseconds; this only bounds the wait.
LOCK_WAIT_S = 10.0
_LOCK_NAMESPACE = 0x4C58  # "LX": keeps our advisory-lock keys apart from anyone else's

ABLATION_LABELS = {
    "full": gettext_lazy("full pipeline"),
    "no_graph": gettext_lazy("without HierarGraph (flat retrieval)"),
    "no_researcher": gettext_lazy("without the Researcher"),
    "no_sem": gettext_lazy("without semantic case retrieval (R_sem)"),
    "no_com": gettext_lazy("without community retrieval (R_com)"),
    "no_chg": gettext_lazy("without charge retrieval (R_chg)"),
    "no_art": gettext_lazy("without article retrieval (R_art)"),
    "no_auditor": gettext_lazy("without the Auditor"),
    "naive_rag": gettext_lazy("naive RAG baseline (flat top-k, no audit)"),
    "classifier_only": gettext_lazy("the trained classifiers alone (baseline: no retrieval, no audit)"),
}

# Stored in the database in English and translated when shown ({% translate run.message %}).
MSG_CANCELLED_QUEUED = gettext_noop("Cancelled before it started.")
MSG_CANCELLED = gettext_noop("Cancelled while running.")
MSG_WORKER_LOST = gettext_noop("The worker running this attempt stopped before it finished.")
MSG_TOO_MANY_ATTEMPTS = gettext_noop("The worker stopped during every attempt; giving up.")
MSG_SUPERSEDED = gettext_noop("Another attempt took over this run.")


class RunCancelled(Exception):
    """Raised from the progress callback to stop the pipeline between stages."""


# --- choices ------------------------------------------------------------------------


def llm_configured() -> bool:
    return bool(settings.LLM_BASE_URL)


def strategy_options() -> list[dict]:
    """The strategies with whether they can be chosen now, and why not."""
    llm_ok = llm_configured()
    return [
        {"value": JudgmentRun.Strategy.STATISTICAL, "label": JudgmentRun.Strategy.STATISTICAL.label, "enabled": True,
         "note": ""},
        {"value": JudgmentRun.Strategy.LLM, "label": JudgmentRun.Strategy.LLM.label, "enabled": llm_ok,
         "note": "" if llm_ok else gettext_lazy("No LLM server is configured (LEXTRACE_LLM_BASE_URL is empty); "
                                                "the statistical strategy needs none.")},
    ]


def ablation_options() -> list[tuple[str, str]]:
    return [(name, ABLATION_LABELS.get(name, name)) for name in ABLATIONS]


def mode_options() -> list[tuple[str, str]]:
    return list(JudgmentRun.Mode.choices)


def _check_parameters(strategy: str, ablation: str, mode: str = JudgmentRun.Mode.FIXED) -> None:
    if strategy not in JudgmentRun.Strategy.values:
        raise ValidationError({"strategy": _("Unknown strategy.")})
    if strategy == JudgmentRun.Strategy.LLM and not llm_configured():
        raise ValidationError({"strategy": _("No LLM server is configured; use the statistical strategy.")})
    if ablation not in ABLATIONS:
        raise ValidationError({"ablation": _("Unknown ablation.")})
    if mode not in JudgmentRun.Mode.values:
        raise ValidationError({"mode": _("Unknown retrieval mode.")})


# --- web side ---------------------------------------------------------------------------


def run_queue(strategy: str) -> str:
    """LLM runs go to a queue of their own whose worker's concurrency is capped (the model server's
    capacity); statistical runs never wait behind them (RELIABILITY E2)."""
    return settings.LLM_QUEUE if strategy == JudgmentRun.Strategy.LLM else settings.CELERY_TASK_DEFAULT_QUEUE


def run_message_send(run_id: int, strategy: str) -> None:
    from worker.tasks import judgment_run_execute

    judgment_run_execute.apply_async((run_id,), queue=run_queue(strategy))


def _enqueue(run: JudgmentRun) -> None:
    # After commit: the worker never looks for a run that is not there yet, and a
    # rolled-back request sends nothing. One message per run. If the broker cannot take it,
    # the error is logged and the committed run stays 'queued' for the reconciler
    # (apps.cases.services.reconcile), instead of failing a request whose run is already stored.
    run_id, strategy = run.pk, run.strategy

    def send_run_message():  # a named function: Django logs a robust callback's error by its __qualname__
        run_message_send(run_id, strategy)

    transaction.on_commit(send_run_message, robust=True)


@transaction.atomic
def judgment_request(*, case: Case, user, strategy: str = JudgmentRun.Strategy.STATISTICAL,
                     ablation: str = "full", mode: str = JudgmentRun.Mode.FIXED) -> JudgmentRun:
    """Create a run of the case as it is now and queue it."""
    _check_parameters(strategy, ablation, mode)
    # Read the facts and the version together, so the snapshot is one version of the case.
    current = Case.objects.select_for_update().get(pk=case.pk)
    run = JudgmentRun.objects.create(case=current, requested_by=user, strategy=strategy, ablation=ablation, mode=mode,
                                     case_version=current.version, facts=current.facts,
                                     defendants=list(current.defendants), offence_date=current.offence_date)
    audit_append(action="run.request", obj=run, actor=user,
                 after={"case": current.pk, "case_version": current.version, "strategy": strategy, "ablation": ablation,
                        "mode": mode})
    _enqueue(run)
    return run


@transaction.atomic
def judgment_retry(*, run: JudgmentRun, user) -> JudgmentRun:
    """A new run with the same inputs (snapshot, strategy, ablation) as a failed or cancelled one."""
    run = JudgmentRun.objects.select_for_update().get(pk=run.pk)
    if run.status not in (JudgmentRun.Status.FAILED, JudgmentRun.Status.CANCELLED):
        raise ValidationError(_("Only a failed or cancelled run can be retried."))
    _check_parameters(run.strategy, run.ablation, run.mode)
    new = JudgmentRun.objects.create(case_id=run.case_id, requested_by=user, strategy=run.strategy,
                                     ablation=run.ablation, mode=run.mode, case_version=run.case_version, facts=run.facts,
                                     defendants=list(run.defendants), offence_date=run.offence_date, retry_of=run)
    audit_append(action="run.retry", obj=new, actor=user, before={"run": run.pk, "status": run.status},
                 after={"case": run.case_id, "case_version": run.case_version, "strategy": run.strategy,
                        "ablation": run.ablation, "mode": run.mode})
    _enqueue(new)
    return new


def judgment_cancel(*, run: JudgmentRun, user) -> JudgmentRun:
    """Cancel a queued run at once; ask a running one to stop at its next stage. Audited (run.cancel)."""
    now = timezone.now()
    # The run's lock is free when no worker executes it: a 'running' run whose worker is gone
    # would never see the flag, so it is cancelled outright.
    with run_lock(run.pk) as no_worker, transaction.atomic():
        locked = JudgmentRun.objects.select_for_update().get(pk=run.pk)
        before = locked.status
        request = {"cancel_requested": True, "cancel_requested_by": user}
        if before == JudgmentRun.Status.QUEUED or (before == JudgmentRun.Status.RUNNING and no_worker):
            if before == JudgmentRun.Status.RUNNING:
                RunAttempt.objects.filter(run_id=run.pk, status=RunAttempt.Status.RUNNING).update(
                    status=RunAttempt.Status.ABORTED, finished_at=now, message=MSG_WORKER_LOST)
            job_finish(model=JudgmentRun, pk=run.pk, status=JudgmentRun.Status.CANCELLED, from_status=before,
                       finished_at=now, message=MSG_CANCELLED_QUEUED if before == JudgmentRun.Status.QUEUED
                       else MSG_CANCELLED, **request)
        elif before == JudgmentRun.Status.RUNNING:
            JudgmentRun.objects.filter(pk=run.pk).update(**request)
        else:
            raise ValidationError(_("This run has already finished."))
        locked.refresh_from_db()
        audit_append(action="run.cancel", obj=locked, actor=user, before={"status": before},
                     after={"status": locked.status, "cancel_requested": True})
    return JudgmentRun.objects.get(pk=run.pk)


# --- worker side ------------------------------------------------------------------------


def _held_locks() -> set[int]:
    # Advisory locks are re-entrant within one database session; remember our own so a
    # second claim through the same connection is refused like any other.
    held = getattr(connection, "_lextrace_run_locks", None)
    if held is None:
        held = connection._lextrace_run_locks = set()
    return held


@contextmanager
def run_lock(run_id: int, *, wait: float = 0.0):
    """Hold the run's advisory lock for the block; yields whether it was obtained."""
    held = _held_locks()
    if run_id in held:
        yield False
        return
    key = (_LOCK_NAMESPACE << 32) | int(run_id)
    deadline = time.monotonic() + wait
    with connection.cursor() as cursor:
        while True:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [key])
            got = bool(cursor.fetchone()[0])
            if got or time.monotonic() >= deadline:
                break
            time.sleep(0.2)
    if not got:
        yield False
        return
    held.add(run_id)
    try:
        yield True
    finally:
        held.discard(run_id)
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [key])
        except DatabaseError:
            # Closing the session is the other way to release a session-level lock.
            logger.warning("could not release the lock of run %s; closing the connection", run_id)
            connection.close()


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def _claim(run_id: int, worker: str) -> RunAttempt | None:
    """Start an attempt on a run whose lock the caller holds; None when there is nothing to do."""
    now = timezone.now()
    with transaction.atomic():
        run = job_claim(model=JudgmentRun, pk=run_id, started_at=now, attempt_count=F("attempt_count") + 1)
        if run is None:
            run = JudgmentRun.objects.select_for_update().filter(pk=run_id).first()
            if run is None or run.status != JudgmentRun.Status.RUNNING:
                return None  # finished, cancelled or deleted: a duplicate delivery
            # 'running' and yet its lock was free: the attempt's worker died.
            RunAttempt.objects.filter(run_id=run_id, status=RunAttempt.Status.RUNNING).update(
                status=RunAttempt.Status.ABORTED, finished_at=now, message=MSG_WORKER_LOST)
            if run.cancel_requested or run.attempt_count >= MAX_ATTEMPTS:
                cancelled = run.cancel_requested
                job_finish(model=JudgmentRun, pk=run_id, finished_at=now,
                           status=JudgmentRun.Status.CANCELLED if cancelled else JudgmentRun.Status.FAILED,
                           message=MSG_CANCELLED if cancelled else MSG_TOO_MANY_ATTEMPTS)
                return None
            JudgmentRun.objects.filter(pk=run_id).update(attempt_count=F("attempt_count") + 1)
            run.refresh_from_db()
        return RunAttempt.objects.create(run=run, number=run.attempt_count, worker=worker[:200], pid=os.getpid(),
                                         backend_pid=_backend_pid(), started_at=now, heartbeat_at=now)


@contextmanager
def run_claimed(*, run_id: int, worker: str = "", wait: float = 0.0):
    """Yield a new RunAttempt if this caller may execute the run now, else None."""
    with run_lock(run_id, wait=wait) as held:
        yield _claim(run_id, worker) if held else None


class _Progress:
    """The pipeline's progress callback: records events, beats the heart, checks for cancellation."""

    def __init__(self, attempt: RunAttempt):
        self.attempt = attempt
        self.defendant = ""

    def __call__(self, event: str, detail: dict) -> None:
        now = timezone.now()
        self.defendant = str(detail.get("defendant", self.defendant))
        RunEvent.objects.create(run_id=self.attempt.run_id, attempt=self.attempt, at=now, kind=event[:16],
                                defendant=self.defendant[:100], stage=str(detail.get("stage", ""))[:32],
                                detail=detail)
        RunAttempt.objects.filter(pk=self.attempt.pk).update(heartbeat_at=now)
        if JudgmentRun.objects.filter(pk=self.attempt.run_id, cancel_requested=True).exists():
            raise RunCancelled


def _finish(attempt: RunAttempt, *, status: str, message: str = "", versions: dict | None = None,
            bundles: list | None = None) -> bool:
    """Record the end of an attempt, unless another attempt has taken the run over meanwhile."""
    now = timezone.now()
    with transaction.atomic():
        run = JudgmentRun.objects.select_for_update().get(pk=attempt.run_id)
        if status == JudgmentRun.Status.DONE and run.cancel_requested:
            # The cancellation arrived after the last check: it wins, the results are dropped.
            status, message, bundles = JudgmentRun.Status.CANCELLED, MSG_CANCELLED, None
        outcome = {"message": message, "finished_at": now, **({"versions": versions} if versions is not None else {})}
        if not job_finish(model=JudgmentRun, pk=run.pk, status=status, where={"attempt_count": attempt.number},
                          **outcome):
            RunAttempt.objects.filter(pk=attempt.pk, status=RunAttempt.Status.RUNNING).update(
                status=RunAttempt.Status.ABORTED, finished_at=now, message=MSG_SUPERSEDED)
            return False
        for position, bundle in enumerate(bundles or ()):
            _store_result(run, position, bundle)
        if status == JudgmentRun.Status.DONE:
            # The review is opened with the results, so that viewing it never writes.
            from apps.review.models import Review

            Review.objects.get_or_create(run=run)
        RunAttempt.objects.filter(pk=attempt.pk).update(status=status, finished_at=now, message=message)
    return True


def _store_result(run: JudgmentRun, position: int, bundle) -> None:
    judgment = bundle.judgment
    term = judgment.term
    DefendantResult.objects.create(
        run=run, position=position, defendant=bundle.defendant, status=str(judgment.status),
        message=judgment.message, charges=list(judgment.charges), article_keys=list(judgment.article_keys),
        term_months=term.months if term is not None and not (term.life or term.death) else None,
        life=bool(term and term.life), death=bool(term and term.death), bundle=bundle.to_dict())


def _merged_versions(bundles) -> dict:
    versions: dict[str, str] = {}
    for bundle in bundles:
        for key, value in bundle.versions.items():
            if versions.setdefault(key, value) != value:
                versions[key] = f"{versions[key]} | {value}"
    return versions


def _execute(attempt: RunAttempt) -> None:
    from apps.judging.services import judgment_compute

    run = attempt.run
    case = CaseInput(facts=run.facts, defendants=tuple(run.defendants), offence_date=run.offence_date,
                     ref=f"run:{run.pk}")
    try:
        bundles = judgment_compute(case=case, strategy=run.strategy, mode=run.mode, ablation=run.ablation,
                                   progress=_Progress(attempt))
        missing = [b.defendant for b in bundles if b.judgment is None]
        if len(bundles) != len(run.defendants) or missing:
            raise RuntimeError(f"the pipeline returned {len(bundles)} bundles for {len(run.defendants)} defendants"
                               + (f"; no judgment for {', '.join(missing)}" if missing else ""))
    except RunCancelled:
        _finish(attempt, status=JudgmentRun.Status.CANCELLED, message=MSG_CANCELLED)
        return
    except Exception as exc:  # any error of the pipeline is this run's explicit failure, never a silent result
        logger.exception("judgment run %s attempt %s failed", run.pk, attempt.number)
        _finish(attempt, status=JudgmentRun.Status.FAILED, message=f"{type(exc).__name__}: {exc}"[:2000])
        return
    _finish(attempt, status=JudgmentRun.Status.DONE, versions=_merged_versions(bundles), bundles=bundles)


def judgment_execute(*, run_id: int, worker: str = "") -> str:
    """The worker's side of a run (one Celery task). Returns what happened, for logs and tests."""
    status = JudgmentRun.objects.filter(pk=run_id).values_list("status", flat=True).first()
    if status is None or status in JudgmentRun.FINISHED:
        return "nothing to do"
    # A 'running' run is either being executed (its lock is held) or its worker died and
    # the backend is about to notice; only then is waiting for the lock worth it.
    wait = LOCK_WAIT_S if status == JudgmentRun.Status.RUNNING else 0.0
    with run_lock(run_id, wait=wait) as held:
        if not held:
            return "busy"
        attempt = _claim(run_id, worker)
        if attempt is None:
            return "nothing to do"
        logger.info("judgment run %s: attempt %s started", run_id, attempt.pk)
        _execute(attempt)
        outcome = RunAttempt.objects.get(pk=attempt.pk).status
        # Ids and states only: never facts, names or results in a log line.
        logger.info("judgment run %s: attempt %s %s", run_id, attempt.pk, outcome)
        return outcome
