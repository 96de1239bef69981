"""Retrieval arithmetic shared by the Researcher's paths (pure).

LexPath-style score fusion: each score is squashed to (0, 1) with
½ + arctan(r)/π, then r = α·sparse + (1 − α)·dense (α = 0.4 by default). A document that
one retriever did not return contributes 0 for that retriever, so documents
both retrievers found rank above single-source hits of similar strength.

Intent-aware reranking: a query asks for a definition, the applicability of
an article to facts, the consequence (penalty), a procedure, or other; each
article text is classified the same way and an article whose intent matches
the query's gets a bonus. The classifier is the trained intent model
(:class:`IntentClassifier`, training/intent.py) when one is active, else the
cue rules below.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

INTENTS = ("definition", "applicability", "consequence", "procedure", "other")

_INTENT_PATTERNS = {
    "definition": re.compile(r"是指|所称|本法所说|包括|属于|视为|以.{0,6}论"),
    "consequence": re.compile(r"处.{0,12}(?:有期徒刑|拘役|管制|罚金|死刑|无期徒刑)|并处|从重|从轻|减轻|免除处罚"),
    "procedure": re.compile(r"告诉的才处理|追诉|时效|管辖|审判|起诉|程序|期限"),
    "applicability": re.compile(r"被告人|公诉机关|指控|经审理查明|案发|被害人|于.{0,12}时许"),
}


def squash(score: float) -> float:
    return 0.5 + math.atan(score) / math.pi


def fuse(sparse: dict, dense: dict, *, alpha: float = 0.4) -> dict:
    """Fuse two {doc: raw score} maps into {doc: fused score} (higher is better)."""
    fused = {}
    for doc in set(sparse) | set(dense):
        s = squash(sparse[doc]) if doc in sparse else 0.0
        d = squash(dense[doc]) if doc in dense else 0.0
        fused[doc] = alpha * s + (1 - alpha) * d
    return fused


def classify_intent(text: str) -> str:
    """The intent a text expresses, by the first matching cue in a fixed priority order."""
    for intent in ("applicability", "procedure", "definition", "consequence"):
        if _INTENT_PATTERNS[intent].search(text):
            return intent
    return "other"


def article_intents(text: str) -> set[str]:
    return {intent for intent, pattern in _INTENT_PATTERNS.items() if pattern.search(text)} or {"other"}


# A fact description seeks the articles that apply to it, which are the ones
# stating both an offence and its consequence.
_WANTED = {"applicability": {"consequence", "definition"}, "consequence": {"consequence"},
           "definition": {"definition"}, "procedure": {"procedure"}, "other": set()}


class IntentClassifier:
    """The trained intent model (a calibrated multilabel LinearTextModel over INTENTS) behind the
    two questions the rerank asks: the query's intent (most probable) and a text's intents
    (every intent with p >= threshold, and the most probable one)."""

    def __init__(self, model, tokenize, threshold: float = 0.5):
        self.model, self.tokenize, self.threshold = model, tokenize, threshold

    def classify(self, text: str) -> str:
        best = self.model.top(self.tokenize(text), k=1)
        return str(best[0][0]) if best else "other"

    def intents(self, text: str) -> set[str]:
        return {str(label) for label, _ in self.model.predict_labels(self.tokenize(text), self.threshold)} or {"other"}


def rerank_by_intent(query: str, scored: dict, texts: dict, *, bonus: float = 0.1,
                     classifier: IntentClassifier | None = None) -> list[tuple[object, float]]:
    """Add ``bonus`` to documents whose intents answer the query's intent; sort best first (ties by id)."""
    classify, intents_of = (classifier.classify, classifier.intents) if classifier else (classify_intent, article_intents)
    wanted = _WANTED.get(classify(query), set())
    out = {doc: score + (bonus if wanted & intents_of(texts.get(doc, "")) else 0.0) for doc, score in scored.items()}
    return sorted(out.items(), key=lambda kv: (-kv[1], str(kv[0])))


def top(items: Iterable[tuple[object, float]], k: int) -> list[tuple[object, float]]:
    return sorted(items, key=lambda kv: (-kv[1], str(kv[0])))[:k]
