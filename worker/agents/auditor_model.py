"""The learned Auditor: P(article applies | the evidence for it), inference in numpy.

``training/auditor.py`` fits a logistic regression over the label-agnostic signals of
worker/agents/signals.py, computed leave-one-out for training cases (positives: the gold articles
among the candidates; negatives: the other candidates), with weights that make every charge count
alike (the rare ones are where a court needs help). It is stored here as plain arrays: the
standardisation (mean, scale), the coefficients and the intercept, plus the two thresholds chosen on
the development split:

  threshold        an article passes the Auditor when P >= threshold *and* at least one of its checklist
                   items is supported by the facts (an article with no element shown never passes);
  multi_threshold  the Adjudicator adds the charge of a further verified article when P >= multi_threshold
                   (the best verified article always gives a charge).

``contributions`` splits the log-odds into the kinds of evidence (signals.GROUPS), so the evidence viewer
can say what carried a decision.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from worker.agents import artefacts
from worker.agents.signals import FEATURES, GROUPS
from worker.agents.textmodel import jsonable, sigmoid

FORMAT = "lextrace.article_auditor"
FORMAT_VERSION = 1
MANIFEST = "auditor.json"
ARRAYS = ("mean", "scale", "coef")


class ArticleAuditor:
    def __init__(self, *, features: Sequence[str], mean: np.ndarray, scale: np.ndarray, coef: np.ndarray,
                 intercept: float, threshold: float, multi_threshold: float, metadata: Mapping[str, Any] | None = None):
        self.features = tuple(str(f) for f in features)
        unknown = set(self.features) - set(FEATURES)
        if unknown:
            raise ValueError(f"unknown signals {sorted(unknown)}")
        self.mean = np.asarray(mean, dtype=np.float64).reshape(-1)
        self.scale = np.asarray(scale, dtype=np.float64).reshape(-1)
        self.coef = np.asarray(coef, dtype=np.float64).reshape(-1)
        d = len(self.features)
        if not (self.mean.shape == self.scale.shape == self.coef.shape == (d,)):
            raise ValueError("array shapes do not match the signals")
        if not all(np.all(np.isfinite(a)) for a in (self.mean, self.scale, self.coef)) or np.any(self.scale <= 0):
            raise ValueError("non-finite weights or a non-positive scale")
        self.intercept = float(intercept)
        self.threshold = float(threshold)
        self.multi_threshold = float(multi_threshold)
        if not (0.0 <= self.threshold <= 1.0 and 0.0 <= self.multi_threshold <= 1.0):
            raise ValueError("thresholds are probabilities")
        self.metadata: dict[str, Any] = jsonable(dict(metadata or {}))

    # -- identity -----------------------------------------------------------------
    def _record(self) -> dict[str, Any]:
        return {"format": FORMAT, "format_version": FORMAT_VERSION, "features": list(self.features),
                "intercept": self.intercept, "threshold": self.threshold, "multi_threshold": self.multi_threshold}

    def _arrays(self) -> dict[str, np.ndarray]:
        return {"mean": self.mean, "scale": self.scale, "coef": self.coef}

    @property
    def weights_sha256(self) -> str:
        return artefacts.weights_sha256(self._record(), self._arrays())

    @property
    def model_id(self) -> str:
        return artefacts.model_id_of(self.weights_sha256, self.metadata)

    def __repr__(self) -> str:
        return f"ArticleAuditor(signals={len(self.features)}, id={self.model_id[:12]})"

    # -- inference --------------------------------------------------------------------
    def _standardised(self, rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        X = np.array([[float(r.get(f, 0.0)) for f in self.features] for r in rows], dtype=np.float64).reshape(-1, len(self.features))
        return (X - self.mean) / self.scale

    def probabilities(self, rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        """P(article applies) for each row of signals."""
        if not rows:
            return np.zeros(0)
        return sigmoid(self._standardised(rows) @ self.coef + self.intercept)

    def contributions(self, row: Mapping[str, float]) -> dict[str, float]:
        """Each kind of evidence's share of the log-odds (the intercept apart), by signals.GROUPS."""
        parts = self._standardised([row])[0] * self.coef
        by_feature = dict(zip(self.features, parts))
        return {group: round(float(sum(by_feature.get(f, 0.0) for f in names)), 4)
                for group, names in GROUPS.items() if any(f in by_feature for f in names)}

    # -- storage ----------------------------------------------------------------------
    def save(self, directory: str | os.PathLike[str]) -> Path:
        return artefacts.save(directory, manifest_name=MANIFEST, record=self._record(), arrays=self._arrays(),
                              metadata=self.metadata)

    @classmethod
    def load(cls, directory: str | os.PathLike[str], *, expected_id: str | None = None) -> ArticleAuditor:
        manifest, arrays = artefacts.load(directory, manifest_name=MANIFEST, format=FORMAT, format_version=FORMAT_VERSION,
                                          array_names=ARRAYS, expected_id=expected_id)
        try:
            return cls(features=manifest["features"], intercept=manifest["intercept"], threshold=manifest["threshold"],
                       multi_threshold=manifest["multi_threshold"], metadata=manifest.get("metadata") or {}, **arrays)
        except (KeyError, TypeError, ValueError) as exc:
            from worker.agents.textmodel import ModelIntegrityError

            raise ModelIntegrityError(f"{directory}: malformed artefact: {exc}") from exc
