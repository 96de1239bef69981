"""The checklist-item verifier: P(item satisfied by the facts), inference in numpy.

``training/verifier.py`` fits it with scikit-learn (weak supervision: the items
of the articles a precedent cites are satisfied by its facts, the items of
confusable articles it does not cite are not) and converts the calibrated
ensemble into the arrays held here; the reasoning core needs no scikit-learn.

Features of one (facts, item) pair, in the order of :data:`FEATURE_NAMES`. The
item's content is its question without the question scaffolding ("是否",
"行为人", particles, punctuation); grams are character bigrams (trigrams where
said); idf is computed over the training facts for the bigrams of the
checklist items (an unseen bigram gets the largest idf):

  best_share        largest share of the item's bigrams found in one sentence of the facts
  best_idf_share    the same share weighted by idf (rare terms count more)
  doc_share         share of the item's bigrams found anywhere in the facts
  doc_idf_share     the same, idf-weighted
  trigram_share     share of the item's character trigrams found anywhere in the facts
  feature_share     share of the item's bigrams covered by the abstract features of the
                    facts ("秘密窃取", "金额:千元至三万元"; features.extract_features)
  rarest_found      largest idf among the item's bigrams found in the facts / largest idf
                    among all its bigrams
  best_specific     largest share of one sentence, weighted by the bigrams' idf over the
                    checklist items themselves (terms specific to few items count more:
                    "秘密窃取" tells theft from robbery, "非法占有" does not)
  doc_specific      the same over the whole facts
  sentences_hit     log(1 + number of sentences holding at least half of the item's bigrams)
  item_length       log(1 + number of the item's bigrams)

The model is the average of k calibrated logistic regressions (scikit-learn's
``CalibratedClassifierCV`` with sigmoid calibration): each standardises the
features, takes a linear logit z and maps it through its own Platt sigmoid
1 / (1 + exp(a·z + b)); the probability is the mean over the k members. The
artefact (``verifier.json`` plus one .npy file per array) is stored and checked
like every artefact (worker/agents/models/artefact.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from worker.agents.models.artefact import Artefact, jsonable
from worker.agents.models.textmodel import sigmoid
from worker.agents.stages.features import extract_features

FORMAT = "lextrace.checklist_verifier"
FORMAT_VERSION = 1
MANIFEST = "verifier.json"
_ARRAYS = ("idf", "item_idf", "mean", "scale", "coef", "intercept", "platt")

FEATURE_NAMES = ("best_share", "best_idf_share", "doc_share", "doc_idf_share", "trigram_share", "feature_share",
                 "rarest_found", "sentences_hit", "item_length", "best_specific", "doc_specific")

QUESTION_NOISE = re.compile(r"是否|或者|以及|并且|行为人|被告人|其|的|了|是|否|有无|存在|构成|达到|标准|[，。、；：？?（）()\s]")
SENTENCE = re.compile(r"[^。；;！？!?\n]+[。；;！？!?]?")


def grams(text: str, n: int = 2) -> set[str]:
    return {text[i:i + n] for i in range(len(text) - n + 1)}


def item_content(question: str) -> str:
    return QUESTION_NOISE.sub("", question)


class FactsView:
    """What the features need from one fact text, computed once for all items."""

    def __init__(self, facts: str):
        self.facts = facts
        self.sentences = [(m.start(), m.end(), m.group()) for m in SENTENCE.finditer(facts)] or [(0, len(facts), facts)]
        self.sentence_grams = [grams(s) for _, _, s in self.sentences]
        self.doc_grams = set().union(*self.sentence_grams) if self.sentence_grams else set()
        self.doc_trigrams = grams(facts, 3)
        labels = [label.split(":")[-1] for _, label in extract_features(facts).labels()]
        self.feature_grams = [grams(label) for label in labels]


def pair_features(view: FactsView, question: str, idf_of: Callable[[str], tuple[float, float]]) -> tuple[np.ndarray, tuple[int, int] | None]:
    """The feature vector of (facts, item) and the span of the best sentence (None without any overlap)."""
    content = item_content(question)
    g = grams(content)
    if not g:
        return np.zeros(len(FEATURE_NAMES)), None
    both = {b: idf_of(b) for b in g}
    weights = {b: w[0] for b, w in both.items()}
    specific = {b: w[1] for b, w in both.items()}
    total_w = sum(weights.values())
    total_s = sum(specific.values())
    best = best_w = best_s = 0.0
    where = None
    hit_sentences = 0
    for (start, end, _), sg in zip(view.sentences, view.sentence_grams):
        common = g & sg
        share = len(common) / len(g)
        if share > best:
            best, where = share, (start, end)
        best_w = max(best_w, sum(weights[b] for b in common) / total_w)
        best_s = max(best_s, sum(specific[b] for b in common) / total_s)
        hit_sentences += share >= 0.5
    found = g & view.doc_grams
    tri = grams(content, 3)
    covered = set()
    for fg in view.feature_grams:
        if fg and len(g & fg) / len(fg) >= 0.99:
            covered |= g & fg
    max_w = max(weights.values())
    features = np.array([
        best,
        best_w,
        len(found) / len(g),
        sum(weights[b] for b in found) / total_w,
        len(tri & view.doc_trigrams) / len(tri) if tri else 0.0,
        len(covered) / len(g),
        max((weights[b] for b in found), default=0.0) / max_w if max_w > 0 else 0.0,
        math.log1p(hit_sentences),
        math.log1p(len(g)),
        best_s,
        sum(specific[b] for b in found) / total_s,
    ], dtype=np.float64)
    return features, where


class ChecklistVerifier(Artefact):
    """Calibrated P(satisfied) for checklist items given the facts."""

    FORMAT = FORMAT
    MANIFEST = MANIFEST
    ARRAYS = _ARRAYS

    def __init__(self, *, vocab: Sequence[str], idf: np.ndarray, item_idf: np.ndarray, mean: np.ndarray, scale: np.ndarray, coef: np.ndarray,
                 intercept: np.ndarray, platt: np.ndarray, threshold: float = 0.5,
                 metadata: Mapping[str, Any] | None = None):
        self.vocab = [str(v) for v in vocab]
        self.idf = np.ascontiguousarray(idf, dtype=np.float64).reshape(-1)
        self.item_idf = np.ascontiguousarray(item_idf, dtype=np.float64).reshape(-1)
        self.mean = np.ascontiguousarray(mean, dtype=np.float64).reshape(-1)
        self.scale = np.ascontiguousarray(scale, dtype=np.float64).reshape(-1)
        self.coef = np.ascontiguousarray(coef, dtype=np.float64)
        self.intercept = np.ascontiguousarray(intercept, dtype=np.float64).reshape(-1)
        self.platt = np.ascontiguousarray(platt, dtype=np.float64)
        d, k = len(FEATURE_NAMES), self.intercept.shape[0]
        if self.idf.shape != (len(self.vocab),) or self.item_idf.shape != self.idf.shape:
            raise ValueError("idf and vocabulary differ in length")
        if self.mean.shape != (d,) or self.scale.shape != (d,) or self.coef.shape != (k, d) or self.platt.shape != (k, 2):
            raise ValueError("array shapes do not match the feature set")
        if k < 1 or len(set(self.vocab)) != len(self.vocab):
            raise ValueError("no ensemble member, or duplicate vocabulary entries")
        for name in _ARRAYS:
            if not np.all(np.isfinite(getattr(self, name))):
                raise ValueError(f"{name} holds NaN or infinity")
        self.threshold = float(threshold)
        self.metadata: dict[str, Any] = jsonable(dict(metadata or {}))
        self._index = {b: i for i, b in enumerate(self.vocab)}
        self._unseen = (float(self.idf.max()) if self.idf.size else 1.0,
                        float(self.item_idf.max()) if self.item_idf.size else 1.0)

    # -- identity ------------------------------------------------------------------
    def _record(self) -> dict[str, Any]:
        return {"format": FORMAT, "format_version": FORMAT_VERSION, "features": list(FEATURE_NAMES),
                "vocab": self.vocab, "threshold": self.threshold}

    def __repr__(self) -> str:
        return f"ChecklistVerifier(members={self.intercept.shape[0]}, id={self.model_id[:12]})"

    # -- inference -------------------------------------------------------------------
    def idf_of(self, bigram: str) -> tuple[float, float]:
        """(idf over the training facts, idf over the checklist items) of an item bigram."""
        i = self._index.get(bigram)
        return (float(self.idf[i]), float(self.item_idf[i])) if i is not None else self._unseen

    def proba_features(self, X: np.ndarray) -> np.ndarray:
        """Mean calibrated probability of each row of raw features, shape (n,)."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        Z = ((X - self.mean) / self.scale) @ self.coef.T + self.intercept  # (n, k)
        P = sigmoid(-(Z * self.platt[:, 0] + self.platt[:, 1]))
        return P.mean(axis=1)

    def assess(self, facts: str | FactsView, questions: Sequence[str]) -> list[dict[str, Any]]:
        """For each question: probability, the best sentence's span and the raw features."""
        view = facts if isinstance(facts, FactsView) else FactsView(facts)
        rows, spans = [], []
        for q in questions:
            x, span = pair_features(view, q, self.idf_of)
            rows.append(x)
            spans.append(span)
        if not rows:
            return []
        probs = self.proba_features(np.vstack(rows))
        return [{"p": float(p), "span": span, "features": dict(zip(FEATURE_NAMES, map(float, x)))}
                for p, span, x in zip(probs, spans, rows)]

    # -- storage -----------------------------------------------------------------------
    @classmethod
    def _from_stored(cls, manifest: dict[str, Any], arrays: dict[str, np.ndarray], parts: dict) -> ChecklistVerifier:
        if manifest.get("features") != list(FEATURE_NAMES):
            raise ValueError("feature set unsupported")
        return cls(vocab=manifest["vocab"], threshold=manifest["threshold"], metadata=manifest.get("metadata") or {},
                   **arrays)
