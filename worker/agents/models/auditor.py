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
from worker.agents.models.trees import ARRAYS as TREE_ARRAYS, TreeEnsemble, matrix

FORMAT = "lextrace.article_auditor"
FORMAT_VERSION = 2  # 2: the kind, and boosted trees; 1 (logistic only) is still read
MANIFEST = "auditor.json"
ARRAYS = {"logistic": ("mean", "scale", "coef"), "boosted": TREE_ARRAYS}


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
            self.trees = TreeEnsemble(n_features=d, intercept=intercept, **arrays)
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
        if self.kind == "boosted":
            return self.trees.arrays()
        return {"mean": self.mean, "scale": self.scale, "coef": self.coef}

    def __repr__(self) -> str:
        return f"ArticleAuditor({self.kind}, signals={len(self.features)}, id={self.model_id[:12]})"

    # -- inference --------------------------------------------------------------------
    def log_odds(self, rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        X = matrix(rows, self.features)
        if self.kind == "logistic":
            return ((X - self.mean) / self.scale) @ self.coef + self.intercept
        return self.trees.raw(X)

    def probabilities(self, rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        """P(article applies) for each row of signals."""
        if not rows:
            return np.zeros(0)
        return sigmoid(self.log_odds(rows))

    def contributions(self, row: Mapping[str, float]) -> dict[str, float]:
        """Each kind of evidence's share of the log-odds (the intercept and the trees' base apart), by
        signals.GROUPS."""
        x = matrix([row], self.features)[0]
        if self.kind == "logistic":
            parts = (x - self.mean) / self.scale * self.coef
        else:
            parts = self.trees.contributions(x)
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
