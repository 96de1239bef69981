"""Linear text models: TF-IDF features and one linear layer, inference in numpy.

``training/`` fits these models with scikit-learn and converts the fitted
estimators into the plain arrays held here, so the reasoning core predicts
charges, articles and terms without scikit-learn and without unpickling
anything. An artefact is a directory::

    model.json        format, kind, labels, vocabulary, config, metadata, ids
    idf.npy           (n_features,)            float64
    coef.npy          (n_features, n_outputs)  float64, feature-major
    intercept.npy     (n_outputs,)             float64
    calibration.npy   (n_outputs, 2)           float64: slope, offset (multilabel)

Identity, saving and loading are those of every artefact (worker/agents/models/artefact.py):
``weights_sha256`` covers what determines the outputs (kind, labels, vocabulary,
config, arrays) and ``model_id`` covers that plus the metadata; both are
recomputed on load and a mismatch refuses the artefact.

Features reproduce scikit-learn's ``TfidfVectorizer(sublinear_tf=True,
norm="l2", smooth_idf=True)`` over the terms of :func:`terms`: tf = 1 + ln(count),
times idf, L2-normalised. Terms outside the vocabulary are ignored.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from statistics import NormalDist
from typing import Any

import numpy as np

from worker.agents.models.artefact import Artefact, jsonable, sha256_json
from worker.agents.models.trees import ARRAYS as TREE_ARRAYS, TreeEnsemble

FORMAT = "lextrace.linear_text_model"
FORMAT_VERSION = 1
KINDS = ("multilabel", "regression")
TARGET_TRANSFORMS = (None, "log1p")
MANIFEST = "model.json"
_ARRAYS = ("idf", "coef", "intercept", "calibration")

TERM_FORMAT = "lextrace.term_model"
TERM_PARTS = ("months", "life", "death")

Label = str | int

CHAR_PREFIX = "#"


def terms(tokens: Sequence[str], bigrams: bool, char_ngrams: Sequence[int] | None = None) -> list[str]:
    """The terms a document is made of: its tokens, then adjacent pairs joined by a space, then
    (with ``char_ngrams`` = (lo, hi)) the character n-grams of the joined tokens, prefixed by "#".

    Tokens never contain spaces or "#" (the tokenizer strips whitespace and punctuation), so no
    kind of term can collide with another. Character n-grams over the tokens (stopwords, numbers and
    punctuation already removed) reach the sub-word units of long legal compounds that the
    segmentation splits differently from one text to the next.
    """
    out = list(tokens)
    if bigrams:
        out.extend(f"{a} {b}" for a, b in zip(tokens, tokens[1:]))
    if char_ngrams:
        lo, hi = int(char_ngrams[0]), int(char_ngrams[1])
        text = "".join(tokens)
        out.extend(CHAR_PREFIX + text[i:i + n] for n in range(lo, hi + 1) for i in range(len(text) - n + 1))
    return out


def sigmoid(z: np.ndarray) -> np.ndarray:
    """Numerically stable logistic function (no overflow warning for large |z|)."""
    z = np.asarray(z, dtype=np.float64)
    out = np.empty_like(z)
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    ez = np.exp(z[~pos])
    out[~pos] = ez / (1.0 + ez)
    return out


class LinearTextModel(Artefact):
    """TF-IDF + linear layer. ``kind`` is "multilabel" (one calibrated sigmoid per
    label) or "regression" (one output, optionally trained on log1p of the target).

    Inputs are token lists from a tokenizer whose fingerprint equals
    ``metadata["tokenizer"]["fingerprint"]``; another segmentation silently
    lowers accuracy, so callers should check it.
    """

    FORMAT = FORMAT
    MANIFEST = MANIFEST
    ARRAYS = _ARRAYS

    def __init__(
        self,
        *,
        kind: str,
        vocab: Sequence[str],
        idf: np.ndarray,
        coef: np.ndarray,
        intercept: np.ndarray,
        labels: Sequence[Label] | None = None,
        calibration: np.ndarray | None = None,
        config: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        config = dict(config or {})
        config.setdefault("bigrams", False)
        config.setdefault("sublinear_tf", True)
        config.setdefault("norm", "l2")
        config.setdefault("threshold", 0.5)
        config.setdefault("target_transform", None)
        if config["norm"] != "l2" or config["sublinear_tf"] is not True:
            raise ValueError("only sublinear tf with l2 normalisation is implemented")
        if config["target_transform"] not in TARGET_TRANSFORMS:
            raise ValueError(f"target_transform must be one of {TARGET_TRANSFORMS}")
        self.kind = kind
        self.config: dict[str, Any] = jsonable(config)
        self.vocab: list[str] = [str(t) for t in vocab]
        self.idf = np.ascontiguousarray(idf, dtype=np.float64)
        # Wide vocabularies (character n-grams) keep their weights in float32: half the memory of every
        # process that loads the model, and far below the TF-IDF precision that matters.
        coef = np.asarray(coef)
        self.coef = np.ascontiguousarray(coef, dtype=np.float32 if coef.dtype == np.float32 else np.float64)
        self.intercept = np.ascontiguousarray(intercept, dtype=np.float64).reshape(-1)
        n_features = len(self.vocab)
        n_outputs = self.intercept.shape[0]
        if self.idf.shape != (n_features,):
            raise ValueError(f"idf shape {self.idf.shape} != ({n_features},)")
        if self.coef.shape != (n_features, n_outputs):
            raise ValueError(f"coef shape {self.coef.shape} != ({n_features}, {n_outputs})")
        if len(set(self.vocab)) != n_features:
            raise ValueError("duplicate terms in the vocabulary")
        if kind == "multilabel":
            if labels is None or len(labels) != n_outputs:
                raise ValueError("a multilabel model needs one label per output")
            self.labels: list[Label] = [jsonable(lab) for lab in labels]
            if len(set(self.labels)) != len(self.labels):
                raise ValueError("duplicate labels")
            if calibration is None:
                calibration = np.tile([1.0, 0.0], (n_outputs, 1))
            self.calibration = np.ascontiguousarray(calibration, dtype=np.float64)
            if self.calibration.shape != (n_outputs, 2):
                raise ValueError(f"calibration shape {self.calibration.shape} != ({n_outputs}, 2)")
        else:
            if n_outputs != 1:
                raise ValueError("a regression model has exactly one output")
            if calibration is not None:
                raise ValueError("calibration applies to multilabel models only")
            self.labels = []
            self.calibration = np.zeros((0, 2), dtype=np.float64)
        for name in _ARRAYS:
            if not np.all(np.isfinite(getattr(self, name))):
                raise ValueError(f"{name} holds NaN or infinity")
        self.metadata: dict[str, Any] = jsonable(dict(metadata or {}))
        self._index: dict[str, int] | None = None
        self._label_index = {lab: i for i, lab in enumerate(self.labels)}

    # ------------------------------------------------------------------ identity
    def _record(self) -> dict[str, Any]:
        return {"format": FORMAT, "format_version": FORMAT_VERSION, "kind": self.kind, "labels": self.labels,
                "vocab": self.vocab, "config": self.config}

    @property
    def n_features(self) -> int:
        return len(self.vocab)

    def __repr__(self) -> str:
        return (
            f"LinearTextModel(kind={self.kind!r}, outputs={self.intercept.shape[0]}, "
            f"features={self.n_features}, id={self.model_id[:12]})"
        )

    # ------------------------------------------------------------------ features
    def _term_index(self) -> dict[str, int]:
        if self._index is None:
            self._index = {t: i for i, t in enumerate(self.vocab)}
        return self._index

    def vectorize(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The document's sparse TF-IDF row: (feature indices, L2-normalised values)."""
        index = self._term_index()
        counts = Counter(index[t] for t in terms(tokens, self.config["bigrams"], self.config.get("char_ngrams")) if t in index)
        if not counts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        idx = np.fromiter(sorted(counts), dtype=np.int64, count=len(counts))
        tf = np.fromiter((counts[i] for i in idx), dtype=np.float64, count=len(idx))
        vals = (1.0 + np.log(tf)) * self.idf[idx]
        norm = math.sqrt(float(vals @ vals))
        if norm > 0:
            vals /= norm
        return idx, vals

    # ------------------------------------------------------------------ outputs
    def decision(self, tokens: Sequence[str]) -> np.ndarray:
        """Raw linear outputs (logits, or the transformed regression target), shape (n_outputs,)."""
        idx, vals = self.vectorize(tokens)
        return vals @ self.coef[idx].astype(np.float64) + self.intercept

    def decision_many(self, token_lists: Iterable[Sequence[str]]) -> np.ndarray:
        rows = [self.decision(tokens) for tokens in token_lists]
        if not rows:
            return np.zeros((0, self.intercept.shape[0]))
        return np.vstack(rows)

    def _require(self, kind: str) -> None:
        if self.kind != kind:
            raise TypeError(f"this is a {self.kind} model, not {kind}")

    def _calibrate(self, z: np.ndarray) -> np.ndarray:
        return z * self.calibration[:, 0] + self.calibration[:, 1]

    def predict_proba(self, tokens: Sequence[str], *, calibrated: bool = True) -> np.ndarray:
        """One probability per label, in the order of :attr:`labels`."""
        self._require("multilabel")
        z = self.decision(tokens)
        return sigmoid(self._calibrate(z) if calibrated else z)

    def predict_proba_many(self, token_lists: Iterable[Sequence[str]], *, calibrated: bool = True) -> np.ndarray:
        self._require("multilabel")
        z = self.decision_many(token_lists)
        return sigmoid(self._calibrate(z) if calibrated else z)

    def top(self, tokens: Sequence[str], k: int = 5, min_p: float = 0.0) -> list[tuple[Label, float]]:
        """The k most probable labels with p >= min_p, most probable first (ties: label order)."""
        p = self.predict_proba(tokens)
        order = np.argsort(-p, kind="stable")[: max(k, 0)]
        return [(self.labels[i], float(p[i])) for i in order if p[i] >= min_p]

    def predict_labels(self, tokens: Sequence[str], threshold: float | None = None) -> list[tuple[Label, float]]:
        """The decision rule the evaluation uses: every label with p >= threshold
        (default ``config["threshold"]``), and the most probable label always."""
        p = self.predict_proba(tokens)
        return self.labels_from_proba(p, threshold)

    def labels_from_proba(self, p: np.ndarray, threshold: float | None = None) -> list[tuple[Label, float]]:
        threshold = self.config["threshold"] if threshold is None else threshold
        if p.shape[0] == 0:
            return []
        best = int(np.argmax(p))
        keep = [i for i in np.argsort(-p, kind="stable") if p[i] >= threshold or i == best]
        return [(self.labels[i], float(p[i])) for i in keep]

    def predict_value(self, tokens: Sequence[str]) -> float:
        """The regression estimate in the target's own unit (e.g. months)."""
        self._require("regression")
        return self._untransform(float(self.decision(tokens)[0]))

    def predict_values_many(self, token_lists: Iterable[Sequence[str]]) -> np.ndarray:
        self._require("regression")
        z = self.decision_many(token_lists)[:, 0]
        return np.array([self._untransform(float(v)) for v in z])

    def _untransform(self, v: float) -> float:
        if self.config["target_transform"] == "log1p":
            return max(0.0, math.expm1(min(v, 700.0)))
        return v

    def explain(self, tokens: Sequence[str], label: Label | None = None, n: int = 5) -> list[tuple[str, float]]:
        """The terms of this document that pushed ``label`` up most.

        Each contribution is tf-idf value x weight (x the label's calibration
        slope), i.e. the term's additive share of the calibrated logit (or of
        the transformed regression output); only positive shares are listed,
        largest first. Together with the intercept and the negative shares they
        sum to the score, so the UI can show them as they are.
        """
        if self.kind == "multilabel":
            if label not in self._label_index:
                raise KeyError(f"unknown label {label!r}")
            k = self._label_index[label]
            scale = self.calibration[k, 0]
        else:
            if label is not None:
                raise ValueError("a regression model has no labels")
            k, scale = 0, 1.0
        idx, vals = self.vectorize(tokens)
        contrib = vals * self.coef[idx, k] * scale
        order = np.lexsort((idx, -contrib))  # largest first; ties by vocabulary order
        return [(self.vocab[idx[i]], float(contrib[i])) for i in order[:n] if contrib[i] > 0]

    # ------------------------------------------------------------------ storage
    @classmethod
    def _from_stored(cls, manifest: dict[str, Any], arrays: dict[str, np.ndarray], parts: dict) -> LinearTextModel:
        for name, a in arrays.items():
            if a.dtype != np.float64 and not (name == "coef" and a.dtype == np.float32):
                raise ValueError(f"{name}.npy: dtype {a.dtype}, expected float64")
        multilabel = manifest["kind"] == "multilabel"
        return cls(kind=manifest["kind"], vocab=manifest["vocab"], labels=manifest["labels"] if multilabel else None,
                   config=manifest["config"], metadata=manifest.get("metadata") or {}, idf=arrays["idf"],
                   coef=arrays["coef"], intercept=arrays["intercept"],
                   calibration=arrays["calibration"] if multilabel else None)


ADJUST_FORMAT = "lextrace.term_adjustment"


class TermAdjustment(Artefact):
    """The term model's adjustment of its months estimate: gradient-boosted trees (worker/agents/models/trees.py)
    over log1p of the linear estimate and the dense sentencing facts ``features`` (worker/agents/models/
    sentencing.py SENTENCING_FEATURES), fitted to the absolute error on out-of-fold estimates (training/term.py)."""

    FORMAT = ADJUST_FORMAT
    MANIFEST = "trees.json"
    ARRAYS = TREE_ARRAYS

    def __init__(self, *, features: Sequence[str], trees: TreeEnsemble, metadata: Mapping[str, Any] | None = None):
        self.features = tuple(str(f) for f in features)
        if trees.n_features != 1 + len(self.features):
            raise ValueError("the adjustment's inputs do not match its features")
        self.trees = trees
        self.metadata: dict[str, Any] = jsonable(dict(metadata or {}))

    def _record(self) -> dict[str, Any]:
        return {"format": ADJUST_FORMAT, "format_version": 1, "features": ["months_log", *self.features],
                "intercept": self.trees.intercept}

    def _arrays(self) -> dict[str, np.ndarray]:
        return self.trees.arrays()

    def months(self, linear: float, context: Mapping[str, float]) -> float:
        x = [math.log1p(max(linear, 0.0)), *(float(context.get(f, 0.0)) for f in self.features)]
        return max(0.0, math.expm1(float(self.trees.raw(np.array([x]))[0])))

    @classmethod
    def _from_stored(cls, manifest: dict[str, Any], arrays: dict[str, np.ndarray], parts: dict) -> TermAdjustment:
        features = list(manifest["features"])
        return cls(features=features[1:], metadata=manifest.get("metadata") or {},
                   trees=TreeEnsemble(n_features=len(features), intercept=manifest["intercept"], **arrays))


class TermModel(Artefact):
    """Sentence from three linear models: months (regression, usually on log1p),
    and life and death (single-label multilabel models, calibrated); optionally an adjustment of the months
    (:class:`TermAdjustment`), read when a judgment gives the sentencing facts.

    Decision rule (CAIL convention: months = 0 for life imprisonment and death). With a ``spread`` (the
    standard deviation of the months estimate's error in log1p months, measured out of fold when training): the
    median of the sentence the models describe (:func:`median_sentence`), the answer with the least expected
    absolute error. Without one (models trained before it was measured): death if p_death >= threshold and
    p_death >= p_life; else life if p_life >= threshold; else the rounded months estimate.

    A composite artefact: the three models (and the adjustment, when there is one) are its parts
    (subdirectories), named in its record by their ids; it has no weights of its own, and its id hashes the
    record and its metadata (a model without an adjustment keeps the id it had before adjustments existed).
    """

    FORMAT = TERM_FORMAT
    MANIFEST = MANIFEST
    PARTS = {**dict.fromkeys(TERM_PARTS, LinearTextModel), "adjust": TermAdjustment}
    OPTIONAL_PARTS = frozenset({"adjust"})
    weights_sha256 = None

    def __init__(
        self,
        *,
        months: LinearTextModel,
        life: LinearTextModel,
        death: LinearTextModel,
        threshold: float = 0.5,
        metadata: Mapping[str, Any] | None = None,
        adjust: TermAdjustment | None = None,
        spread: float | None = None,
    ) -> None:
        months._require("regression")
        for part in (life, death):
            part._require("multilabel")
            if len(part.labels) != 1:
                raise ValueError("life and death models have exactly one label")
        self.months, self.life, self.death = months, life, death
        self.adjust = adjust
        self.threshold = float(threshold)
        self.spread = None if spread is None else float(spread)
        self.metadata: dict[str, Any] = jsonable(dict(metadata or {}))

    def _record(self) -> dict[str, Any]:
        record = {"format": TERM_FORMAT, "format_version": FORMAT_VERSION,
                  "parts": {name: part.model_id for name, part in self._parts().items()}, "threshold": self.threshold}
        if self.spread is not None:  # a model without one keeps the id it had before the spread was measured
            record["spread"] = self.spread
        return record

    @property
    def model_id(self) -> str:
        return sha256_json({**self._record(), "metadata": self.metadata})

    def predict(self, tokens: Sequence[str], context: Mapping[str, float] | None = None) -> dict[str, Any]:
        """{"months": int, "life": bool, "death": bool, "p_life", "p_death", "months_estimate", "months_linear"}.
        ``context``: the sentencing facts (worker.agents.models.sentencing.sentencing_features) for the adjustment;
        without it, or without an adjustment, the linear estimate stands. ``months_estimate`` is the fixed term's
        estimate; ``months`` the term decided, raised above it by the chance of life or death (a ``spread``)."""
        p_life = float(self.life.predict_proba(tokens)[0])
        p_death = float(self.death.predict_proba(tokens)[0])
        linear = estimate = self.months.predict_value(tokens)
        if self.adjust is not None and context is not None:
            estimate = self.adjust.months(linear, context)
        if self.spread is not None:
            kind, fixed = median_sentence(estimate, p_life, p_death, self.spread)
            life, death = kind == "life", kind == "death"
        else:
            death = p_death >= self.threshold and p_death >= p_life
            life = not death and p_life >= self.threshold
            fixed = estimate
        months = 0 if (life or death) else int(round(fixed))
        return {
            "months": months,
            "life": life,
            "death": death,
            "p_life": p_life,
            "p_death": p_death,
            "months_estimate": estimate,
            "months_linear": linear,
        }

    @classmethod
    def _from_stored(cls, manifest: dict[str, Any], arrays: dict, parts: dict[str, Artefact]) -> TermModel:
        return cls(**parts, threshold=manifest["threshold"], metadata=manifest.get("metadata") or {},
                   spread=manifest.get("spread"))


FIXED_TERM_MAX_MONTHS = 300  # no fixed term exceeds 25 years, offences combined (Criminal Law art. 69)


def median_sentence(estimate: float, p_life: float, p_death: float, spread: float) -> tuple[str, float]:
    """("fixed", months), ("life", 0) or ("death", 0): the median of the sentence the term models describe, in the
    order of severity: a fixed term with probability 1 - p_life - p_death, spread log-normally around ``estimate``
    (``spread``: the standard deviation in log1p months) and below life; then life; then death (the two scaled to
    a total of 1 when they exceed it). The median is the answer with the least expected absolute error: a case
    whose facts give a fifth of a chance to life imprisonment gets the fixed term's 62.5th percentile, not its median.
    """
    total = p_life + p_death
    if total > 1:
        p_life, p_death, total = p_life / total, p_death / total, 1.0
    fixed = 1.0 - total
    if fixed > 0.5:
        z = NormalDist().inv_cdf(0.5 / fixed)
        return "fixed", min(float(FIXED_TERM_MAX_MONTHS), math.expm1(math.log1p(max(estimate, 0.0)) + spread * z))
    return ("life", 0.0) if fixed + p_life >= 0.5 else ("death", 0.0)
