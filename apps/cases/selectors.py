"""Reads for the cases app. Every query starts from the caller's teams.

An object of another team is a 404, exactly like one that does not exist,
so its existence is never revealed (never a 403).
"""

from __future__ import annotations

import datetime as dt
import re
import statistics
from collections import OrderedDict

from django.db.models import CharField, Exists, F, Func, OuterRef, Q, QuerySet, Subquery, Value
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import get_language, gettext_lazy

from apps.accounts.models import User
from apps.accounts.selectors import team_list_for
from apps.cases.models import RESULT_STATUS_LABELS, Case, CaseUpload, DefendantResult, JudgmentRun, RunEvent
from apps.cases.reasons import reason_render
from apps.graph.labels import NODE_COLOURS, legend, relation_label
from apps.registry.selectors import model_scores
from worker.agents.wording import term_of, term_wording

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
        .values_list("run_id", "pk", "defendant", "status", "term_months", "life", "death")
    for run_id, result_id, defendant, status, months, life, death in rows:
        if status == "judged":
            out.setdefault(latest[run_id], {})[result_id] = (defendant, term_label(months, life, death))
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


# --- evidence ----------------------------------------------------------------------------------

PATH_LABELS = {
    "sem": gettext_lazy("R_sem — similar cases (ontology embedding)"),
    "com": gettext_lazy("R_com — best community, then its closest cases"),
    "chg": gettext_lazy("R_chg — pre-judged charges and their neighbourhood"),
    "art": gettext_lazy("R_art — LexPath article retrieval (BM25 + dense)"),
    "flat": gettext_lazy("flat retrieval (naive RAG)"),
    "case": gettext_lazy("articles cited by the retrieved cases"),
    "plan-statutes": gettext_lazy("planner — statute searches (BM25 + dense, intent-reranked)"),
    "plan-interpretations": gettext_lazy("planner — interpretation searches (BM25 + interpretations of dense articles)"),
    "plan-precedents": gettext_lazy("planner — precedent searches (ontology similarity × court authority)"),
}
# The retrieval paths in a reader's words, for the article cards ("found by").
PATH_SHORT = {
    "sem": gettext_lazy("similar cases"), "com": gettext_lazy("case community"), "chg": gettext_lazy("charge"),
    "art": gettext_lazy("statute search"), "flat": gettext_lazy("flat search"), "case": gettext_lazy("cited by similar cases"),
    "plan-statutes": gettext_lazy("statute search"), "plan-interpretations": gettext_lazy("interpretation search"),
    "plan-precedents": gettext_lazy("precedent search"),
}
PATH_ORDER = ("sem", "com", "chg", "art", "flat", "plan-statutes", "plan-interpretations", "plan-precedents")
ACTION_LABELS = {
    "search_statutes": gettext_lazy("search statutes"),
    "search_interpretations": gettext_lazy("search interpretations"),
    "search_precedents": gettext_lazy("search precedents"),
    "stop": gettext_lazy("stop"),
}
STEP_STATUS_LABELS = {
    "ok": gettext_lazy("run"),
    "stop": gettext_lazy("evidence sufficient"),
    "repeated": gettext_lazy("refused: repeated search"),
    "rejected": gettext_lazy("refused"),
    "cap_steps": gettext_lazy("step cap reached"),
    "cap_calls": gettext_lazy("planner call cap reached"),
    "budget": gettext_lazy("LLM budget spent"),
}
KIND_LABELS = {
    "case": gettext_lazy("case"),
    "article": gettext_lazy("article"),
    "community": gettext_lazy("community"),
    "charge": gettext_lazy("charge"),
    "checklist": gettext_lazy("checklist item"),
    "interpretation": gettext_lazy("interpretation"),
    "precedent": gettext_lazy("precedent"),
}
_CITATION = re.compile(r"\[(\d+)\]")
_SPAN_CONTEXT = 24


def _wording_language() -> str:
    return "zh" if (get_language() or "").startswith("zh") else "en"


def term_label(months: int | None, life: bool = False, death: bool = False) -> str:
    """The term as a judgment writes it (有期徒刑一年五个月, 拘役三个月, 无期徒刑…) in the page language."""
    text = term_wording(months, life=life, death=death, lang=_wording_language())
    return text or _("no term")


def term_text(term: dict | None) -> str:
    """``term_label`` of a term stored as bundles and results store it ({months, life, death, …})."""
    if not term:
        return ""
    return term_of(term, lang=_wording_language()) or _("no term")


def _term_of(term: dict | None) -> dict | None:
    if not term:
        return None
    months = int(term.get("months") or 0)
    return {"months": months, "life": bool(term.get("life")), "death": bool(term.get("death")),
            "label": term_label(months, bool(term.get("life")), bool(term.get("death")))}


class _Lookup:
    """Labels for the primary keys a bundle refers to, fetched in a few queries."""

    def __init__(self, bundle: dict):
        from apps.corpus.models import Article, ArticleVersion, Interpretation, Precedent, PrecedentOutcome
        from apps.graph.models import Community

        research = bundle.get("research") or {}
        audit = bundle.get("audit") or {}
        hits = research.get("hits") or []
        case_pks = {int(h["pk"]) for h in hits if h.get("kind") == "case"}
        case_pks |= {int(pk) for pk in audit.get("verified_cases") or []}
        case_pks |= {int(p["pk"]) for p in audit.get("pruned") or [] if p.get("kind") == "case"}
        article_pks = {int(h["pk"]) for h in hits if h.get("kind") == "article"}
        article_pks |= {int(a["article_pk"]) for a in audit.get("articles") or []}
        article_pks |= {int(pk) for pk in research.get("candidate_articles") or []}
        article_pks |= {int(p["pk"]) for p in audit.get("pruned") or [] if p.get("kind") == "article"}
        community_pks = {int(h["pk"]) for h in hits if h.get("kind") == "community"}
        version_pks = {int(a["version_pk"]) for a in audit.get("articles") or [] if a.get("version_pk")}
        interp_pks = {int(pk) for a in audit.get("articles") or [] for pk in a.get("interpretations") or []}

        self.cases = {p.pk: p for p in Precedent.objects.filter(pk__in=case_pks).only("pk", "ext_id", "court_level")}
        self.outcomes: dict[int, list] = {}
        for o in PrecedentOutcome.objects.filter(precedent_id__in=case_pks).prefetch_related("charges", "articles") \
                .order_by("precedent_id", "position"):
            self.outcomes.setdefault(o.precedent_id, []).append(o)
        self.articles = {a.pk: a for a in Article.objects.filter(pk__in=article_pks).select_related("law")}
        self.communities = {c.pk: c for c in Community.objects.filter(pk__in=community_pks)}
        self.versions = {v.pk: v for v in ArticleVersion.objects.filter(pk__in=version_pks)}
        self.interpretations = {i.pk: i for i in Interpretation.objects.filter(pk__in=interp_pks)}

    def case_label(self, pk) -> str:
        case = self.cases.get(int(pk))
        return case.ext_id if case else f"#{pk}"

    def case_charges(self, pk) -> list[str]:
        names: list[str] = []
        for o in self.outcomes.get(int(pk), []):
            names.extend(c.name for c in o.charges.all() if c.name not in names)
        return names

    def article_label(self, pk) -> str:
        article = self.articles.get(int(pk))
        return article.label if article else f"#{pk}"


def _hit_row(hit: dict, look: _Lookup) -> dict:
    kind, pk = hit.get("kind"), hit.get("pk")
    row = {"kind": kind, "kind_label": KIND_LABELS.get(kind, kind), "pk": pk, "score": hit.get("score"),
           "label": hit.get("label") or "", "detail": "", "explore": ""}
    if kind == "case":
        row["label"] = look.case_label(pk)
        row["detail"] = "、".join(look.case_charges(pk))
        row["explore"] = row["label"]
    elif kind == "article":
        row["label"] = look.article_label(pk)
        row["explore"] = row["label"]
    elif kind == "community":
        community = look.communities.get(int(pk))
        row["label"] = f"C{community.number}" if community else f"#{pk}"
        row["detail"] = (community.summary[:160] if community else "")
        row["explore"] = row["label"]
    elif kind == "charge":
        row["label"] = str(pk)
        row["explore"] = str(pk)
    return row


def _severity(term: dict | None, sentencing: dict) -> dict:
    """The Punishment Severity Index of the predicted term, and the one the authoritative similar
    precedents point to (agentic mode), both also as months of unsuspended imprisonment."""
    from worker.agents.priors import psi, psi_months, sentence_of

    out: dict = {}
    sentence = sentence_of(term) if term else None
    if sentence is not None:
        value = psi(sentence)
        out["predicted"] = {"psi": round(value), "months": psi_months(value)}
    reference = sentencing.get("reference") or {}
    if reference.get("psi") is not None:
        out["reference"] = {"psi": round(reference["psi"]), "months": reference.get("months_equivalent"),
                            "n": len(reference.get("precedents") or [])}
    return out


def _planner_steps(steps: list[dict], look: _Lookup) -> list[dict]:
    """The agentic planner's steps as the evidence viewer lists them (empty in the fixed mode)."""
    rows = []
    for step in steps:
        results = [{**r, "kind_label": KIND_LABELS.get(r.get("kind"), r.get("kind")),
                    "label": look.case_label(r["pk"]) if r.get("kind") == "case" else r.get("label", "")}
                   for r in step.get("results") or []]
        state = step.get("state") or {}
        rows.append({"n": step.get("n"), "action": step.get("action", ""),
                     "action_label": ACTION_LABELS.get(step.get("action"), step.get("action", "")),
                     "query": step.get("query", ""), "reason": step.get("reason", ""), "status": step.get("status", ""),
                     "status_label": STEP_STATUS_LABELS.get(step.get("status"), step.get("status", "")),
                     "refused": step.get("refused", ""), "results": results, "new": step.get("new", 0),
                     "planner_calls": step.get("planner_calls", 0),
                     "charges": state.get("candidate_charges") or [],
                     "missing_articles": state.get("charges_without_article") or [],
                     "missing_precedents": state.get("charges_without_precedent") or []})
    return rows


def _span_parts(focus: str, item: dict) -> dict:
    span = item.get("span")
    if span and len(span) == 2 and 0 <= span[0] < span[1] <= len(focus):
        start, end = int(span[0]), int(span[1])
        return {"before": ("…" if start > _SPAN_CONTEXT else "") + focus[max(0, start - _SPAN_CONTEXT):start],
                "mark": focus[start:end],
                "after": focus[end:end + _SPAN_CONTEXT] + ("…" if end + _SPAN_CONTEXT < len(focus) else "")}
    if item.get("span_text"):
        return {"before": "", "mark": item["span_text"], "after": ""}
    return {}


def _evidence_target(e: dict) -> str:
    kind = e.get("kind")
    if kind == "article":
        return f"art-{e.get('ref')}"
    if kind == "checklist":
        return f"item-{e.get('pk')}"
    if kind == "interpretation":
        return f"interp-{e.get('ref')}-{e.get('pk')}"
    if kind == "precedent":
        return f"prec-{e.get('pk')}"
    return ""


def _evidence_text(e: dict, items: dict) -> str:
    """A checklist item cited as evidence reads as its question and what shows it: the supporting
    sentence, else the verdict's reason in the page language (the bundle's text holds the free,
    English reasoning when there is no sentence)."""
    if e.get("kind") != "checklist":
        return e.get("text", "")
    item = items.get((e.get("ref"), e.get("pk")))
    if item is None:
        return e.get("text", "")
    return f"{item.get('question', '')}：{item.get('span_text') or item['why']['text']}"


def _reasoning_segments(text: str, numbers: set[int]) -> list[dict]:
    """The reasoning split into text and citation pieces; a citation links only if it resolves."""
    segments, last = [], 0
    for m in _CITATION.finditer(text or ""):
        if m.start() > last:
            segments.append({"text": text[last:m.start()], "n": None})
        n = int(m.group(1))
        segments.append({"text": m.group(0), "n": n if n in numbers else None, "unresolved": n not in numbers})
        last = m.end()
    if last < len(text or ""):
        segments.append({"text": text[last:], "n": None})
    return segments


def _precedent_terms(verified: list[int], look: _Lookup, predicted: dict | None) -> dict:
    rows = []
    for pk in verified:
        for o in look.outcomes.get(int(pk), []):
            if not o.term_known:
                continue
            rows.append({"pk": pk, "ext_id": look.case_label(pk), "defendant": o.defendant,
                         "months": o.term_months, "life": o.life, "death": o.death,
                         "label": term_label(o.term_months, o.life, o.death),
                         "charges": [c.name for c in o.charges.all()]})
    fixed = [r["months"] for r in rows if r["months"] is not None and not (r["life"] or r["death"])]
    scale = max(fixed + ([predicted["months"]] if predicted and not (predicted["life"] or predicted["death"]) else []),
                default=0) or 1
    for r in rows:
        r["width"] = 100 if (r["life"] or r["death"]) else round(100 * (r["months"] or 0) / scale)
    bar = None
    if predicted:
        fixed_term = not (predicted["life"] or predicted["death"])
        bar = dict(predicted, width=round(100 * predicted["months"] / scale) if fixed_term else 100)
    summary = {}
    if fixed:
        median = statistics.median(fixed)
        summary = {"n": len(fixed), "min": min(fixed), "median": int(median) if median == int(median) else median,
                   "max": max(fixed)}
    return {"rows": rows, "predicted": bar, "summary": summary}


def _graph_elements(defendant: str, articles: list[dict], judgment: dict | None, verified_cases: list[int],
                    look: _Lookup) -> dict:
    """The verified subgraph as Cytoscape elements: the defendant, verified articles, their charges,
    the interpretations cited as evidence and the verified precedents."""
    cited_interpretations = {int(e["pk"]) for e in (judgment or {}).get("evidence") or []
                             if e.get("kind") == "interpretation"}
    nodes: dict[str, dict] = {}
    edges: list[dict] = []

    explorer = reverse("graph:explorer")

    def node(node_id: str, caption: str, kind: str, anchor: str = ""):
        # A node with no part of this page to scroll to opens in the graph explorer.
        url = "" if anchor else f"{explorer}?{urlencode({'q': caption})}"
        nodes.setdefault(node_id, {"data": {"id": node_id, "caption": caption, "kind": kind, "anchor": anchor,
                                            "url": url, "colour": NODE_COLOURS.get(kind, "#5f6b7a")}})

    def edge(source: str, target: str, label: str):
        edges.append({"data": {"id": f"e{len(edges)}", "source": source, "target": target, "label": label,
                               "caption": relation_label(label)}})

    node("defendant", defendant or _("the case"), "Defendant", "judgment")
    verified = [a for a in articles if a["passed"]]
    for a in verified:
        a_id = f"a{a['article_pk']}"
        node(a_id, a["label"], "Article", a["anchor"])
        edge("defendant", a_id, "VERIFIED")
        for charge in a["charges"]:
            node(f"o:{charge}", charge, "Offence")
            edge(a_id, f"o:{charge}", "DEFINES")
        for interp in a["interpretations"]:
            if int(interp["pk"]) not in cited_interpretations:
                continue
            i_id = f"i{interp['pk']}"
            node(i_id, interp["short"], "Interpretation", interp["anchor"])
            edge(i_id, a_id, "INTERPRETS")
    for charge in (judgment or {}).get("charges") or []:
        node(f"o:{charge}", charge, "Offence")
        edge("defendant", f"o:{charge}", "CHARGED")
    verified_pks = {a["article_pk"] for a in verified}
    for pk in verified_cases:
        c_id = f"c{pk}"
        node(c_id, look.case_label(pk), "Case", f"prec-{pk}")
        for o in look.outcomes.get(int(pk), []):
            for article in o.articles.all():
                if article.pk in verified_pks:
                    edge(c_id, f"a{article.pk}", "CITES")
            for charge in o.charges.all():
                if f"o:{charge.name}" in nodes:
                    edge(c_id, f"o:{charge.name}", "CONVICTED_OF")
    # Several outcomes of one precedent may repeat an edge.
    unique, seen = [], set()
    for e in edges:
        key = (e["data"]["source"], e["data"]["target"], e["data"]["label"])
        if key not in seen:
            seen.add(key)
            unique.append(e)
    return {"nodes": list(nodes.values()), "edges": unique}


def evidence_context(bundle_dict: dict) -> dict:
    """Everything templates/cases/_evidence.html shows, computed from one Bundle.to_dict().

    Reusable by any page that has a bundle (the run page, the review app, the
    evaluation dashboard): ``{% include "cases/_evidence.html" with bundle=... ev=... %}``.
    """
    bundle = bundle_dict or {}
    look = _Lookup(bundle)
    research = bundle.get("research") or {}
    audit = bundle.get("audit") or {}
    judgment = bundle.get("judgment") or {}
    focus = research.get("focus") or ""

    groups: dict[str, list] = {}
    for hit in research.get("hits") or []:
        groups.setdefault(hit.get("path", "?"), []).append(_hit_row(hit, look))
    retrieval = [{"path": path, "label": PATH_LABELS.get(path, path), "hits": groups[path]}
                 for path in sorted(groups, key=lambda p: (PATH_ORDER.index(p) if p in PATH_ORDER else 99, p))]

    sources = {str(k): v for k, v in (research.get("article_sources") or {}).items()}
    articles = []
    for a in audit.get("articles") or []:
        key = a.get("key", "")
        version = look.versions.get(a.get("version_pk") or 0)
        article = look.articles.get(int(a["article_pk"]))
        interpretations = []
        for index, pk in enumerate(a.get("interpretations") or []):
            interp = look.interpretations.get(int(pk))
            texts = a.get("interpretation_texts") or []
            interpretations.append({
                "pk": pk, "anchor": f"interp-{key}-{pk}",
                "caption": f"{interp.source}{interp.para}" if interp else f"#{pk}",
                "short": (interp.para or interp.source[:12]) if interp else f"#{pk}",
                "text": texts[index] if index < len(texts)
                else (f"{interp.source}{interp.para}　{interp.text}" if interp else ""),
            })
        items = []
        for number, item in enumerate(a.get("items") or [], start=1):
            items.append({**item, "number": number, "anchor": f"item-{item.get('item_pk')}",
                          "fact": _span_parts(focus, item), "why": reason_render(item.get("why"), item.get("reasoning", ""))})
        articles.append({
            "article_pk": int(a["article_pk"]), "key": key, "label": a.get("label", ""), "anchor": f"art-{key}",
            "law": article.law.title if article else "", "charges": a.get("charges") or [],
            "in_force": a.get("in_force"), "text": a.get("text", ""),
            "version": {"pk": a.get("version_pk"), "valid_from": version.valid_from if version else None,
                        "valid_to": version.valid_to if version else None},
            "passed": bool(a.get("passed")), "score": a.get("score"), "prior": a.get("prior"),
            "reason": a.get("reason", ""), "why": reason_render(a.get("why"), a.get("reason", "")),
            "sources": [PATH_SHORT.get(src, src) for src in sources.get(str(a["article_pk"]), [])],
            "items": items, "satisfied": sum(1 for i in items if i.get("satisfied")),
            "interpretations": interpretations,
        })

    pruned = []
    for p in audit.get("pruned") or []:
        kind, pk = p.get("kind"), p.get("pk")
        label = look.case_label(pk) if kind == "case" else look.article_label(pk) if kind == "article" else str(pk)
        anchor = f"art-{look.articles[int(pk)].key}" if kind == "article" and int(pk) in look.articles else ""
        pruned.append({"kind": kind, "kind_label": KIND_LABELS.get(kind, kind), "pk": pk, "label": label,
                       "reason": p.get("reason", ""), "why": reason_render(p.get("why"), p.get("reason", "")),
                       "anchor": anchor})

    items_by_pk = {(a["key"], i.get("item_pk")): i for a in articles for i in a["items"]}
    evidence = [{**e, "text": _evidence_text(e, items_by_pk), "anchor": f"ev-{e['n']}", "target": _evidence_target(e),
                 "kind_label": KIND_LABELS.get(e.get("kind"), e.get("kind"))}
                for e in judgment.get("evidence") or []]
    numbers = {e["n"] for e in evidence}
    verified_cases = [int(pk) for pk in audit.get("verified_cases") or []]
    term = _term_of(judgment.get("term"))
    status = judgment.get("status", "")
    by_key = {a["key"]: a for a in articles}
    judged_articles = [{"key": k, "label": by_key[k]["label"] if k in by_key else k, "anchor": f"art-{k}"}
                       for k in judgment.get("article_keys") or []]

    graph = _graph_elements(bundle.get("defendant", ""), articles, judgment, verified_cases, look)
    costs = bundle.get("costs") or []
    totals = {"seconds": round(sum(c.get("seconds", 0) for c in costs), 4),
              "llm_calls": sum(c.get("llm_calls", 0) for c in costs),
              "prompt_tokens": sum(c.get("prompt_tokens", 0) for c in costs),
              "completion_tokens": sum(c.get("completion_tokens", 0) for c in costs)}

    return {
        "defendant": bundle.get("defendant", ""),
        "strategy": bundle.get("strategy", ""),
        "status": status,
        "status_label": RESULT_STATUS_LABELS.get(status, status),
        "ok": status == "judged",
        "message": judgment.get("message", ""),
        "focus": focus,
        "features": research.get("features") or {},
        "query_text": research.get("query_text", ""),
        "prejudged": [{"charge": c, "p": p} for c, p in research.get("prejudged") or []],
        "retrieval": retrieval,
        "articles": articles,
        # Verified articles first; the ones the Auditor rejected are folded away below them.
        "verified_articles": [a for a in articles if a["passed"]],
        "rejected_articles": [a for a in articles if not a["passed"]],
        "pruned": pruned,
        "judgment": {
            "charges": judgment.get("charges") or [], "articles": judged_articles, "term": term,
            "reasoning": _reasoning_segments(judgment.get("reasoning", ""), numbers),
            "citations": judgment.get("citations") or [], "evidence": evidence,
            "scores": judgment.get("scores") or {},
        },
        "precedents": [{"pk": pk, "ext_id": look.case_label(pk), "anchor": f"prec-{pk}",
                        "charges": look.case_charges(pk),
                        "court_level": look.cases[pk].get_court_level_display() if pk in look.cases else ""}
                       for pk in verified_cases],
        "terms": _precedent_terms(verified_cases, look, term),
        "severity": _severity(judgment.get("term"), research.get("sentencing") or {}),
        "planner": _planner_steps(research.get("steps") or [], look),
        "graph": graph,
        "graph_legend": legend(n["data"]["kind"] for n in graph["nodes"]),
        "costs": costs,
        "cost_totals": totals,
        "versions": bundle.get("versions") or {},
        "model_scores": model_scores(bundle.get("versions") or {}),
        "params": bundle.get("params") or {},
        "llm_records": len(bundle.get("llm_records") or []),
    }
