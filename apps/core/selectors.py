"""The home page as a work list per role: what each user has to do or watch next."""

from __future__ import annotations

import datetime as dt

from django.db.models import Q
from django.utils import timezone

from apps.accounts.models import Role, User

LIST_SIZE = 8
FAILURE_WINDOW = dt.timedelta(days=7)


def _my_runs(user: User):
    from apps.cases.selectors import run_list_for

    # Lists of runs: their facts (and the case's) stay in the database.
    return run_list_for(user=user).filter(requested_by=user).select_related("case").defer("facts", "case__facts")


def clerk_running(*, user: User) -> dict:
    """The clerk's queued and running runs; settled when there is none (the home page stops following them)."""
    from apps.cases.models import JudgmentRun

    running = list(_my_runs(user).filter(status__in=[JudgmentRun.Status.QUEUED, JudgmentRun.Status.RUNNING])
                   .order_by("-created_at")[:LIST_SIZE])
    return {"running": running, "settled": not running}


def _clerk_work(user: User) -> dict:
    from apps.cases.selectors import case_search
    from apps.review.models import Review
    from apps.review.selectors import review_outcomes

    mine = _my_runs(user)
    returned = list(mine.filter(review__status=Review.Status.RETURNED).select_related("review")
                    .order_by("-review__updated_at")[:LIST_SIZE])
    decided = list(mine.filter(review__status__in=[Review.Status.APPROVED, Review.Status.REJECTED])
                   .select_related("review").order_by("-review__updated_at")[:LIST_SIZE])
    # What the reviewer wrote when deciding each run: a rework starts from it, a rejection is explained by it.
    outcomes = review_outcomes([run.pk for run in returned + decided])

    def rows(runs):
        return [{"run": run, "decision": outcomes.get(run.pk, {}).get("decision")} for run in runs]

    cases = list(case_search(user=user).filter(created_by=user).defer("facts")[:LIST_SIZE])
    return {**clerk_running(user=user), "returned": rows(returned), "decided": rows(decided), "cases": cases}


def _reviewer_work(user: User) -> dict:
    from apps.review.selectors import queue_counts, queue_runs

    now = timezone.now()
    # Oldest first, as the queue: the longest-waiting run is reviewed next.
    queue = list(queue_runs(user=user, status="pending").exclude(requested_by=user)[:LIST_SIZE])
    rows = [{"run": r, "waiting": now - r.finished_at if r.finished_at else None,
             "mine": bool(getattr(r, "review", None) and r.review.assigned_to_id == user.pk)} for r in queue]
    return {"queue": rows, "counts": queue_counts(user=user)}


def _admin_work() -> dict:
    from apps.cases.models import JudgmentRun
    from apps.corpus.models import ImportBatch
    from apps.evaluation.models import EvaluationRun
    from apps.registry.models import ModelVersion, TrainingRun

    since = timezone.now() - FAILURE_WINDOW
    failed = {
        "runs": list(JudgmentRun.objects.filter(status=JudgmentRun.Status.FAILED, created_at__gte=since)
                     .select_related("case").order_by("-created_at")[:LIST_SIZE]),
        "imports": list(ImportBatch.objects.filter(status=ImportBatch.Status.FAILED, created_at__gte=since)[:LIST_SIZE]),
        "trainings": list(TrainingRun.objects.filter(status=TrainingRun.Status.FAILED, created_at__gte=since)[:LIST_SIZE]),
        "evaluations": list(EvaluationRun.objects.filter(status=EvaluationRun.Status.FAILED,
                                                         created_at__gte=since)[:LIST_SIZE]),
    }
    active = {v.kind: v for v in ModelVersion.objects.filter(active=True)}
    models = [{"kind": kind, "label": label, "version": active.get(kind)} for kind, label in ModelVersion.Kind.choices]
    return {"failed": failed, "any_failed": any(failed.values()), "models": models,
            "training": TrainingRun.objects.first(), "evaluation": EvaluationRun.objects.first(),
            "busy": JudgmentRun.objects.filter(Q(status=JudgmentRun.Status.QUEUED) | Q(status=JudgmentRun.Status.RUNNING))
            .count()}


def home_work(*, user: User) -> dict:
    """What the home page lists for ``user``, per role they hold."""
    work: dict = {}
    if user.has_role(Role.STAFF):
        work["clerk"] = _clerk_work(user)
    if user.has_role(Role.REVIEWER):
        work["reviewer"] = _reviewer_work(user)
    if user.has_role(Role.ADMIN):
        work["admin"] = _admin_work()
    work["busy"] = bool(work.get("clerk", {}).get("running"))
    return work
