"""The GRPO reward of an agentic planner trajectory (pure, no torch).

    total = w_acc · accuracy + w_align · alignment + w_gain · evidence_gain + w_query · query_quality
            + w_format · format − w_verbose · verbosity − w_repeat · repetition

Components, each in [0, 1]:

- accuracy: the judgment reached from the planner's evidence against the gold labels:
  0.5 · charge F1 + 0.3 · article F1 + 0.2 · term closeness, where term closeness is
  1 − min(1, |PSI(predicted) − PSI(gold)| / max(PSI(gold), 30)) (worker.agents.models.priors). No
  judgment (the planner found nothing the Auditor verified) scores 0.
- alignment: agreement with a reference trajectory (an approved run's planner steps):
  0.7 · LCS(action sequence) / max(len) + 0.3 · mean best query similarity (character-bigram
  Jaccard) of the search steps. Without a reference: 0 (the weight is then unused).
- evidence_gain: the share of the gold articles and gold charges that the searches brought
  into view (an article result whose label is the gold article; a result whose charges name a
  gold charge).
- query_quality: mean over search steps; 1 for a query that is short (≤ 120 characters),
  shares wording with the facts and is not a copy of them (≤ 60 % of the facts' bigrams);
  0.5 for a long or copied query or one unrelated to the facts; 0 for an empty one.
- format: 1 when every planner reply was a valid action and the trajectory ends with stop;
  0.5 when every reply was valid but it never stopped (a cap ended it); 0 otherwise.
- verbosity (penalty): completion tokens beyond ``max_tokens``, as a share of ``max_tokens``,
  capped at 1.
- repetition (penalty): the share of search steps that repeat an earlier (action, query).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from worker.agents.models.priors import psi, sentence_of
from worker.agents.numerals import article_label

SEARCHES = ("search_statutes", "search_interpretations", "search_precedents")


@dataclass(frozen=True)
class RewardWeights:
    accuracy: float = 1.0
    alignment: float = 0.5
    evidence_gain: float = 0.5
    query_quality: float = 0.25
    format: float = 0.25
    verbosity: float = 0.1
    repetition: float = 0.25


def _grams(text: str) -> set[str]:
    text = "".join(text.split())
    return {text[i:i + 2] for i in range(len(text) - 1)}


def _jaccard(a: str, b: str) -> float:
    ga, gb = _grams(a), _grams(b)
    return len(ga & gb) / len(ga | gb) if ga and gb else 0.0


def _f1(predicted: Sequence, gold: Sequence) -> float:
    p, g = {str(x) for x in predicted}, {str(x) for x in gold}
    if not p and not g:
        return 1.0
    tp = len(p & g)
    return 2 * tp / (len(p) + len(g)) if (p or g) else 0.0


def _norm_charge(name: str) -> str:
    return name if name.endswith("罪") else name + "罪"


def term_closeness(predicted, gold) -> float:
    if gold is None:
        return 0.0
    if predicted is None:
        return 0.0
    a, b = psi(sentence_of(predicted)), psi(sentence_of(gold))
    return max(0.0, 1.0 - min(1.0, abs(a - b) / max(b, 30.0)))


def accuracy(judgment: dict | None, gold: dict) -> float:
    if not judgment:
        return 0.0
    charges = _f1([_norm_charge(c) for c in judgment.get("charges") or []], [_norm_charge(c) for c in gold.get("charges") or []])
    articles = _f1([str(a).split("-")[0] for a in judgment.get("articles") or []], [str(a) for a in gold.get("articles") or []])
    return 0.5 * charges + 0.3 * articles + 0.2 * term_closeness(judgment.get("term"), gold.get("term"))


def _lcs(a: Sequence, b: Sequence) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
    return table[-1][-1]


def alignment(steps: Sequence[dict], reference: Sequence[dict] | None) -> float:
    if not reference:
        return 0.0
    mine, theirs = [s.get("action") for s in steps], [s.get("action") for s in reference]
    order = _lcs(mine, theirs) / max(len(mine), len(theirs), 1)
    searches = [s for s in steps if s.get("action") in SEARCHES]
    ref_searches = [s for s in reference if s.get("action") in SEARCHES]
    if searches and ref_searches:
        queries = sum(max(_jaccard(s.get("query", ""), r.get("query", "")) for r in ref_searches if r["action"] == s["action"])
                      if any(r["action"] == s["action"] for r in ref_searches) else 0.0 for s in searches) / len(searches)
    else:
        queries = 1.0 if not searches and not ref_searches else 0.0
    return 0.7 * order + 0.3 * queries


def evidence_gain(steps: Sequence[dict], gold: dict) -> float:
    articles = [article_label(int(a)) for a in gold.get("articles") or []]
    charges = [_norm_charge(c) for c in gold.get("charges") or []]
    if not articles and not charges:
        return 0.0
    results = [r for s in steps for r in s.get("results") or []]
    labels = {r.get("label", "") for r in results if r.get("kind") == "article"}
    named = " ".join(f"{r.get('label', '')} {r.get('detail', '')}" for r in results)
    found = sum(1 for a in articles if a in labels) + sum(1 for c in charges if c in named)
    return found / (len(articles) + len(charges))


def query_score(query: str, facts: str) -> float:
    query = query.strip()
    if not query:
        return 0.0
    q, f = _grams(query), _grams(facts)
    related = bool(q & f)
    copied = bool(f) and len(q & f) / len(f) > 0.6
    return 1.0 if len(query) <= 120 and related and not copied else 0.5


def query_quality(steps: Sequence[dict], facts: str) -> float:
    searches = [s for s in steps if s.get("action") in SEARCHES]
    if not searches:
        return 0.0
    return sum(query_score(s.get("query", ""), facts) for s in searches) / len(searches)


def format_score(steps: Sequence[dict], all_valid: bool) -> float:
    if not all_valid or not steps:
        return 0.0
    return 1.0 if steps[-1].get("action") == "stop" else 0.5


def verbosity(tokens: int, max_tokens: int) -> float:
    return min(1.0, max(0, tokens - max_tokens) / max_tokens) if max_tokens > 0 else 0.0


def repetition(steps: Sequence[dict]) -> float:
    searches = [(s.get("action"), "".join(s.get("query", "").split()).lower()) for s in steps if s.get("action") in SEARCHES]
    if not searches:
        return 0.0
    return (len(searches) - len(set(searches))) / len(searches)


@dataclass(frozen=True)
class Reward:
    accuracy: float
    alignment: float
    evidence_gain: float
    query_quality: float
    format: float
    verbosity: float
    repetition: float
    total: float

    def as_dict(self) -> dict:
        return asdict(self)


def reward(trajectory: dict, *, gold: dict, facts: str, reference: Sequence[dict] | None = None,
           weights: RewardWeights = RewardWeights(), max_tokens: int = 256) -> Reward:
    """The reward of one trajectory: ``{"steps": [{action, query, results}], "judgment": {charges, articles,
    term} | None, "valid": every reply parsed as an action, "tokens": completion tokens}``."""
    steps = list(trajectory.get("steps") or [])
    parts = {
        "accuracy": accuracy(trajectory.get("judgment"), gold),
        "alignment": alignment(steps, reference),
        "evidence_gain": evidence_gain(steps, gold),
        "query_quality": query_quality(steps, facts),
        "format": format_score(steps, bool(trajectory.get("valid", True))),
        "verbosity": verbosity(int(trajectory.get("tokens") or 0), max_tokens),
        "repetition": repetition(steps),
    }
    total = (weights.accuracy * parts["accuracy"] + weights.alignment * parts["alignment"]
             + weights.evidence_gain * parts["evidence_gain"] + weights.query_quality * parts["query_quality"]
             + weights.format * parts["format"] - weights.verbosity * parts["verbosity"]
             - weights.repetition * parts["repetition"])
    return Reward(**{k: round(v, 6) for k, v in parts.items()}, total=round(total, 6))
