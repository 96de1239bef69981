"""The learned Auditor: P(article applies | the evidence for it), inference in numpy.

``training/auditor.py`` fits a model over the label-agnostic signals of worker/agents/stages/auditor/signals.py,
computed leave-one-out for training cases (positives: the gold articles among the candidates; negatives:
the other candidates), with weights that make every charge count alike (the rare ones are where a court
needs help). Two kinds are stored here as plain arrays:

  boosted   gradient-boosted regression trees on the raw signals (format version 2): per node its split
            signal and threshold (or a leaf), its children and its value in log-odds, the values of inner
            nodes being the weighted means of the leaves below them, so a decision splits exactly into
            what each signal added along its path;
  logistic  a logistic regression on the standardised signals (mean, scale, coefficients; format
            version 1, still read);

plus the intercept (log-odds before any evidence) and the two thresholds:

  threshold        an article passes the Auditor when P >= threshold *and* at least one of its checklist
                   items is supported by the facts (an article with no element shown never passes);
  multi_threshold  the Adjudicator adds the charge of a further verified article when P >= multi_threshold
                   (the best verified article always gives a charge).

``contributions`` splits the log-odds into the kinds of evidence (signals.GROUPS), so the evidence viewer
can say what carried a decision: for the trees, each split's change of value goes to the signal it split
on (the path decomposition of a tree's prediction).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from worker.agents.models.artefact import Artefact, ModelIntegrityError, jsonable
from worker.agents.models.textmodel import sigmoid
from worker.agents.stages.auditor.signals import FEATURES, GROUPS

FORMAT = "lextrace.article_auditor"
FORMAT_VERSION = 2  # 2: the kind, and boosted trees; 1 (logistic only) is still read
MANIFEST = "auditor.json"
ARRAYS = {"logistic": ("mean", "scale", "coef"),
          "boosted": ("tree_feature", "tree_threshold", "tree_left", "tree_right", "tree_value", "tree_roots")}
LEAF = -1


class ArticleAuditor(Artefact):
    FORMAT = FORMAT
    FORMAT_VERSIONS = (1, FORMAT_VERSION)
    MANIFEST = MANIFEST

    def __init__(self, *, features: Sequence[str], intercept: float, threshold: float, multi_threshold: float,
                 kind: str = "logistic", metadata: Mapping[str, Any] | None = None, **arrays: np.ndarray):
        self.features = tuple(str(f) for f in features)
        unknown = set(self.features) - set(FEATURES)
        if unknown:
            raise ValueError(f"unknown signals {sorted(unknown)}")
        if kind not in ARRAYS:
            raise ValueError(f"unknown auditor kind {kind!r}")
        if set(arrays) != set(ARRAYS[kind]):
            raise ValueError(f"a {kind} auditor needs the arrays {ARRAYS[kind]}")
        self.kind = kind
        d = len(self.features)
        if kind == "logistic":
            self.mean, self.scale, self.coef = (np.asarray(arrays[n], dtype=np.float64).reshape(-1) for n in ARRAYS[kind])
            if not (self.mean.shape == self.scale.shape == self.coef.shape == (d,)):
                raise ValueError("array shapes do not match the signals")
            if not all(np.all(np.isfinite(a)) for a in (self.mean, self.scale, self.coef)) or np.any(self.scale <= 0):
                raise ValueError("non-finite weights or a non-positive scale")
        else:
            self.tree_feature, self.tree_left, self.tree_right, self.tree_roots = (
                np.asarray(arrays[n], dtype=np.int64).reshape(-1) for n in ("tree_feature", "tree_left", "tree_right", "tree_roots"))
            self.tree_threshold, self.tree_value = (np.asarray(arrays[n], dtype=np.float64).reshape(-1)
                                                    for n in ("tree_threshold", "tree_value"))
            n = len(self.tree_feature)
            inner = self.tree_feature != LEAF
            if not (self.tree_threshold.shape == self.tree_left.shape == self.tree_right.shape == self.tree_value.shape == (n,)):
                raise ValueError("tree arrays differ in length")
            if (np.any(self.tree_feature[inner] >= d) or np.any(self.tree_feature < LEAF)
                    or np.any((self.tree_left[inner] <= np.flatnonzero(inner)) | (self.tree_left[inner] >= n))
                    or np.any((self.tree_right[inner] <= np.flatnonzero(inner)) | (self.tree_right[inner] >= n))
                    or np.any((self.tree_roots < 0) | (self.tree_roots >= n))):
                raise ValueError("malformed trees (a child must come after its parent)")
            if not (np.all(np.isfinite(self.tree_threshold[inner])) and np.all(np.isfinite(self.tree_value))):
                raise ValueError("non-finite tree values")
            # children come after parents, so a path is at most as long as the largest tree
            self._depth = int(max(np.diff(np.append(self.tree_roots, n)), default=1))
        self.intercept = float(intercept)
        self.threshold = float(threshold)
        self.multi_threshold = float(multi_threshold)
        if not (0.0 <= self.threshold <= 1.0 and 0.0 <= self.multi_threshold <= 1.0):
            raise ValueError("thresholds are probabilities")
        self.metadata: dict[str, Any] = jsonable(dict(metadata or {}))

    # -- identity -----------------------------------------------------------------
    def _record(self) -> dict[str, Any]:
        record = {"format": FORMAT, "format_version": FORMAT_VERSION, "features": list(self.features),
                  "intercept": self.intercept, "threshold": self.threshold, "multi_threshold": self.multi_threshold}
        if self.kind == "logistic":  # the record of format version 1, so its ids stay what they were
            record["format_version"] = 1
        else:
            record["kind"] = self.kind
        return record

    def _arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in ARRAYS[self.kind]}

    def __repr__(self) -> str:
        return f"ArticleAuditor({self.kind}, signals={len(self.features)}, id={self.model_id[:12]})"

    # -- inference --------------------------------------------------------------------
    def _matrix(self, rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        return np.array([[float(r.get(f, 0.0)) for f in self.features] for r in rows],
                        dtype=np.float64).reshape(-1, len(self.features))

    def _leaves(self, X: np.ndarray) -> np.ndarray:
        """(rows, trees): the leaf each row reaches in each tree (the trees split single-precision values)."""
        X = X.astype(np.float32).astype(np.float64)
        at = np.broadcast_to(self.tree_roots, (X.shape[0], len(self.tree_roots))).copy()
        rows = np.arange(X.shape[0])[:, None]
        for _ in range(self._depth):
            feature = self.tree_feature[at]
            inner = feature != LEAF
            if not inner.any():
                break
            value = X[rows, np.where(inner, feature, 0)]
            step = np.where(value <= self.tree_threshold[at], self.tree_left[at], self.tree_right[at])
            at = np.where(inner, step, at)
        return at

    def log_odds(self, rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        X = self._matrix(rows)
        if self.kind == "logistic":
            return ((X - self.mean) / self.scale) @ self.coef + self.intercept
        return self.intercept + self.tree_value[self._leaves(X)].sum(axis=1)

    def probabilities(self, rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        """P(article applies) for each row of signals."""
        if not rows:
            return np.zeros(0)
        return sigmoid(self.log_odds(rows))

    def contributions(self, row: Mapping[str, float]) -> dict[str, float]:
        """Each kind of evidence's share of the log-odds (the intercept and the trees' base apart), by
        signals.GROUPS."""
        x = self._matrix([row])[0]
        if self.kind == "boosted":
            x = x.astype(np.float32).astype(np.float64)
        parts = np.zeros(len(self.features))
        if self.kind == "logistic":
            parts = (x - self.mean) / self.scale * self.coef
        else:
            for root in self.tree_roots:
                node = int(root)
                while self.tree_feature[node] != LEAF:
                    f = int(self.tree_feature[node])
                    child = int(self.tree_left[node] if x[f] <= self.tree_threshold[node] else self.tree_right[node])
                    parts[f] += self.tree_value[child] - self.tree_value[node]
                    node = child
        by_feature = dict(zip(self.features, parts))
        return {group: round(float(sum(by_feature.get(f, 0.0) for f in names)), 4)
                for group, names in GROUPS.items() if any(f in by_feature for f in names)}

    # -- storage ----------------------------------------------------------------------
    @classmethod
    def _array_names(cls, manifest: dict[str, Any]) -> tuple[str, ...]:
        version, kind = manifest.get("format_version"), manifest.get("kind", "logistic")
        if kind not in ARRAYS or (version == 1) != (kind == "logistic"):
            raise ModelIntegrityError(f"format version {version!r} / kind {kind!r} unsupported")
        return ARRAYS[kind]

    @classmethod
    def _from_stored(cls, manifest: dict[str, Any], arrays: dict[str, np.ndarray], parts: dict) -> ArticleAuditor:
        return cls(features=manifest["features"], intercept=manifest["intercept"], threshold=manifest["threshold"],
                   multi_threshold=manifest["multi_threshold"], kind=manifest.get("kind", "logistic"),
                   metadata=manifest.get("metadata") or {}, **arrays)
