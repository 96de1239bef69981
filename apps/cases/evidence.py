"""The evidence viewer's view-model: a stored evidence bundle turned into what the run, review, memo
and evaluation pages show (rows, labels in the page language, the verified subgraph). No queries of
its own beyond the few lookups of the labels it shows; the reads of cases and runs are in
apps/cases/selectors.py."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
import statistics

from django.urls import reverse
from django.utils.functional import Promise
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import get_language, gettext_lazy

from apps.cases.models import RESULT_STATUS_LABELS
from apps.cases.reasons import judgment_render, reason_render
from apps.graph.labels import NODE_COLOURS, legend, relation_label
from apps.registry.selectors import model_scores
from worker.agents import reasons as codes
from worker.agents.charge_names import charges_of_name
from worker.agents.graph_types import Term
from worker.agents.models.sentencing import range_kind, serving_shown
from worker.agents.types import Audit, Bundle, Evidence, Hit, ItemVerdict, Judgment, PlanStep, Research
from worker.agents.wording import duration_en, duration_zh, interpretation_line, kind_named, term_of, term_wording

# --- evidence ----------------------------------------------------------------------------------

PATH_LABELS = {
    "sem": gettext_lazy("R_sem — similar cases (ontology embedding)"),
    "com": gettext_lazy("R_com — best community, then its closest cases"),
    "chg": gettext_lazy("R_chg — pre-judged charges and their neighbourhood"),
    "art": gettext_lazy("R_art — LexPath article retrieval (BM25 + dense)"),
    "flat": gettext_lazy("flat retrieval (naive RAG)"),
    "case": gettext_lazy("articles cited by the retrieved cases"),
    "unit": gettext_lazy("unit-crime provisions of the candidates (the facts show a unit crime)"),
    "definition": gettext_lazy("definitions of terms the candidates use (such as 毒品)"),
    "punishment": gettext_lazy("punishment provisions of the candidates' charges (such as 386 for 受贿罪)"),
    "plan-statutes": gettext_lazy("planner — statute searches (BM25 + dense, intent-reranked)"),
    "plan-interpretations": gettext_lazy("planner — interpretation searches (BM25 + interpretations of dense articles)"),
    "plan-precedents": gettext_lazy("planner — precedent searches (ontology similarity × court authority)"),
}
# The retrieval paths in a reader's words, for the article cards ("found by").
PATH_SHORT = {
    "sem": gettext_lazy("similar cases"), "com": gettext_lazy("case community"), "chg": gettext_lazy("charge"),
    "art": gettext_lazy("statute search"), "flat": gettext_lazy("flat search"), "case": gettext_lazy("cited by similar cases"),
    "unit": gettext_lazy("unit-crime provision"),
    "definition": gettext_lazy("definition of a term"),
    "punishment": gettext_lazy("punishment provision"),
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


def term_label(months: int | None, life: bool = False, death: bool = False, kind: str | None = None) -> str:
    """The term as a judgment writes it (有期徒刑一年五个月, 拘役三个月, 无期徒刑…) in the page language; ``kind``: the
    kind the law fixed (Term.kind), else by its length."""
    text = term_wording(months, life=life, death=death, kind=kind or None, lang=_wording_language())
    return text or _("no term")


def term_text(term: dict | None) -> str:
    """``term_label`` of a term stored as bundles and results store it ({months, life, death, …})."""
    if not term:
        return ""
    return term_of(term, lang=_wording_language()) or _("no term")


def _term_of(term: Term | None) -> dict | None:
    if term is None:
        return None
    months = int(term.months or 0)
    return {"months": months, "life": bool(term.life), "death": bool(term.death), "kind": term.kind,
            "label": term_label(months, bool(term.life), bool(term.death), term.kind)}


def _estimate_of(term: Term) -> dict:
    """An estimate on the way to the term (the term model's, the blend with the precedents) as ``_term_of`` gives
    it, worded as a length only: the kind (拘役, 有期徒刑) is the law's, fixed with the verified articles' range, and
    an estimate of 11 months for an article providing detention only is no "有期徒刑十一个月"."""
    out = _term_of(term)
    if not (term.life or term.death) and out["months"]:
        out["label"] = (duration_zh if _wording_language() == "zh" else duration_en)(out["months"])
    return out


def _term_basis(judgment: Judgment | None) -> dict:
    """The judgment's term basis (worker.agents.models.sentencing.term_basis) as the evidence viewer shows it:
    each statutory range in words, the amount against its standard, the circumstances with their sentences,
    and how the term model's estimate and the precedents' median made the term. Empty when there is none."""
    basis = judgment.term_basis if judgment is not None else {}
    if not basis:
        return {}
    ranges = []
    for r in basis.get("ranges") or []:
        kind = range_kind(r["max_months"], life=bool(r.get("life")), death=bool(r.get("death")))
        high, low = term_label(r["max_months"], kind=kind), term_label(r["min_months"], kind=kind)
        text = (_("%(low)s to %(high)s") % {"low": low, "high": high} if r["min_months"]
                else _("up to %(high)s") % {"high": high})
        if r.get("death"):
            text = _("%(range)s, up to death") % {"range": text}
        elif r.get("life"):
            text = _("%(range)s, or life imprisonment") % {"range": text}
        ranges.append({"key": r["key"], "label": r["label"], "anchor": f"art-{r['key']}", "text": text})
    model, precedents = basis.get("model"), basis.get("precedents")
    return {"source": basis.get("source", "statistical"), "ranges": ranges, "amount": basis.get("amount"),
            "circumstances": list(basis.get("circumstances") or []),
            "model": _estimate_of(Term(**model)) if model else None,
            "precedents": dict(precedents, share_pct=f"{round(100 * precedents['share'])} %") if precedents else None,
            "term": _estimate_of(Term(**basis["term"])) if basis.get("term") else None,
            "capped": _term_of(Term(**basis["capped"])) if basis.get("capped") else None,
            "raised": _term_of(Term(**basis["raised"])) if basis.get("raised") else None,
            "drug": basis.get("drug"), "raised_drug": bool(basis.get("raised_drug")),
            "raised_tier": basis.get("raised_tier", ""), "raised_harm": basis.get("raised_harm", ""),
            "raised_remaining": bool(basis.get("raised_remaining")),
            "serving": serving_shown(basis), "severe": _severe_of(basis.get("severe"))}


def _severe_of(severe: dict | None) -> dict | None:
    """The chance of life imprisonment or death that moved the term model's answer, in words."""
    if not severe:
        return None
    return {"pct": f"{round(100 * severe['p'])} %", "fixed": _estimate_of(Term(months=severe["fixed_months"]))["label"]}


class _Lookup:
    """Labels for the primary keys a bundle refers to, fetched in a few queries."""

    def __init__(self, research: Research, audit: Audit):
        from apps.corpus.models import Article, ArticleVersion, Interpretation, Precedent, PrecedentOutcome
        from apps.graph.models import Community

        hits = research.hits
        case_pks = {int(h.pk) for h in hits if h.kind == "case"}
        case_pks |= {int(pk) for pk in audit.verified_cases}
        case_pks |= {int(p.pk) for p in audit.pruned if p.kind == "case"}
        article_pks = {int(h.pk) for h in hits if h.kind == "article"}
        article_pks |= {int(a.article_pk) for a in audit.articles}
        article_pks |= {int(pk) for pk in research.candidate_articles}
        article_pks |= {int(p.pk) for p in audit.pruned if p.kind == "article"}
        community_pks = {int(h.pk) for h in hits if h.kind == "community"}
        version_pks = {int(a.version_pk) for a in audit.articles if a.version_pk}
        interp_pks = {int(pk) for a in audit.articles for pk in a.interpretations}

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


def _hit_row(hit: Hit, look: _Lookup) -> dict:
    kind, pk = hit.kind, hit.pk
    row = {"kind": kind, "kind_label": KIND_LABELS.get(kind, kind), "pk": pk, "score": hit.score,
           "label": hit.label or "", "detail": "", "explore": ""}
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


def _severity(term: Term | None, sentencing: dict) -> dict:
    """The Punishment Severity Index of the predicted term, and the one the authoritative similar
    precedents point to (agentic mode), both also as months of unsuspended imprisonment."""
    from worker.agents.models.priors import psi, psi_months, sentence_of

    out: dict = {}
    sentence = sentence_of(term) if term is not None else None
    if sentence is not None:
        value = psi(sentence)
        out["predicted"] = {"psi": round(value), "months": psi_months(value)}
    reference = sentencing.get("reference") or {}
    if reference.get("psi") is not None:
        out["reference"] = {"psi": round(reference["psi"]), "months": reference.get("months_equivalent"),
                            "n": len(reference.get("precedents") or [])}
    return out


def _planner_steps(steps: list[PlanStep], look: _Lookup) -> list[dict]:
    """The agentic planner's steps as the evidence viewer lists them (empty in the fixed mode)."""
    rows = []
    for step in steps:
        # A step's results are the planner's observation records ({kind, pk, label, score, detail}).
        results = [{**r, "kind_label": KIND_LABELS.get(r.get("kind"), r.get("kind")),
                    "label": look.case_label(r["pk"]) if r.get("kind") == "case" else r.get("label", "")}
                   for r in step.results or []]
        state = step.state or {}
        rows.append({"n": step.n, "action": step.action,
                     "action_label": ACTION_LABELS.get(step.action, step.action),
                     "query": step.query, "reason": step.reason, "status": step.status,
                     "status_label": STEP_STATUS_LABELS.get(step.status, step.status),
                     "refused": step.refused, "results": results, "new": step.new,
                     "planner_calls": step.planner_calls,
                     "charges": state.get("candidate_charges") or [],
                     "missing_articles": state.get("charges_without_article") or [],
                     "missing_precedents": state.get("charges_without_precedent") or []})
    return rows


def _span_parts(focus: str, item: ItemVerdict) -> dict:
    span = item.span
    if span and len(span) == 2 and 0 <= span[0] < span[1] <= len(focus):
        start, end = int(span[0]), int(span[1])
        return {"before": ("…" if start > _SPAN_CONTEXT else "") + focus[max(0, start - _SPAN_CONTEXT):start],
                "mark": focus[start:end],
                "after": focus[end:end + _SPAN_CONTEXT] + ("…" if end + _SPAN_CONTEXT < len(focus) else "")}
    if item.span_text:
        return {"before": "", "mark": item.span_text, "after": ""}
    return {}


def _evidence_target(e: Evidence) -> str:
    kind = e.kind
    if kind == "article":
        return f"art-{e.ref}"
    if kind == "checklist":
        return f"item-{e.pk}"
    if kind == "interpretation":
        return f"interp-{e.ref}-{e.pk}"
    if kind == "precedent":
        return f"prec-{e.pk}"
    return ""


def _evidence_text(e: Evidence, items: dict) -> str:
    """A checklist item cited as evidence reads as its question and what shows it: the supporting
    sentence, else the verdict's reason in the page language (the bundle's text holds the free,
    English reasoning when there is no sentence). ``items``: the page's item rows by (article key, item pk)."""
    if e.kind != "checklist":
        return e.text
    item = items.get((e.ref, e.pk))
    if item is None:
        return e.text
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


def _precedent_terms(verified: list[int], look: _Lookup, predicted: dict | None, judged: list[str]) -> dict:
    """The verified precedents' terms beside the predicted one. A row names the charges its defendant was convicted
    of beyond the judgment's (``also``): that term punished them too."""
    judged_names = {n for c in judged for n in charges_of_name(c)}
    rows = []
    for pk in verified:
        for o in look.outcomes.get(int(pk), []):
            if not o.term_known:
                continue
            charges = [c.name for c in o.charges.all()]
            rows.append({"pk": pk, "ext_id": look.case_label(pk), "defendant": o.defendant,
                         "months": o.term_months, "life": o.life, "death": o.death,
                         "label": term_label(o.term_months, o.life, o.death, kind_named(o.term_kind)),
                         "charges": charges,
                         "also": [c for c in charges if judged and not charges_of_name(c) & judged_names]})
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


def _graph_elements(defendant: str, articles: list[dict], judgment: Judgment | None, verified_cases: list[int],
                    look: _Lookup) -> dict:
    """The verified subgraph as Cytoscape elements: the defendant, verified articles (the page's
    article rows), their charges, the interpretations cited as evidence and the verified precedents."""
    cited_interpretations = {int(e.pk) for e in (judgment.evidence if judgment else []) if e.kind == "interpretation"}
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
    for charge in judgment.charges if judgment else []:
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


def evidence_context(stored: dict | None) -> dict:
    """Everything templates/cases/_evidence.html shows, computed from one stored bundle (Bundle.to_dict(),
    read back with Bundle.from_dict).

    Reusable by any page that has a bundle (the run page, the review app, the
    evaluation dashboard): ``{% include "cases/_evidence.html" with bundle=... ev=... %}``.
    """
    bundle = Bundle.from_dict(stored or {})
    research = bundle.research or Research(focus="", features={}, query_text="")
    audit = bundle.audit or Audit()
    judgment = bundle.judgment
    look = _Lookup(research, audit)
    focus = research.focus or ""

    groups: dict[str, list] = {}
    for hit in research.hits:
        groups.setdefault(hit.path, []).append(_hit_row(hit, look))
    retrieval = [{"path": path, "label": PATH_LABELS.get(path, path), "hits": groups[path]}
                 for path in sorted(groups, key=lambda p: (PATH_ORDER.index(p) if p in PATH_ORDER else 99, p))]

    sources = {str(k): v for k, v in research.article_sources.items()}
    articles = []
    for a in audit.articles:
        key = a.key
        version = look.versions.get(a.version_pk or 0)
        article = look.articles.get(int(a.article_pk))
        interpretations = []
        for index, pk in enumerate(a.interpretations):
            interp = look.interpretations.get(int(pk))
            texts = a.interpretation_texts
            interpretations.append({
                "pk": pk, "anchor": f"interp-{key}-{pk}",
                "caption": f"{interp.source}{interp.para}" if interp else f"#{pk}",
                "short": (interp.para or interp.source[:12]) if interp else f"#{pk}",
                "text": texts[index] if index < len(texts)
                else (interpretation_line(interp.source, interp.para, interp.text) if interp else ""),
            })
        items = []
        for number, item in enumerate(a.items, start=1):
            items.append({**_stored(item), "number": number, "anchor": f"item-{item.item_pk}",
                          "fact": _span_parts(focus, item), "why": reason_render(item.why, item.reasoning)})
        articles.append({
            "article_pk": int(a.article_pk), "key": key, "label": a.label, "anchor": f"art-{key}",
            "law": article.law.title if article else "", "charges": list(a.charges),
            "in_force": a.in_force, "text": a.text,
            "version": {"pk": a.version_pk, "valid_from": version.valid_from if version else None,
                        "valid_to": version.valid_to if version else None},
            "passed": bool(a.passed), "score": a.score, "prior": a.prior,
            "reason": a.reason, "why": reason_render(a.why, a.reason),
            "sources": [PATH_SHORT.get(src, src) for src in sources.get(str(a.article_pk), [])],
            "items": items, "satisfied": sum(1 for i in items if i.get("satisfied")),
            "interpretations": interpretations,
        })

    pruned = []
    for p in audit.pruned:
        kind, pk = p.kind, p.pk
        label = look.case_label(pk) if kind == "case" else look.article_label(pk) if kind == "article" else str(pk)
        anchor = f"art-{look.articles[int(pk)].key}" if kind == "article" and int(pk) in look.articles else ""
        pruned.append({"kind": kind, "kind_label": KIND_LABELS.get(kind, kind), "pk": pk, "label": label,
                       "reason": p.reason, "why": reason_render(p.why, p.reason),
                       "anchor": anchor})

    if judgment is not None and judgment.ok:  # a verified article the judgment leaves out says why
        left = {w.get("key"): w for w in judgment.not_cited}
        for a in articles:
            if a["passed"] and a["key"] not in judgment.article_keys:
                why = left.get(a["key"]) or {"code": codes.JUDGMENT_NOT_CITED, "kind": "not_cited"}
                a["not_cited"] = reason_render(why, "")["text"]
    items_by_pk = {(a["key"], i.get("item_pk")): i for a in articles for i in a["items"]}
    evidence = [{**_stored(e), "text": _evidence_text(e, items_by_pk), "anchor": f"ev-{e.n}", "target": _evidence_target(e),
                 "kind_label": KIND_LABELS.get(e.kind, e.kind)}
                for e in (judgment.evidence if judgment else [])]
    numbers = {e["n"] for e in evidence}
    verified_cases = [int(pk) for pk in audit.verified_cases]
    term = _term_of(judgment.term if judgment else None)
    status = judgment.status.value if judgment else ""
    by_key = {a["key"]: a for a in articles}
    judged_articles = [{"key": k, "label": by_key[k]["label"] if k in by_key else k, "anchor": f"art-{k}"}
                       for k in (judgment.article_keys if judgment else [])]

    graph = _graph_elements(bundle.defendant, articles, judgment, verified_cases, look)
    costs = [_stored(c) for c in bundle.costs]
    totals = {"seconds": round(sum(c.seconds for c in bundle.costs), 4),
              "llm_calls": sum(c.llm_calls for c in bundle.costs),
              "prompt_tokens": sum(c.prompt_tokens for c in bundle.costs),
              "completion_tokens": sum(c.completion_tokens for c in bundle.costs)}

    return {
        "defendant": bundle.defendant,
        "strategy": bundle.strategy,
        "status": status,
        "status_label": RESULT_STATUS_LABELS.get(status, status),
        "ok": status == "judged",
        "message": judgment_render(judgment.why, judgment.message) if judgment else "",
        "focus": focus,
        "features": research.features,
        "query_text": research.query_text,
        "prejudged": [{"charge": c, "p": p} for c, p in research.prejudged],
        "retrieval": retrieval,
        "articles": articles,
        # Verified articles first; the ones the Auditor rejected are folded away below them.
        "verified_articles": [a for a in articles if a["passed"]],
        "rejected_articles": [a for a in articles if not a["passed"]],
        "pruned": pruned,
        "judgment": {
            "charges": list(judgment.charges) if judgment else [], "articles": judged_articles, "term": term,
            "reasoning": _reasoning_segments(judgment.reasoning if judgment else "", numbers),
            "citations": list(judgment.citations) if judgment else [], "evidence": evidence,
            "scores": dict(judgment.scores) if judgment else {},
        },
        "precedents": [{"pk": pk, "ext_id": look.case_label(pk), "anchor": f"prec-{pk}",
                        "charges": look.case_charges(pk),
                        "court_level": look.cases[pk].get_court_level_display() if pk in look.cases else ""}
                       for pk in verified_cases],
        "terms": _precedent_terms(verified_cases, look, term, list(judgment.charges) if judgment else []),
        "term_basis": _term_basis(judgment),
        "severity": _severity(judgment.term if judgment else None, research.sentencing),
        "planner": _planner_steps(research.steps, look),
        "graph": graph,
        "graph_legend": legend(n["data"]["kind"] for n in graph["nodes"]),
        "costs": costs,
        "cost_totals": totals,
        "versions": dict(bundle.versions),
        "model_scores": model_scores(bundle.versions),
        "params": dict(bundle.params),
        "llm_records": len(bundle.llm_records),
    }


@functools.lru_cache(maxsize=1)
def _code() -> str:
    """The code that builds the view-model (part of its cache key)."""
    import sys

    from apps.cases import reasons as reason_sentences
    from apps.core.caching import code_token
    from apps.graph import labels
    from apps.registry import selectors as registry_selectors
    from worker.agents import reasons, types, wording

    return code_token(sys.modules[__name__], reason_sentences, labels, registry_selectors, reasons, types, wording)


def bundle_digest(stored: dict | None) -> str:
    """A digest of a stored bundle's content (the key of what is derived from it)."""
    text = json.dumps(stored or {}, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def evidence_view(stored: dict | None) -> dict:
    """``evidence_context(stored)``, derived once and kept in the shared cache (apps/core/caching.py):
    keyed by the bundle's digest, the page language, the code that builds it and the generation of the
    corpus and graph its labels are looked up in. A bundle is immutable once its run has finished (a
    retention purge or a what-if is another bundle, so another key). Returns a fresh copy: a page may
    annotate it (the review controls)."""
    from apps.core.caching import cached, derived_key

    key = derived_key("evidence", _code(), get_language() or "", bundle_digest(stored))
    return cached(key, lambda: _plain(evidence_context(stored)))


def _plain(value, seen: dict | None = None):
    """``value`` with its lazy translations as the strings they are now (the key names the language):
    an unpickled lazy string builds a proxy class of its own, which costs more than the string. A dict
    or list met twice stays one object (``verified_articles`` holds the rows of ``articles``, and the
    review page annotates them once)."""
    seen = {} if seen is None else seen
    if isinstance(value, (dict, list, tuple)):
        if id(value) in seen:
            return seen[id(value)]
        if isinstance(value, dict):
            out = seen[id(value)] = {}
            out.update((k, _plain(v, seen)) for k, v in value.items())
        elif isinstance(value, list):
            out = seen[id(value)] = []
            out.extend(_plain(v, seen) for v in value)
        else:
            out = seen[id(value)] = tuple(_plain(v, seen) for v in value)
        return out
    if isinstance(value, Promise):
        return str(value)
    return value


# The evidence viewer's heavy, folded-away or below-the-fold parts: htmx fragments fetched when they come into
# view (the page itself renders the judgment, the verified articles and the precedents); the evidence page and
# the review page both serve them.
EVIDENCE_PARTS = {"rejected": "cases/_evidence_rejected.html", "graph": "cases/_evidence_graph.html",
                  "analysis": "cases/_evidence_analysis.html"}


def evidence_part(request, part: str, context: dict):
    """The response for ``?part=NAME`` of a page showing the evidence ``context["ev"]``; 404 for another name."""
    from django.http import Http404
    from django.shortcuts import render

    if part not in EVIDENCE_PARTS:
        raise Http404
    if part == "graph":
        context["graph_json"] = json.dumps(context["ev"]["graph"], ensure_ascii=False)
    return render(request, EVIDENCE_PARTS[part], context)


def outcome_view(stored: dict | None) -> dict:
    """What a judgment decided, from a stored bundle alone (no lookups): status, charges, the judged
    articles, the term and the reasoning, as the review page's outcome panels show them. The same
    values ``evidence_context`` gives for these fields."""
    bundle = Bundle.from_dict(stored or {})
    judgment = bundle.judgment
    status = judgment.status.value if judgment else ""
    labels = {a.key: a.label for a in (bundle.audit.articles if bundle.audit else [])}
    numbers = {e.n for e in (judgment.evidence if judgment else [])}
    term = _term_of(judgment.term if judgment else None)
    return {
        "status": status, "status_label": RESULT_STATUS_LABELS.get(status, status), "ok": status == "judged",
        "message": judgment_render(judgment.why, judgment.message) if judgment else "",
        "charges": list(judgment.charges) if judgment else [],
        "articles": [{"key": k, "label": labels.get(k, k), "anchor": f"art-{k}"}
                     for k in (judgment.article_keys if judgment else [])],
        "term": term["label"] if term else "",
        "reasoning": _reasoning_segments(judgment.reasoning if judgment else "", numbers),
    }


def _stored(value) -> dict:
    """One typed part of the bundle (an item verdict, an evidence item, a stage's cost) as the row a
    template reads: its fields by name."""
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
