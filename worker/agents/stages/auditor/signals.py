"""The evidence the statistical Auditor weighs for each candidate article: label-agnostic signals.

One function computes them, for the learned Auditor (worker/agents/models/auditor.py) at judgment time
and for its training data (apps/registry/auditor_export.py runs the same pipeline over training cases,
leave-one-out, with the classifiers that did not see them), so training and serving cannot drift apart.

No signal names the label: each says how strongly one kind of evidence points at *this* article, so one
model weighs rare and frequent articles alike. Per candidate article:

  chg_p, chg_margin, chg_rank     the charge classifier: calibrated probability of the best label standing for
                                  one of the article's charges, its score's distance to the top score, log rank
  prior                           log(1 + training cases of that label): how common the charge is
  art_p, art_margin, art_rank     the article classifier, likewise for the article's number
  rule_sim, rule_margin, rule_rank  TF-IDF cosine of the facts with the article's legal text (its text, checklist
                                  items and linked interpretations: the Rule graph), distance to the best
                                  candidate's, log rank among the candidates
  fact_share                      share of the precedents convicted of a pre-judged charge that cite the article
                                  (the Fact graph), the largest over the pre-judged charges
  vote_sem, vote_com, vote_chg, vote_flat  score-weighted share of each retrieval path's precedents citing it
  art_path                        the LexPath article path's fused score for it (0 when that path missed it)
  items_supported, items_share, item_first, item_p_max, item_p_mean   the checklist verdicts
  charges_defined                 how many charges the article defines (0 for a punishment-only article)
  sub_article                     1 for a sub-article (133之一): the article classifier knows base numbers only
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from worker.agents.types import ArticleAudit, Research

FEATURES = ("chg_p", "chg_margin", "chg_rank", "prior", "art_p", "art_margin", "art_rank", "rule_sim", "rule_margin",
            "rule_rank", "fact_share", "vote_sem", "vote_com", "vote_chg", "vote_flat", "art_path", "items_supported",
            "items_share", "item_first", "item_p_max", "item_p_mean", "charges_defined", "sub_article")

# Groups of signals, for the ablation of each kind of evidence (docs/RESULTS.md) and the evidence viewer.
GROUPS = {
    "charge classifier": ("chg_p", "chg_margin", "chg_rank", "prior"),
    "article classifier": ("art_p", "art_margin", "art_rank"),
    "legal texts (Rule graph)": ("rule_sim", "rule_margin", "rule_rank"),
    "precedents of the charge (Fact graph)": ("fact_share",),
    "R_sem": ("vote_sem",), "R_com": ("vote_com",), "R_chg": ("vote_chg",), "flat retrieval": ("vote_flat",),
    "R_art": ("art_path",),
    "checklist items": ("items_supported", "items_share", "item_first", "item_p_max", "item_p_mean"),
}
PATHS = ("sem", "com", "chg", "flat")
NO_RANK = 1000  # the rank of a label or article the classifier does not know


@dataclass
class Ranking:
    """One classifier's view of the facts: calibrated probability, raw score and rank of every label."""

    p: dict[str, float]
    z: dict[str, float]
    rank: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, p: Mapping[str, float], z: Mapping[str, float]) -> Ranking:
        order = sorted(z, key=lambda label: (-z[label], label))
        return cls(p=dict(p), z=dict(z), rank={label: n for n, label in enumerate(order)})

    @property
    def top_z(self) -> float:
        return max(self.z.values(), default=0.0)

    def best(self, labels: Sequence[str]) -> str | None:
        known = [label for label in labels if label in self.z]
        return max(known, key=lambda label: (self.z[label], label)) if known else None


def _log_rank(rank: int | None) -> float:
    return math.log1p(NO_RANK if rank is None else rank)


def path_votes(research: Research, articles_of: Callable[[int], Sequence[int]]) -> dict[str, dict[int, float]]:
    """path → article pk → score-weighted share of the path's retrieved precedents that cite the article."""
    weights: dict[str, dict[int, float]] = {}
    for hit in research.hits:
        if hit.kind == "case":
            path = weights.setdefault(hit.path, {})
            path[int(hit.pk)] = max(path.get(int(hit.pk), 0.0), max(float(hit.score), 0.0))
    votes: dict[str, dict[int, float]] = {}
    for path, cases in weights.items():
        total = sum(cases.values())
        if total <= 0:  # scores that are all zero: every precedent counts the same
            cases, total = {pk: 1.0 for pk in cases}, float(len(cases))
        shares: dict[int, float] = {}
        for pk, w in cases.items():
            for article in set(articles_of(pk)):
                shares[article] = shares.get(article, 0.0) + w / total
        votes[path] = shares
    return votes


def article_signals(articles: Sequence[ArticleAudit], research: Research, *, charges: Ranking, articles_rank: Ranking,
                    labels_of: Callable[[ArticleAudit], list[str]], rule_sims: Mapping[int, float],
                    label_counts: Mapping[str, int], votes: Mapping[str, Mapping[int, float]]) -> list[dict[str, float]]:
    """The signals of every candidate (same order as ``articles``).

    ``labels_of(article)``: the charge labels standing for one of the article's charges (or, for an article
    defining none, the pre-judged labels whose precedents cite it); ``rule_sims``: article pk → cosine of the
    facts with its legal text; ``votes``: from :func:`path_votes`.
    """
    # A punishment provision only the Researcher's punishment path brought (386 for a bribe no precedent cited it
    # for) is decided by rule, with the offence it punishes: it does not compete in the other candidates' rule ranks,
    # which stay what the Auditor learnt from.
    ranked = {pk: sim for pk, sim in rule_sims.items() if research.article_sources.get(pk) != ["punishment"]}
    best_rule = max(ranked.values(), default=0.0)
    rule_order = {pk: n for n, pk in enumerate(sorted(ranked, key=lambda pk: (-ranked[pk], pk)))}
    art_hits = {int(h.pk): float(h.score) for h in research.hits if h.kind == "article" and h.path == "art"}
    out = []
    for a in articles:
        label = charges.best(labels_of(a))
        number = str(a.key).split("-")[0]
        items = a.items
        supported = [i for i in items if i.satisfied]
        fact = max((shares.get(a.article_pk, 0.0) for shares in research.fact_shares.values()), default=0.0)
        row = {
            "chg_p": charges.p.get(label, 0.0) if label else 0.0,
            "chg_margin": charges.top_z - charges.z[label] if label else charges.top_z + 2.0,
            "chg_rank": _log_rank(charges.rank.get(label) if label else None),
            "prior": math.log1p(label_counts.get(label, 0)) if label else 0.0,
            "art_p": articles_rank.p.get(number, 0.0),
            "art_margin": articles_rank.top_z - articles_rank.z[number] if number in articles_rank.z else articles_rank.top_z + 2.0,
            "art_rank": _log_rank(articles_rank.rank.get(number)),
            "rule_sim": rule_sims.get(a.article_pk, 0.0),
            "rule_margin": best_rule - rule_sims.get(a.article_pk, 0.0),
            "rule_rank": _log_rank(rule_order.get(a.article_pk)),
            "fact_share": fact,
            **{f"vote_{p}": (votes.get(p) or {}).get(a.article_pk, 0.0) for p in PATHS},
            "art_path": art_hits.get(a.article_pk, 0.0),
            "items_supported": float(len(supported)),
            "items_share": len(supported) / len(items) if items else 0.0,
            "item_first": float(bool(items) and min(items, key=lambda i: i.order).satisfied),
            "item_p_max": max((i.score for i in items), default=0.0),
            "item_p_mean": sum(i.score for i in items) / len(items) if items else 0.0,
            "charges_defined": float(len(a.charges)),
            "sub_article": float("-" in str(a.key)),
        }
        out.append({name: round(float(row[name]), 6) for name in FEATURES})
    return out


def cosine(a: Mapping[int, float], b: Mapping[int, float]) -> float:
    """Cosine of two L2-normalised sparse vectors given as {index: value}."""
    if len(a) > len(b):
        a, b = b, a
    return float(sum(v * b.get(i, 0.0) for i, v in a.items()))
