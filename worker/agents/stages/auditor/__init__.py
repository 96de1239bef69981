"""The Auditor: every checklist item of every candidate article checked, the articles decided, and what
fails pruned.

The strategy checks the items and decides the articles (worker/agents/strategies/); the statistical one
with the element check (elements.py), the amount standards (amounts.py) and the signals every candidate is
weighed by (signals.py). What is shared is here: the text in force on the offence date, the checklists and
interpretations handed to the strategy, the ablation without an Auditor, and the pruning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from worker.agents import reasons
from worker.agents.graph_types import ArticleNode
from worker.agents.ports import GraphStore
from worker.agents.stages import Progress
from worker.agents.types import ArticleAudit, Audit, CaseInput, Pruned, Research
from worker.agents.wording import interpretation_line

if TYPE_CHECKING:
    from worker.agents.pipeline import Params
    from worker.agents.strategies.base import Strategy


def precedent_support(found: Research, graph: GraphStore) -> dict[str, float]:
    """Charge → score-weighted share of the retrieved cases convicted of it (the precedents' vote)."""
    weights: dict[int, float] = {}
    for hit in found.hits:
        if hit.kind == "case":
            weights[hit.pk] = max(weights.get(hit.pk, 0.0), max(float(hit.score), 0.0))
    total = sum(weights.values())
    if total <= 0:
        return {}
    votes: dict[str, float] = {}
    nodes = {n.pk: n for n in graph.cases(weights)}
    for pk, weight in weights.items():
        node = nodes.get(pk)
        for charge in node.charges if node else ():
            votes[charge] = votes.get(charge, 0.0) + weight / total
    return {c: round(v, 6) for c, v in votes.items()}


def audit(case: CaseInput, focus: str, found: Research, strategy: Strategy, *, graph: GraphStore, params: Params,
          progress: Progress | None = None) -> Audit:
    """Check every checklist item of every candidate article, then decide the articles.

    The decision comes after every candidate's items are known: the statistical Auditor weighs an article
    against the other candidates (worker.agents.stages.auditor.signals). ``progress`` hears of each decided article."""
    result = Audit()
    to_check = []
    for pk in found.candidate_articles:
        node = graph.article(pk)
        texts = graph.article_texts(pk)
        version = next((t for t in reversed(texts) if t.in_force_on(case.offence_date)), None)
        entry = ArticleAudit(article_pk=pk, key=key_of(node), label=node.label, charges=list(node.charges),
                             version_pk=version.version_pk if version else None, text=version.text if version else "",
                             in_force=version is not None)
        result.articles.append(entry)
        if version is None:
            entry.reason = f"no version of {node.label} was in force on {case.offence_date}"
            entry.why = reasons.why(reasons.ARTICLE_NOT_IN_FORCE, label=node.label,
                                    date=case.offence_date.isoformat() if case.offence_date else None)
            continue
        items = graph.checklist(pk, version.version_pk) or graph.checklist(pk)
        interpretations = graph.interpretations(pk)
        entry.interpretations = [i.pk for i in interpretations]
        entry.interpretation_texts = [interpretation_line(i.source, i.para, i.text) for i in interpretations[:3]]
        to_check.append((entry, items))
    if params.use_auditor:
        strategy.verify_checklists(focus, to_check)

    decided = 0

    def on_decided(entry: ArticleAudit) -> None:
        nonlocal decided
        decided += 1
        if progress:
            progress("article", {"article": entry.label, "key": entry.key, "passed": entry.passed,
                                 "done": decided, "total": len(result.articles)})

    in_force = [a for a in result.articles if a.in_force]
    if params.use_auditor:
        strategy.decide_articles(focus, in_force, found, graph, on_decided)
        for entry in in_force:
            entry.why = entry.why or reasons.why(reasons.ARTICLE_MODEL, applies=entry.passed)
    else:  # no checklist is decided at all: the ablation and the naive baseline cost no audit call
        for entry in in_force:
            entry.passed, entry.score, entry.reason = True, 1.0, "auditor disabled (ablation): accepted unchecked"
            entry.why = reasons.why(reasons.ARTICLE_UNCHECKED)
            on_decided(entry)
    for entry in result.articles:
        if not entry.in_force:
            on_decided(entry)
    return prune(result, found, graph)


def prune(result: Audit, found: Research, graph: GraphStore) -> Audit:
    """Prune what fails the audit: failed articles, then the candidate precedents and the
    pre-judged charges that no verified article supports. A precedent is pruned when none of its charges is
    defined by a verified article, or when every article it cites failed, unless one of them has the number of a
    verified article defining its charge: a corpus may cite the article for its sub-article's charge (危险驾驶罪
    under 133 where the audit verifies 133-1). Resets earlier pruning (a reviewer's what-if re-prunes after
    changing verdicts)."""
    result.pruned, result.verified_cases = [], []
    failed = {a.article_pk: a for a in result.articles if not a.passed}
    for a in failed.values():
        result.pruned.append(Pruned("article", a.article_pk, a.reason, reasons.why(reasons.PRUNED_ARTICLE)))
    verified_charges = {c for a in result.verified for c in a.charges}
    numbered = {(_number(a.key), c) for a in result.verified for c in a.charges}
    nodes = {n.pk: n for n in graph.cases(found.candidate_cases)}
    for pk in found.candidate_cases:
        node = nodes.get(pk)
        cited = set(node.article_pks) if node else set()
        cause = None
        if node and not set(node.charges) & verified_charges:
            cause = "charges"
        elif cited and cited <= failed.keys() and not any(
                (_number(failed[a].key), c) in numbered for a in cited for c in node.charges):
            cause = "articles"
        if cause:
            result.pruned.append(Pruned("case", pk, f"none of its {cause} survived the audit",
                                        reasons.why(reasons.PRUNED_CASE, cause=cause)))
        else:
            result.verified_cases.append(pk)
    for charge, _p in found.prejudged:
        if charge not in verified_charges:
            result.pruned.append(Pruned("charge", charge, "no article defining it was verified",
                                        reasons.why(reasons.PRUNED_CHARGE)))
    return result


def _number(key: str) -> str:
    """The article number of a key: "133" of "133-1"."""
    return key.split("-")[0]


def key_of(node: ArticleNode) -> str:
    return f"{node.number}-{node.sub}" if node.sub else str(node.number)
