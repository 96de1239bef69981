"""Reads for the cases app. Every query starts from the caller's teams.

An object of another team is a 404, exactly like one that does not exist,
so its existence is never revealed (never a 403).
"""

from __future__ import annotations

import datetime as dt
from collections import OrderedDict

from django.db.models import CharField, Exists, F, Func, OuterRef, Q, QuerySet, Subquery, Value
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext_lazy

from apps.accounts.models import User
from apps.accounts.selectors import team_list_for
from apps.cases.evidence import term_label
from apps.cases.models import TERM_KIND, Case, CaseUpload, DefendantResult, JudgmentRun, RunEvent

# --- cases, runs, uploads --------------------------------------------------------------


def case_list_for(*, user: User) -> QuerySet[Case]:
    return Case.objects.filter(team__in=team_list_for(user=user))


def case_get_for(*, user: User, pk: int) -> Case:
    return get_object_or_404(case_list_for(user=user).select_related("team", "upload", "created_by"), pk=pk)


def run_list_for(*, user: User) -> QuerySet[JudgmentRun]:
    return JudgmentRun.objects.filter(case__team__in=team_list_for(user=user))


def run_get_for(*, user: User, pk: int) -> JudgmentRun:
    return get_object_or_404(run_list_for(user=user).select_related("case", "case__team", "requested_by"), pk=pk)


def run_bundle_etag(*, run: JudgmentRun, position: int | None = None) -> str:
    """A strong validator of a run's bundle download: a digest of the run's state and of each
    bundle's text, computed in the database (the bundles themselves are not read). It changes
    with anything the download contains (a retention purge rewrites the bundles, too)."""
    import hashlib

    results = run.results.all() if position is None else run.results.filter(position=position)
    digests = results.order_by("position").annotate(
        digest=Func(F("bundle"), function="md5", template="%(function)s(%(expressions)s::text)", output_field=CharField())
    ).values_list("position", "digest")
    state = repr((run.pk, run.status, run.case_version, run.versions, position, list(digests)))
    return '"' + hashlib.sha256(state.encode()).hexdigest()[:32] + '"'


def result_get_for(*, user: User, run_pk: int, position: int) -> DefendantResult:
    return get_object_or_404(DefendantResult.objects.filter(run__in=run_list_for(user=user))
                             .select_related("run", "run__case", "run__case__team"), run_id=run_pk, position=position)


def upload_get_for(*, user: User, pk: int) -> CaseUpload:
    return get_object_or_404(CaseUpload.objects.filter(team__in=team_list_for(user=user)).select_related("team"), pk=pk)


CASE_STATUS_NONE = "none"  # filter value: cases that were never run


def case_search(*, user: User, q: str = "", status: str = "", charge: str = "", team: int | None = None,
                date_from: dt.date | None = None, date_to: dt.date | None = None) -> QuerySet[Case]:
    """The caller's cases, newest first, with the latest run's id and status annotated.

    ``q`` matches the title, the facts or a defendant's name; ``status`` is the
    latest run's status (or "none"); ``charge`` one of the latest run's charges.
    """
    latest = JudgmentRun.objects.filter(case=OuterRef("pk")).order_by("-created_at", "-pk")
    cases = case_list_for(user=user).select_related("team").annotate(
        latest_run_id=Subquery(latest.values("pk")[:1]),
        latest_status=Subquery(latest.values("status")[:1]),
    )
    q = (q or "").strip()
    if q:
        names = Func(F("defendants"), Value(" "), function="array_to_string", output_field=CharField())
        cases = cases.annotate(defendant_names=names).filter(
            Q(title__icontains=q) | Q(facts__icontains=q) | Q(defendant_names__icontains=q))
    if status == CASE_STATUS_NONE:
        cases = cases.filter(latest_run_id__isnull=True)
    elif status:
        cases = cases.filter(latest_status=status)
    if charge:
        charge = charge.strip()
        cases = cases.filter(Exists(DefendantResult.objects.filter(run_id=OuterRef("latest_run_id"),
                                                                   charges__contains=[charge])))
    if team:
        cases = cases.filter(team_id=team)
    if date_from:
        cases = cases.filter(offence_date__gte=date_from)
    if date_to:
        cases = cases.filter(offence_date__lte=date_to)
    return cases.order_by("-created_at", "-pk")


def _latest_runs(case_ids: list[int]) -> dict[int, int]:
    """Run id → case id, for the latest run of each case."""
    return dict(JudgmentRun.objects.filter(case_id__in=case_ids).order_by("case_id", "-created_at", "-pk")
                .distinct("case_id").values_list("pk", "case_id"))


def latest_result_charges(case_ids: list[int]) -> dict[int, dict[int, list[str]]]:
    """Case id → {result id: charges} of its latest run, in defendant order."""
    latest = _latest_runs(case_ids)
    out: dict[int, dict[int, list[str]]] = {}
    for run_id, result_id, charges in DefendantResult.objects.filter(run_id__in=latest) \
            .order_by("run_id", "position").values_list("run_id", "pk", "charges"):
        out.setdefault(latest[run_id], {})[result_id] = list(charges)
    return out


def latest_result_terms(case_ids: list[int]) -> dict[int, dict[int, tuple[str, str]]]:
    """Case id → {result id: (defendant, term as a judgment writes it)} of its latest run's judged results."""
    latest = _latest_runs(case_ids)
    out: dict[int, dict[int, tuple[str, str]]] = {}
    rows = DefendantResult.objects.filter(run_id__in=latest).order_by("run_id", "position") \
        .values_list("run_id", "pk", "defendant", "status", "term_months", "life", "death", TERM_KIND)
    for run_id, result_id, defendant, status, months, life, death, kind in rows:
        if status == "judged":
            out.setdefault(latest[run_id], {})[result_id] = (defendant, term_label(months, life, death, kind))
    return out


def charges_union(lists) -> list[str]:
    names: list[str] = []
    for charges in lists:
        names.extend(c for c in charges if c not in names)
    return names


def latest_charges(case_ids: list[int]) -> dict[int, list[str]]:
    """Case id → the charges of its latest run (over its defendants, first seen first)."""
    return {case_id: charges_union(results.values()) for case_id, results in latest_result_charges(case_ids).items()}


# --- run progress -------------------------------------------------------------------------

STAGES = ("focus", "features", "prejudge", "researcher", "auditor", "adjudicator")
STAGE_LABELS = {
    "focus": gettext_lazy("Focus"),
    "features": gettext_lazy("Features"),
    "prejudge": gettext_lazy("Pre-judged charges"),
    "researcher": gettext_lazy("Researcher"),
    "auditor": gettext_lazy("Auditor"),
    "adjudicator": gettext_lazy("Adjudicator"),
}


def run_progress(*, run: JudgmentRun) -> list[dict]:
    """Per defendant of the run: the stages reached in the current attempt and the Auditor's count."""
    rows = OrderedDict((name, {"defendant": name, "stage": "", "stages": [], "articles": [], "done": 0, "total": 0,
                               "finished": False, "planner_steps": 0}) for name in run.defendants)
    events = RunEvent.objects.filter(run=run, attempt__number=run.attempt_count).order_by("pk")
    order = list(rows)
    for event in events:
        row = rows.get(event.defendant)
        if row is None:
            continue
        if event.kind == "stage":
            row["stage"] = event.stage
            # Earlier defendants are complete once a later one starts.
            for name in order[: order.index(event.defendant)]:
                rows[name]["finished"] = True
        elif event.kind == "article":
            row["articles"].append({"label": event.detail.get("article", ""),
                                    "passed": bool(event.detail.get("passed"))})
            row["done"] = int(event.detail.get("done") or 0)
            row["total"] = int(event.detail.get("total") or 0)
        elif event.kind == "step":  # the agentic planner's steps, reported during the researcher stage
            row["planner_steps"] += 1
    if run.status == JudgmentRun.Status.DONE:
        for row in rows.values():
            row["finished"] = True
    for row in rows.values():
        reached = STAGES.index(row["stage"]) if row["stage"] in STAGES else -1
        row["stages"] = [{"name": s, "label": STAGE_LABELS[s],
                          "state": "done" if i < reached or (row["finished"] and i <= reached)
                          else "current" if i == reached else "todo"}
                         for i, s in enumerate(STAGES)]
        row["passed"] = sum(1 for a in row["articles"] if a["passed"])
    return list(rows.values())
