"""A reviewer's what-if: change verdicts or evidence of a stored bundle and re-run only the Adjudicator.

The reviewer is the authority over what they change:

- a checklist verdict (``item``, ref ``"<article_pk>:<item_pk>"``) is set to satisfied or not.
  The elements of an offence are conjunctive, so the article's decision moves with the
  reviewer: an element the reviewer finds not shown defeats the article; once every element
  is satisfied the article applies (if a version was in force); otherwise the Auditor's
  decision stands (setting an element to satisfied never makes an article fail);
- an article (``article``, ref ``"<article_pk>"``) is set to apply or not, whatever its items say;
- a precedent (``precedent``, ref ``"<case_pk>"``) or an interpretation (``interpretation``,
  ref ``"<interpretation_pk>"``) is kept or excluded from the citable evidence.

Nothing is retrieved again and no checklist item is verified again: the stored research and
audit are changed as told, pruned again, numbered again, and handed to the strategy's
Adjudicator; ``verify_judgment`` checks the result exactly as in a normal run.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from worker.agents import reasons
from worker.agents.ports import GraphStore
from worker.agents.stages import StageClock
from worker.agents.stages.adjudicator import judge
from worker.agents.stages.auditor import prune
from worker.agents.types import (
    Audit,
    Bundle,
    Judgment,
    Pruned,
    Research,
    Status,
)

TARGETS = ("item", "article", "precedent", "interpretation")


class OverrideInvalid(ValueError):
    """An override names something the bundle does not contain."""


@dataclass(frozen=True)
class Override:
    target: str  # one of TARGETS
    ref: str
    value: bool  # item: satisfied; article: applies; precedent / interpretation: kept as evidence
    reason: str


def _whatif_view(stored: Bundle) -> tuple[Research, Audit]:
    """The research and audit the what-if adjudicates again. It has always left out the Fact-graph
    shares, the planner's steps and sentencing ranking, and each article's signals (the fields added
    after the what-if was written): kept so, to change no what-if; see the closing note of #18."""
    research = replace(stored.research, fact_shares={}, steps=[], sentencing={})
    audit = replace(stored.audit, articles=[replace(a, signals={}, contributions={})
                                                        for a in stored.audit.articles])
    return research, audit


def _apply_to_audit(result: Audit, overrides: list[Override]) -> None:
    by_pk = {a.article_pk: a for a in result.articles}
    changed: dict[int, list[str]] = {}
    for o in overrides:
        if o.target != "item":
            continue
        article_pk, _, item_pk = o.ref.partition(":")
        article = by_pk.get(int(article_pk)) if article_pk.isdigit() else None
        index = next((n for n, i in enumerate(article.items) if str(i.item_pk) == item_pk), None) if article else None
        if index is None:
            raise OverrideInvalid(f"checklist item {o.ref} is not in this evidence bundle")
        item = article.items[index]
        article.items[index] = replace(item, satisfied=o.value, score=1.0 if o.value else 0.0,
                                       reasoning=f"reviewer: {o.reason} (Auditor: {'satisfied' if item.satisfied else 'not shown'})",
                                       why=reasons.why(reasons.ITEM_REVIEWER, reason=o.reason,
                                                       auditor="satisfied" if item.satisfied else "not_shown"))
        changed.setdefault(article.article_pk, []).append(str(item.order))
    for pk, orders in changed.items():
        a = by_pk[pk]
        refuted = any(o.target == "item" and not o.value and o.ref.startswith(f"{pk}:") for o in overrides)
        if refuted:
            a.passed = False
        elif all(i.satisfied for i in a.items):
            a.passed = a.in_force
        a.reason = (f"reviewer changed checklist item(s) {', '.join(orders)}: "
                    f"{sum(i.satisfied for i in a.items)}/{len(a.items)} satisfied"
                    f"{'; an element is not shown' if refuted else ''}; {'applies' if a.passed else 'does not apply'}")
        a.why = reasons.why(reasons.ARTICLE_REVIEWER, reason="", items=orders, refuted=refuted,
                            supported=sum(i.satisfied for i in a.items), total=len(a.items), outcome=a.passed)
    for o in overrides:
        if o.target != "article":
            continue
        a = by_pk.get(int(o.ref)) if o.ref.isdigit() else None
        if a is None:
            raise OverrideInvalid(f"article {o.ref} is not in this evidence bundle")
        a.passed = o.value and a.in_force
        a.reason = f"reviewer: {o.reason}" + ("" if a.in_force or not o.value else " (no version in force: not applied)")
        a.why = reasons.why(reasons.ARTICLE_REVIEWER, reason=o.reason, outcome=a.passed, in_force=a.in_force)


def _apply_to_precedents(result: Audit, research: Research, overrides: list[Override]) -> None:
    for o in overrides:
        if o.target != "precedent":
            continue
        pk = int(o.ref) if o.ref.isdigit() else None
        if pk is None or pk not in research.candidate_cases:
            raise OverrideInvalid(f"precedent {o.ref} is not in this evidence bundle")
        result.pruned = [p for p in result.pruned if not (p.kind == "case" and int(p.pk) == pk)]
        if o.value:
            if pk not in result.verified_cases:
                result.verified_cases.append(pk)
        else:
            result.verified_cases = [c for c in result.verified_cases if c != pk]
            result.pruned.append(Pruned("case", pk, f"excluded by the reviewer: {o.reason}",
                                        reasons.why(reasons.PRUNED_BY_REVIEWER, reason=o.reason)))


def readjudicate(bundle: Bundle | dict, overrides: list[Override], *, strategy, graph: GraphStore) -> Bundle:
    """The what-if bundle: ``bundle`` (typed, or as Bundle.to_dict() stored it) with ``overrides`` applied
    and the Adjudicator run again."""
    for o in overrides:
        if o.target not in TARGETS:
            raise OverrideInvalid(f"unknown override target {o.target!r}")
    stored = Bundle.of(bundle)
    if stored.research is None or stored.audit is None:
        raise OverrideInvalid("this result has no audited evidence to change")
    case = stored.case
    found, result = _whatif_view(stored)
    _apply_to_audit(result, overrides)
    prune(result, found, graph)
    _apply_to_precedents(result, found, overrides)
    excluded = frozenset(int(o.ref) for o in overrides if o.target == "interpretation" and not o.value and o.ref.isdigit())
    out = Bundle(case=case, defendant=stored.defendant, strategy=stored.strategy or strategy.name,
                 params=dict(stored.params), versions={**stored.versions, "whatif": "1"}, research=found, audit=result)
    if not result.verified:
        out.judgment = Judgment(status=Status.INSUFFICIENT_EVIDENCE,
                                message="no article applies after the reviewer's changes",
                                why=[reasons.why(reasons.JUDGMENT_REVIEWER_LEFT_NONE)])
        return out
    out.judgment = judge(case, found.focus, result, found, strategy=strategy, graph=graph, clock=StageClock(out.costs),
                         excluded_interpretations=excluded)
    out.llm_records = list(strategy.records)
    return out
