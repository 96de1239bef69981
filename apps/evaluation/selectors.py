"""Reads for the evaluation dashboard."""

from collections import Counter

from django.utils.translation import gettext as _

from apps.evaluation import metrics
from apps.evaluation.models import EvaluationCase, EvaluationRun

# Metrics where a lower value is better (a rise is a regression).
LOWER_IS_BETTER = {"term.mae", "retrieval.error_rate", "cost.llm_calls.mean", "cost.tokens.mean", "cost.seconds.mean"}
REGRESSION_TOLERANCE = 0.005


def reference_run() -> EvaluationRun | None:
    return EvaluationRun.objects.filter(is_reference=True).first()


def comparison(runs: list[EvaluationRun]) -> list[dict]:
    """Rows of metric values per run, each marked as a regression against the first run when worse."""
    rows = []
    for row in metrics.compare({str(r.pk): r.metrics for r in runs}):
        cells = []
        for i, run in enumerate(runs):
            value = row.get(str(run.pk))
            delta = row.get(f"delta_{run.pk}") if i else None
            worse = delta is not None and (delta > REGRESSION_TOLERANCE if row["metric"] in LOWER_IS_BETTER
                                           else delta < -REGRESSION_TOLERANCE)
            cells.append({"value": value, "delta": delta, "regression": worse})
        rows.append({"metric": row["metric"], "cells": cells})
    return rows


def category_rows(run: EvaluationRun) -> list[dict]:
    return [{"title": title, **values} for title, values in sorted((run.metrics.get("categories") or {}).items())]


def confusion(run: EvaluationRun, top: int = 10) -> dict:
    """Gold × predicted counts between the most frequent gold charges (single-charge entries)."""
    pairs = []
    for gold, prediction in run.cases.values_list("gold", "prediction"):
        if len(gold["charges"]) == 1:
            pred = metrics.map_predicted(prediction["charges"], gold["charges"])
            pairs.append((metrics.normalize_charge(gold["charges"][0]), next(iter(sorted(pred)), "—") if len(pred) == 1
                          else ("—" if not pred else "(several)")))
    frequent = [c for c, _ in Counter(g for g, _ in pairs).most_common(top)]
    columns = frequent + ["other"]
    counts = Counter((g, p if p in frequent else "other") for g, p in pairs if g in frequent)
    return {"labels": frequent, "columns": columns,
            "rows": [{"gold": g, "cells": [{"n": counts.get((g, c), 0), "diagonal": c == g} for c in columns]}
                     for g in frequent]}


def cases_page_queryset(run: EvaluationRun, outcome: str = ""):
    qs = run.cases.only("case_id", "position", "gold", "prediction", "status", "charges_correct", "seconds")
    if outcome == "correct":
        qs = qs.filter(charges_correct=True)
    elif outcome == "wrong":
        qs = qs.filter(charges_correct=False)
    elif outcome:
        qs = qs.filter(status=outcome)
    return qs


def status_label(status: str) -> str:
    """A record's status in the page language: a defendant's result status, or "failed" (the run raised)."""
    from apps.cases.models import RESULT_STATUS_LABELS

    return str(RESULT_STATUS_LABELS.get(status, _("failed") if status == "failed" else status))


def case_get(run: EvaluationRun, case_id: str) -> EvaluationCase | None:
    return run.cases.filter(case_id=case_id).first()


def training_overlap(run: EvaluationRun) -> dict:
    """How many of the run's cases are in the corpus the models were trained on and precedents are
    retrieved from (the same id, or the same facts): scores on them overstate accuracy on new cases."""
    from django.db.models import Exists, F, Func, OuterRef, Q, TextField, Value

    from apps.corpus.models import Precedent

    fact_hash = Func(Func(Func(F("fact"), Value("UTF8"), function="convert_to"), function="sha256"), Value("hex"),
                     function="encode", output_field=TextField())
    same = Precedent.objects.filter(Q(ext_id=OuterRef("case_id")) | Q(fact_sha256=OuterRef("fact_hash")))
    n = run.cases.annotate(fact_hash=fact_hash).filter(Exists(same)).count()
    total = run.cases.count()
    return {"n": n, "total": total, "all": bool(total) and n == total}
