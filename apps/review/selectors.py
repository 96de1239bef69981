"""Reads for the review app. Every query starts from the runs of the caller's teams (404 otherwise)."""

from __future__ import annotations

from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.http import Http404
from django.shortcuts import get_object_or_404

from apps.cases.models import RESULT_STATUS_LABELS, DefendantResult, JudgmentRun
from apps.cases.selectors import run_list_for
from apps.core.params import int_param
from apps.review.models import Decision, Review, ReviewItem, WhatIf
from worker.agents.types import Bundle

QUEUE_STATUSES = ("pending", "approved", "rejected", "returned", "all")


def approved_results_query() -> QuerySet[DefendantResult]:
    """Every defendant's result of every run whose current review version has a valid approval, by run and
    position: what the approved-run exports (SFT examples, planner trajectories) read."""
    return (DefendantResult.objects
            .filter(run__review__status=Review.Status.APPROVED, run__review__decisions__kind=Decision.Kind.APPROVE,
                    run__review__decisions__valid=True, run__review__decisions__version=F("run__review__version"))
            .distinct().order_by("run_id", "position"))


def queue_runs(*, user, status: str = "pending", assigned: str = "", q: str = "", team: int | None = None) -> QuerySet:
    """Finished runs of the caller's teams with their review state ('pending' when never opened)."""
    runs = (run_list_for(user=user).filter(status=JudgmentRun.Status.DONE)
            .select_related("case", "case__team", "requested_by", "review", "review__assigned_to")
            .defer("facts", "case__facts")  # a list of runs: their facts stay in the database
            .annotate(review_status=Coalesce(F("review__status"), Value(Review.Status.PENDING)),
                      n_results=Count("results", distinct=True)))
    if status and status != "all":
        runs = runs.filter(review_status=status)
    if assigned == "me":
        runs = runs.filter(review__assigned_to=user)
    elif assigned == "none":
        runs = runs.filter(Q(review__isnull=True) | Q(review__assigned_to__isnull=True))
    if team:
        runs = runs.filter(case__team_id=team)
    q = (q or "").strip()
    if q:
        runs = runs.filter(Q(case__title__icontains=q) | (Q(pk=int_param(q)) if int_param(q) is not None else Q(pk__in=[])))
    decided = Decision.objects.filter(review__run=OuterRef("pk")).order_by("-decided_at", "-pk")
    runs = runs.annotate(decided_at=Subquery(decided.values("decided_at")[:1]))
    # Oldest first while waiting (first come, first reviewed); newest first once decided.
    return runs.order_by("finished_at", "pk") if status == "pending" else runs.order_by("-finished_at", "-pk")


def queue_counts(*, user) -> dict[str, int]:
    rows = (run_list_for(user=user).filter(status=JudgmentRun.Status.DONE)
            .annotate(review_status=Coalesce(F("review__status"), Value(Review.Status.PENDING)))
            .values("review_status").annotate(n=Count("pk")))
    counts = {s: 0 for s in QUEUE_STATUSES}
    for row in rows:
        counts[row["review_status"]] = row["n"]
        counts["all"] += row["n"]
    counts["mine"] = run_list_for(user=user).filter(status=JudgmentRun.Status.DONE, review__assigned_to=user,
                                                    review__status=Review.Status.PENDING).count()
    return counts


def review_run_get_for(*, user, run_pk: int) -> JudgmentRun:
    return get_object_or_404(run_list_for(user=user).filter(status=JudgmentRun.Status.DONE)
                             .select_related("case", "case__team", "requested_by"), pk=run_pk)


def review_results(review: Review) -> list[DefendantResult]:
    """Every defendant's result of the review's run, by position."""
    return list(review.run.results.order_by("position"))


def result_at(results: list[DefendantResult], position: int | None) -> DefendantResult:
    """The result at ``position`` among ``results`` (review_results); 404 when there is none."""
    found = next((r for r in results if r.position == position), None)
    if found is None:
        raise Http404("No DefendantResult matches the given query.")
    return found


def review_items_by_result(review: Review) -> dict[int, dict[tuple[str, str], ReviewItem]]:
    out: dict[int, dict[tuple[str, str], ReviewItem]] = {}
    for item in ReviewItem.objects.filter(review=review, version=review.version).select_related("actor"):
        out.setdefault(item.result_id, {})[(item.target, item.ref)] = item
    return out


def review_progress(review: Review, results, *, items: dict | None = None, bundles: dict | None = None) -> dict:
    """How many reviewable items (evidence items and checklist verdicts) have been accepted or overridden.
    ``items``: ``review_items_by_result(review)`` when the caller has read it already; ``bundles``: result
    id → its bundle read already (Bundle.from_dict), for every one of ``results``."""
    decided = review_items_by_result(review) if items is None else items
    total = done = 0
    for r in results:
        refs = reviewable_refs(bundles[r.pk] if bundles is not None else r.bundle or {})
        total += len(refs)
        done += sum(1 for ref in refs if ref in decided.get(r.pk, {}))
    return {"total": total, "done": done}


def reviewable_refs(stored: Bundle | dict) -> list[tuple[str, str]]:
    """The evidence items and checklist verdicts a reviewer can accept or override, in page order.
    ``stored``: the bundle as stored, or read already (Bundle.from_dict)."""
    bundle = Bundle.of(stored)
    refs: list[tuple[str, str]] = []
    for e in bundle.judgment.evidence if bundle.judgment else []:
        if e.kind in ("article", "precedent", "interpretation"):
            refs.append((e.kind, str(e.pk)))
    for a in bundle.audit.articles if bundle.audit else []:
        for i in a.items:
            refs.append(("item", f"{a.article_pk}:{i.item_pk}"))
    return list(dict.fromkeys(refs))


# --- the reviewed outcome, for the pages and the API outside the review app -------------------


def _decision_of(review: Review, decisions: list[Decision]) -> Decision | None:
    """The decision that stands for the review's current state: its version's valid decision."""
    if review.status == Review.Status.PENDING:
        return None
    return next((d for d in decisions if d.version == review.version and d.valid), None)


def review_outcomes(run_ids) -> dict[int, dict]:
    """Run id → what the review made of it: status, the standing decision, and per result (by id)
    the reviewed charges, articles and term when the reviewer's overrides changed the outcome.

    Runs never opened for review are absent. The reviewed outcome of a result is the what-if of the
    decided version (the Adjudicator on the evidence as the reviewer changed it); without overrides
    the reviewed outcome is the run's own (``changed`` False).
    """
    from apps.cases.evidence import term_text

    reviews = {r.run_id: r for r in Review.objects.filter(run_id__in=list(run_ids)).select_related("assigned_to")}
    if not reviews:
        return {}
    decisions: dict[int, list[Decision]] = {}
    # The snapshot an approval is bound to can be large and is not shown here.
    for d in Decision.objects.filter(review__in=reviews.values()).defer("snapshot").select_related("reviewer") \
            .order_by("-decided_at"):
        decisions.setdefault(d.review_id, []).append(d)
    out: dict[int, dict] = {}
    wanted: dict[int, int] = {}  # review id -> version whose what-ifs count
    for run_id, review in reviews.items():
        decision = _decision_of(review, decisions.get(review.pk, []))
        out[run_id] = {"review": review, "status": review.status, "status_label": review.get_status_display(),
                       "decision": decision, "results": {}}
        if decision is not None:
            wanted[review.pk] = decision.version
    by_review = {r.pk: r.run_id for r in reviews.values()}
    whatifs = WhatIf.objects.filter(review_id__in=wanted).exclude(bundle__isnull=True) \
        .values_list("review_id", "version", "result_id", "bundle__judgment")
    for review_id, version, result_id, judgment in whatifs:
        if version != wanted.get(review_id):
            continue
        judgment = judgment or {}
        term = judgment.get("term")
        out[by_review[review_id]]["results"][result_id] = {
            "changed": True, "status": judgment.get("status", ""),
            "status_label": RESULT_STATUS_LABELS.get(judgment.get("status", ""), judgment.get("status", "")),
            "charges": judgment.get("charges") or [],
            "article_keys": judgment.get("article_keys") or [], "term": term, "term_text": term_text(term)}
    overrides = ReviewItem.objects.filter(review_id__in=wanted, action=ReviewItem.Action.OVERRIDE) \
        .values_list("review_id", "version", "result_id")
    for review_id, version, result_id in overrides:
        if version == wanted.get(review_id):
            row = out[by_review[review_id]]["results"].setdefault(result_id, {"changed": False})
            row["overrides"] = row.get("overrides", 0) + 1
    return out
