"""The term model's adjustment: gradient-boosted trees on the linear estimate and the dense sentencing facts.

The linear months model (training/text_models.py, Ridge on log1p of the months over the words and the
charge and circumstance markers) shrinks towards the middle: on the development split its estimates for
terms of 3–10 years averaged 2 years. The adjustment (worker/agents/models/textmodel.py TermModel, worker/agents/
trees.py) reads log1p of that estimate, computed out of fold for every training case, beside the facts a
sentence turns on (worker/agents/models/sentencing.py SENTENCING_FEATURES: the amount against the charge's
standards in the interpretations, the drug weight, the statutory range of the charge's articles, the
circumstances), and is fitted to the absolute error of log1p(months): the term's MAE is what is reported.
On the development split with the gold charges (train_statistical's held-out term metric): MAE 14.77 → 13.81 months.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from sklearn.ensemble import GradientBoostingRegressor

from worker.agents.charge_names import statute_charges_of
from training.text_models import fit_regression
from training.trees import ensemble_of
from worker.agents.stages.auditor.amounts import Standard, lowest_standards, standards
from worker.agents.models.sentencing import SENTENCING_FEATURES, StatutoryRange, sentencing_features, statutory_range
from worker.agents.models.trees import TreeEnsemble

ADJUSTMENT = {"loss": "absolute_error", "n_estimators": 300, "max_depth": 3, "learning_rate": 0.05,
              "min_samples_leaf": 40, "subsample": 0.8}
FOLDS = 4


def legal_context(statutes: Sequence[Mapping[str, Any]] | None, interpretations: Sequence[Mapping[str, Any]] | None,
                  aliases: Mapping[str, str | None] | None) -> Callable[[Sequence[str]], tuple[list, dict]]:
    """labels → (the statutory ranges of the articles defining them, their amount standards), from the shared
    schema's statutes and interpretations; what a judgment reads from its verified articles."""
    texts: dict[int, list[str]] = {}
    for i in interpretations or ():
        for number in i.get("articles") or []:
            texts.setdefault(int(number), []).append(str(i.get("text") or ""))
    ranges: dict[str, list[StatutoryRange | None]] = {}
    found: dict[str, dict[str, Standard]] = {}
    for s in statutes or ():
        if s.get("repealed"):
            continue
        number = int(s["number"])
        statute_range, statute_standards = statutory_range(str(s.get("text") or "")), standards(texts.get(number, []), number)
        for charge in s.get("charges") or []:
            ranges.setdefault(charge, []).append(statute_range)
            found[charge] = lowest_standards((found.get(charge, {}), statute_standards))
    names = set(ranges)

    def of(labels: Sequence[str]) -> tuple[list, dict]:
        charges = [charge for label in labels for charge in statute_charges_of(label, names, aliases or {})]
        return ([r for charge in charges for r in ranges.get(charge, [])],
                lowest_standards(found.get(charge, {}) for charge in charges))

    return of


def contexts(facts: Sequence[str], labels: Sequence[Sequence[str]], context_of) -> list[dict[str, float]]:
    out = []
    for text, charges in zip(facts, labels):
        ranges, found = context_of(charges)
        out.append(sentencing_features(text, charges=len(charges), ranges=ranges, standards=found))
    return out


def fit_adjustment(inputs: Sequence[Sequence[str]], months: Sequence[float], context: Sequence[Mapping[str, float]],
                   fold_of: Sequence[int], *, alpha: float, seed: int,
                   feature_args: Mapping[str, Any]) -> tuple[TreeEnsemble, float]:
    """The trees on out-of-fold linear estimates (``fold_of``: a fold in 0..FOLDS-1 per case) and ``context``, and
    the spread of their error (:func:`spread_of`)."""
    fold_of = np.asarray(fold_of)
    y = np.asarray(months, dtype=np.float64)
    oof = np.zeros(len(y))
    for f in range(FOLDS):
        inside = np.flatnonzero(fold_of != f)
        outside = np.flatnonzero(fold_of == f)
        if len(outside) and len(inside):
            model = fit_regression([inputs[i] for i in inside], y[inside], alpha=alpha, target_transform="log1p",
                                   seed=seed, check_sample=0, **feature_args)
            oof[outside] = model.predict_values_many([inputs[i] for i in outside])
    X = np.array([[math.log1p(max(v, 0.0)), *(float(c.get(f, 0.0)) for f in SENTENCING_FEATURES)]
                  for v, c in zip(oof, context)])
    gb = GradientBoostingRegressor(**ADJUSTMENT, random_state=seed).fit(X, np.log1p(y))
    return ensemble_of(gb, X, gb.predict), spread_of(X, np.log1p(y), fold_of, seed=seed)


def spread_of(X: np.ndarray, target: np.ndarray, fold_of: np.ndarray, *, seed: int) -> float:
    """The standard deviation of the adjusted estimate's error in log1p months, out of fold: 1.4826 times the median
    absolute deviation of the residuals (a normal's sigma, not swayed by the odd case). The term model's decision
    reads it (worker/agents/models/textmodel.py median_sentence). 0 when no fold can be held out."""
    residuals = []
    for f in range(FOLDS):
        inside = np.flatnonzero(fold_of != f)
        outside = np.flatnonzero(fold_of == f)
        if len(outside) and len(inside):
            gb = GradientBoostingRegressor(**ADJUSTMENT, random_state=seed).fit(X[inside], target[inside])
            residuals.extend(target[outside] - gb.predict(X[outside]))
    if not residuals:
        return 0.0
    r = np.asarray(residuals)
    return float(1.4826 * np.median(np.abs(r - np.median(r))))
