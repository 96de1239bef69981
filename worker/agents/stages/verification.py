"""Verification: the evidence a judgment may cite, numbered, and the check of the judgment against it.

Only the verified material is numbered (articles, their satisfied checklist items and interpretations,
then the verified precedents), so no strategy can cite anything else; ``verify_judgment`` (INV-8) gives a
judgment whose citations do not resolve, whose articles were not verified or not in force, or whose
charges no verified article defines, an explicit failure status, and caps its term at the statutory
maximum of the verified articles (models/sentencing.py).
"""

from __future__ import annotations

import re
from dataclasses import replace

from worker.agents import reasons
from worker.agents.charge_names import charges_of_name, name_on, offence_date_of
from worker.agents.graph_types import Term
from worker.agents.models import sentencing
from worker.agents.ports import GraphStore
from worker.agents.types import ArticleAudit, Audit, CaseInput, Evidence, Judgment, Status
from worker.agents.wording import interpretation_line, term_wording


def number_evidence(audit_result: Audit, graph: GraphStore, *, max_cases: int = 3, max_interpretations: int = 2,
                    excluded_interpretations: frozenset[int] = frozenset()) -> list[Evidence]:
    """Number the verified material: articles, their satisfied checklist items and
    interpretations, then verified precedents: up to ``max_cases`` convicted of each charge the verified articles
    define (the precedents a judgment of that charge weighs for its term), or the first ``max_cases`` when none
    is, in the Auditor's order. Only these can be cited. A reviewer may exclude interpretations
    (``excluded_interpretations``) in a what-if."""
    evidence: list[Evidence] = []

    def add(kind: str, ref: str, pk: int, text: str):
        evidence.append(Evidence(n=len(evidence) + 1, kind=kind, ref=ref, pk=pk, text=text))

    for a in audit_result.verified:
        add("article", a.key, a.article_pk, f"{a.label}　{a.text}")
        for item in a.items:
            if item.satisfied:
                add("checklist", a.key, item.item_pk, f"{item.question}：{item.span_text or item.reasoning}")
        kept = [i for i in graph.interpretations(a.article_pk) if i.pk not in excluded_interpretations]
        for interp in kept[:max_interpretations]:
            add("interpretation", a.key, interp.pk, interpretation_line(interp.source, interp.para, interp.text))
    for node in _precedents_to_number(audit_result, graph, max_cases):
        add("precedent", node.ext_id, node.pk, f"{node.ext_id}：{'、'.join(node.charges)}；{_term_text(node.term)}")
    return evidence


def _precedents_to_number(audit_result: Audit, graph: GraphStore, max_cases: int) -> list:
    nodes = {n.pk: n for n in graph.cases(audit_result.verified_cases)}
    ordered = [nodes[pk] for pk in audit_result.verified_cases if pk in nodes]
    chosen: set[int] = set()
    for charge in dict.fromkeys(c for a in audit_result.verified for c in a.charges):
        chosen.update([n.pk for n in ordered if charge in n.charges][:max_cases])
    if not chosen:
        chosen = {n.pk for n in ordered[:max_cases]}
    return [n for n in ordered if n.pk in chosen]


def _term_text(term: Term | None) -> str:
    if term is None:
        return "刑期不详"
    if term.death:
        return "死刑"
    if term.life:
        return "无期徒刑"
    return f"{term.months}个月"


_CITATION = re.compile(r"\[(\d+)\]")


def verify_judgment(judgment: Judgment, audit_result: Audit, case: CaseInput) -> Judgment:
    """INV-8: every citation resolves, every article is verified and in force, charges come from verified articles,
    and the term stays within what the verified articles provide (F5: capped, with a note saying so)."""
    if judgment.status != Status.JUDGED:
        return judgment
    numbers = {e.n for e in judgment.evidence}
    cited = [int(n) for n in _CITATION.findall(judgment.reasoning)]
    unresolved = sorted({n for n in cited if n not in numbers})
    if unresolved or not cited:
        what = f"citations {unresolved} do not resolve to verified evidence" if unresolved else "the reasoning cites no evidence"
        return replace(judgment, status=Status.UNRESOLVED_CITATION, message=what,
                       why=[reasons.why(reasons.JUDGMENT_UNRESOLVED, citations=unresolved)])
    verified = {a.article_pk: a for a in audit_result.verified}
    by_key = {a.key: a for a in audit_result.verified}
    unknown = [k for k in judgment.article_keys if k not in by_key]
    if unknown or any(pk not in verified for pk in judgment.article_pks):
        return replace(judgment, status=Status.UNRESOLVED_CITATION,
                       message=f"articles {unknown or judgment.article_pks} were not verified by the Auditor",
                       why=[reasons.why(reasons.JUDGMENT_UNVERIFIED,
                                        articles=[str(a) for a in unknown or judgment.article_pks])])
    not_in_force = [by_key[k].label for k in judgment.article_keys if not by_key[k].in_force]
    if not_in_force:
        date = case.offence_date.isoformat() if case.offence_date else None
        return replace(judgment, status=Status.NOT_IN_FORCE,
                       message=f"{', '.join(not_in_force)} not in force on {case.offence_date}",
                       why=[reasons.why(reasons.JUDGMENT_NOT_IN_FORCE, articles=not_in_force, date=date)])
    allowed = {c for a in audit_result.verified for c in a.charges}
    stray = [c for c in judgment.charges if not charges_of_name(c) & allowed]  # a former name counts as its charge
    if stray or not judgment.charges:
        return replace(judgment, status=Status.UNRESOLVED_CITATION,
                       message=f"charges {stray} are not defined by any verified article" if stray else "no charge",
                       why=[reasons.why(reasons.JUDGMENT_STRAY_CHARGES, charges=stray)])
    judgment = replace(judgment, citations=sorted(set(cited)))
    judgment = _within_statutory_range(judgment, [by_key[k] for k in judgment.article_keys], audit_result.verified)
    return _named_on_offence_date(judgment, case)


def _named_on_offence_date(judgment: Judgment, case: CaseInput) -> Judgment:
    """Each charge by its name on the offence date (the case's, else the first the facts state): an indecent
    assault of 2014 is 强制猥亵、侮辱妇女罪 (worker/agents/charge_names.py)."""
    day = case.offence_date or offence_date_of(case.facts)
    names = {c: name_on(c, day, case.facts) for c in judgment.charges}
    if all(c == n for c, n in names.items()):
        return judgment
    reasoning = judgment.reasoning
    for charge, name in names.items():
        reasoning = reasoning.replace(charge, name)
    return replace(judgment, charges=[names[c] for c in judgment.charges], reasoning=reasoning,
                   scores={names.get(c, c): v for c, v in judgment.scores.items()})


def _within_statutory_range(judgment: Judgment, cited: list[ArticleAudit], verified: list[ArticleAudit]) -> Judgment:
    """Bring the term within what the articles for its charges provide: at most their maximum (Article 69 for
    several charges), at least their minimum unless the facts show a ground for a sentence below it.

    Each charge is measured by the cited articles defining it, else by any verified article defining it. An offence
    committed while serving a sentence (the term basis shows it) is combined with the remaining sentence: Article 69's
    cap bounds it. A sentence below the range (减轻处罚) needs a ground the law gives (``REDUCTION_GROUNDS``); when the
    term basis shows none, a term below the charges' minimum is raised to it; for a single charge, to the minimum of
    the clause for the amount tier the facts reach in every region, the harm they show or the weight of heroin or
    methamphetamine they state, when it is more (``_least_term``: a theft of 数额巨大, an assault causing serious
    injury are punished from three years, a sale of 50 grams of heroin from fifteen). When every charge's articles
    provide criminal detention at most (危险驾驶), the term is 拘役 whatever its length (``sentencing.detention_only``).
    """
    if judgment.term is None:
        return judgment
    ranges: dict[str, list] = {}
    texts: list[str] = []
    for charge in judgment.charges:
        stands_for = charges_of_name(charge)
        defining = ([a for a in cited if stands_for & set(a.charges)]
                    or [a for a in verified if stands_for & set(a.charges)])
        ranges[charge] = [sentencing.statutory_range(a.text) for a in defining]
        texts.extend(a.text for a in defining)
    ceiling = sentencing.ceiling_for(ranges)
    if ceiling is None:
        return judgment
    serving = sentencing.serving_shown(judgment.term_basis)
    if serving:
        ceiling = sentencing.with_remaining_sentence(ceiling)
    term, note, why = sentencing.cap_term(judgment.term, ceiling)
    detention = sentencing.detention_only(ranges)
    key = "capped"
    remaining = judgment.term_basis.get("remaining") if serving else None
    reduced = sentencing.reduction_shown(judgment.term_basis)
    by_remaining = False
    by: dict = {}  # what set the least term: an amount tier, a harm or a drug weight ({} for the articles' minimum)
    if not note and (remaining or not reduced):
        floor, by = _least_term(judgment.term_basis, ranges, texts) if not reduced else (None, {})
        # The remaining sentence the facts state: the new term is combined with it (Article 71), whatever the grounds
        # for a lighter new term.
        by_remaining = bool(remaining) and (floor is None or remaining > floor)
        if by_remaining:
            floor, by = min(remaining, ceiling.months), {}
        term, note, why = sentencing.raise_term(judgment.term, floor, **by, remaining=by_remaining)
        key = "raised"
    if detention and term.months and not (term.life or term.death):
        term = replace(term, kind=sentencing.DETENTION_KIND)  # 危险驾驶's six months are 拘役六个月
    if not note:
        if term == judgment.term:
            return judgment
        return replace(judgment, term=term, reasoning=_term_restated(judgment.reasoning, judgment.term, term))
    message = f"{judgment.message}; {note}" if judgment.message else note
    extra = {}  # the amount tier, the harm or the drug weight whose clause set the floor
    if key == "raised" and by:
        extra = {"raised_tier": by["tier"]} if "tier" in by else {"raised_harm": by["harm"]} if "harm" in by \
            else {"raised_drug": True}
    if by_remaining:
        extra["raised_remaining"] = True
    basis = dict(judgment.term_basis, **{key: sentencing.term_row(term)}, **extra) if judgment.term_basis else {}
    return replace(judgment, term=term, message=message, term_basis=basis, why=[*judgment.why, why],
                   reasoning=_term_restated(judgment.reasoning, judgment.term, term))


def _least_term(basis: dict, ranges: dict[str, list], texts: list[str]) -> tuple[int | None, dict]:
    """The least term the articles provide for the charges, without a ground for going below it, and what set it ({}
    for the articles' minimum). For one charge, the clause of the articles for the facts' amount tier reached in every
    region (``{"tier"}``, the basis' ``amount.everywhere``), harm (``{"harm"}``, its circumstances) or weight of
    heroin or methamphetamine (``{"grams"}``, its ``drug``) when it provides more: the most of them."""
    floor = sentencing.floor_for(ranges)
    if floor is None or len(ranges) != 1:
        return floor, {}
    found = []
    tier = (basis.get("amount") or {}).get("everywhere")
    if tier:
        found.append((sentencing.tier_floor(texts, tier), {"tier": tier}))
    harm = sentencing.harm_floor(texts, [c["label"] for c in basis.get("circumstances") or []])
    if harm:
        found.append((harm[0], {"harm": harm[1]}))
    grams = (basis.get("drug") or {}).get("grams")
    if grams:
        found.append((sentencing.weight_floor(texts, grams), {"grams": grams}))
    return max(((months, by) for months, by in found if months is not None and months > floor),
               key=lambda f: f[0], default=(floor, {}))


def _term_restated(reasoning: str, before: Term, after: Term) -> str:
    """The reasoning with the term it proposed, written as a judgment writes it, replaced by the term the judgment now
    carries: the reasoning a clerk reads proposes the term the judgment states."""
    def written(t: Term) -> str:
        return term_wording(t.months, life=t.life, death=t.death, kind=t.kind)

    return reasoning.replace(written(before), written(after)) if written(before) else reasoning
