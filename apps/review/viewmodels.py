"""What the review page shows: the evidence viewer with a control per evidence item and
checklist verdict, the what-if beside the original, the decision history."""

from __future__ import annotations

from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.cases.evidence import evidence_view, outcome_view
from apps.review.models import Review, ReviewItem, WhatIf
from apps.review.selectors import review_items_by_result, review_progress
from apps.review.services.holds import hold_active
from apps.review.services.reviews import ItemChange, approval_current, review_coverage
from worker.agents.types import Bundle

# What an override sets, in words, per target and value.
VALUE_LABELS = {
    ("item", True): gettext_lazy("satisfied"), ("item", False): gettext_lazy("not shown"),
    ("article", True): gettext_lazy("applies"), ("article", False): gettext_lazy("does not apply"),
    ("precedent", True): gettext_lazy("kept as evidence"), ("precedent", False): gettext_lazy("excluded"),
    ("interpretation", True): gettext_lazy("kept as evidence"), ("interpretation", False): gettext_lazy("excluded"),
}


def value_label(target: str, value: bool | None) -> str:
    return str(VALUE_LABELS.get((target, bool(value)), ""))


def describe(ev: dict, target: str, ref: str) -> str:
    """A reviewer-readable name for an override's target, from the evidence context ``ev``."""
    if target == "item":
        article_pk, _sep, item_pk = ref.partition(":")
        for a in ev.get("articles") or []:
            if str(a["article_pk"]) == article_pk:
                question = next((i.get("question") for i in a["items"] if str(i.get("item_pk")) == item_pk), "")
                return f"{a['label']} · {question}"
    elif target == "article":
        label = next((a["label"] for a in ev.get("articles") or [] if str(a["article_pk"]) == ref), ref)
        return f"{_('article')} {label}"
    elif target == "precedent":
        label = next((p["ext_id"] for p in ev.get("precedents") or [] if str(p["pk"]) == ref), ref)
        return f"{_('precedent')} {label}"
    return f"{_('interpretation')} #{ref}"


def _control(target: str, ref: str, anchor: str, current: bool, items: dict) -> dict:
    """One accept/override control; ``current`` is what the run decided (the override offers the opposite)."""
    item: ReviewItem | None = items.get((target, ref))
    return {
        "target": target, "ref": ref, "anchor": anchor, "item": item,
        "dom_id": f"rc-{anchor}-{target}-{ref.replace(':', '-')}",
        "state": item.action if item else "",
        "value_label": value_label(target, item.value) if item and item.action == "override" else "",
        "offer": not current, "offer_label": value_label(target, not current),
    }


def annotate(ev: dict, items: dict) -> dict:
    """Attach a review control to every evidence item, article and checklist verdict of ``ev``."""
    by_key = {a["key"]: a for a in ev.get("articles") or []}
    for e in (ev.get("judgment") or {}).get("evidence") or []:
        kind = e.get("kind")
        if kind == "checklist":
            article = by_key.get(e.get("ref"))
            if article:
                e["review"] = _control("item", f"{article['article_pk']}:{e['pk']}", e["anchor"], True, items)
        elif kind in ("article", "precedent", "interpretation"):
            e["review"] = _control(kind, str(e["pk"]), e["anchor"], True, items)
    for p in ev.get("precedents") or []:
        p["review"] = _control("precedent", str(p["pk"]), p["anchor"], True, items)
    for a in ev.get("articles") or []:
        a["review"] = _control("article", str(a["article_pk"]), a["anchor"], bool(a.get("passed")), items)
        for i in a.get("items") or []:
            i["review"] = _control("item", f"{a['article_pk']}:{i['item_pk']}", i["anchor"], bool(i.get("satisfied")),
                                   items)
    return ev


def _outcome(ev: dict) -> dict:
    j = ev.get("judgment") or {}
    return {"status": ev.get("status"), "status_label": ev.get("status_label"), "ok": ev.get("ok"),
            "message": ev.get("message"), "charges": j.get("charges") or [], "articles": j.get("articles") or [],
            "scores": ev.get("model_scores") or {},
            "term": (j.get("term") or {}).get("label") if j.get("term") else "", "reasoning": j.get("reasoning") or [],
            "evidence": j.get("evidence") or []}


def _rv(review: Review, user, result) -> dict:
    """What every control and form of the page needs: the shown defendant, the review version, editable."""
    editable = review.status == Review.Status.PENDING and review.run.requested_by_id != user.pk
    return {"position": result.position if result else 0, "version": review.version, "editable": editable,
            "result_pk": result.pk if result else None,
            # Every open control posts here (reversed once, not twice per control).
            "item_set_url": reverse("review:item_set", args=[review.run_id])}


def _review_parts(*, review: Review, user, position: int, results: list | None = None,
                  change: ItemChange | None = None) -> dict:
    """What the page and the htmx answers of its item actions share: the defendants, the shown one's
    evidence (the cached view-model, evidence_view) with a control per item, the what-if beside the
    run's outcome, the progress and the coverage. No evidence view-model is built for the what-if: its
    outcome comes from its bundle alone (outcome_view). ``results``: the run's results by position
    (review_results) when the caller has read them; ``change``: the item action just made on the shown
    defendant, whose what-if, when it computed one, is shown as it is (not read back). Each result's
    bundle is read (Bundle.from_dict) once, for the progress and the coverage."""
    run = review.run
    results = list(run.results.order_by("position")) if results is None else results
    result = next((r for r in results if r.position == position), results[0] if results else None)
    by_result = review_items_by_result(review)
    items = by_result.get(result.pk, {}) if result else {}
    ev = annotate(evidence_view(result.bundle), items) if result else {}
    if change is not None and change.whatif_computed and result is not None and change.item.result_id == result.pk:
        whatif = change.whatif
    else:
        whatif = WhatIf.objects.filter(review=review, version=review.version, result=result).first() if result else None
    bundles = {r.pk: Bundle.from_dict(r.bundle or {}) for r in results}
    overrides = [i for i in items.values() if i.action == ReviewItem.Action.OVERRIDE]
    return {
        "run": run, "review": review, "results": results, "result": result,
        "ev": ev, "whatif": whatif, "original": _outcome(ev) if ev else None,
        "changed": outcome_view(whatif.bundle) if whatif and whatif.bundle else None,
        "overrides": [{"item": i, "what": describe(ev, i.target, i.ref), "value_label": value_label(i.target, i.value)}
                      for i in overrides],
        "progress": review_progress(review, results, items=by_result, bundles=bundles),
        "coverage": review_coverage(review, user, results, items=[i for r in by_result.values() for i in r.values()],
                                    bundles=bundles),
        "rv": _rv(review, user, result),
    }


def review_page_context(*, review: Review, user, position: int) -> dict:
    parts = _review_parts(review=review, user=user, position=position)
    run, result = parts["run"], parts["result"]
    decisions = list(review.decisions.select_related("reviewer").order_by("-decided_at", "-pk"))
    is_submitter = run.requested_by_id == user.pk
    return {
        **parts, "bundle": result.bundle if result else {}, "decisions": decisions,
        "approval": approval_current(review, decisions), "is_submitter": is_submitter,
        "can_edit": review.status == Review.Status.PENDING and not is_submitter, "hold": hold_active(run.case),
    }


def review_item_context(*, review: Review, user, position: int, target: str, ref: str, results: list | None = None,
                        change: ItemChange | None = None) -> dict:
    """The htmx answer to an accept, override or undo: the item's controls, the what-if, the coverage
    (templates/review/_item_response.html), not the page. ``results``, ``change``: see _review_parts."""
    context = _review_parts(review=review, user=user, position=position, results=results, change=change)
    context["controls"] = controls_for(context["ev"], target, ref)
    return context


def review_part_context(*, review: Review, user, position: int) -> dict:
    """A part of the page loaded when it comes into view (the rejected articles, the graph, the analysis
    details: templates/cases/_evidence.html with ``lazy``), with the controls of the items it shows."""
    run = review.run
    result = run.results.filter(position=position).first() or run.results.order_by("position").first()
    items = review_items_by_result(review).get(result.pk, {}) if result else {}
    ev = annotate(evidence_view(result.bundle), items) if result else {}
    return {"run": run, "review": review, "result": result, "ev": ev, "rv": _rv(review, user, result)}


def coverage_context(*, review: Review, user, result) -> dict:
    """The coverage panel alone (templates/review/_coverage.html)."""
    results = list(review.run.results.order_by("position"))
    return {"run": review.run, "coverage": review_coverage(review, user, results), "rv": _rv(review, user, result)}


def controls_for(ev: dict, target: str, ref: str) -> list[dict]:
    """Every control on the page for one (target, ref): an article or a checklist verdict shows in
    the evidence list and in its article's card; an htmx action refreshes all of them."""
    found = []
    for e in (ev.get("judgment") or {}).get("evidence") or []:
        if e.get("review") and (e["review"]["target"], e["review"]["ref"]) == (target, ref):
            found.append(e["review"])
    for p in ev.get("precedents") or []:
        if p.get("review") and (p["review"]["target"], p["review"]["ref"]) == (target, ref):
            found.append(p["review"])
    for a in ev.get("articles") or []:
        if (a["review"]["target"], a["review"]["ref"]) == (target, ref):
            found.append(a["review"])
        for i in a.get("items") or []:
            if (i["review"]["target"], i["review"]["ref"]) == (target, ref):
                found.append(i["review"])
    return found
