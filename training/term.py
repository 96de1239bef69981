"""The term model's adjustment: gradient-boosted trees on the linear estimate and the dense sentencing facts.

The linear months model (training/text_models.py, Ridge on log1p of the months over the words and the
charge and circumstance markers) shrinks towards the middle: on the development split its estimates for
terms of 3–10 years averaged 2 years. The adjustment (worker/agents/models/textmodel.py TermModel, worker/agents/
trees.py) reads log1p of that estimate, computed out of fold for every training case, beside the facts a
sentence turns on (worker/agents/models/sentencing.py SENTENCING_FEATURES: the amount against the charge's
standards in the interpretations, the drug weight, the statutory range of the charge's articles, the
circumstances), and is fitted to the absolute error of log1p(months): the term's MAE is what is reported.
On the development split with the gold charges (train_statistical's held-out term metric): MAE 14.77 → 13.81 months.
The trees are kept only when their out-of-fold error is below the linear estimate's: on the demo's 53 training
cases, leaves of 40 cases flattened every estimate towards the median (a homicide estimated at 11 months).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Adjustment:
    """What :func:`fit_adjustment` found: the trees (None when, out of fold, they did not beat the linear estimate:
    a corpus too small for them, such as the demo's), the spread of the estimate the term model keeps (the
    standard deviation of its error in log1p months, which its decision reads: worker/agents/models/textmodel.py
    median_sentence), and the out-of-fold MAE in months of the linear estimate and of the trees."""

    trees: TreeEnsemble | None
    spread: float
    mae_linear: float | None = None
    mae_adjusted: float | None = None


def fit_adjustment(inputs: Sequence[Sequence[str]], months: Sequence[float], context: Sequence[Mapping[str, float]],
                   fold_of: Sequence[int], *, alpha: float, seed: int, feature_args: Mapping[str, Any],
                   weights: Sequence[float] | None = None) -> Adjustment:
    """The trees on out-of-fold linear estimates (``fold_of``: a fold in 0..FOLDS-1 per case) and ``context``, kept
    when their own out-of-fold error is below the linear estimate's; every fit and error weighs each case by
    ``weights`` when given (charge_balance)."""
    fold_of = np.asarray(fold_of)
    y = np.asarray(months, dtype=np.float64)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=np.float64)
    oof = np.zeros(len(y))
    for f in range(FOLDS):
        inside = np.flatnonzero(fold_of != f)
        outside = np.flatnonzero(fold_of == f)
        if len(outside) and len(inside):
            model = fit_regression([inputs[i] for i in inside], y[inside], alpha=alpha, target_transform="log1p",
                                   seed=seed, check_sample=0, sample_weight=w[inside], **feature_args)
            oof[outside] = model.predict_values_many([inputs[i] for i in outside])
    X = np.array([[math.log1p(max(v, 0.0)), *(float(c.get(f, 0.0)) for f in SENTENCING_FEATURES)]
                  for v, c in zip(oof, context)])
    target = np.log1p(y)
    held, adjusted = _out_of_fold(X, target, fold_of, w, seed=seed)
    if len(held):
        mae_linear = float(np.average(np.abs(np.expm1(X[held, 0]) - y[held]), weights=w[held]))
        mae_adjusted = float(np.average(np.abs(np.expm1(adjusted) - y[held]), weights=w[held]))
        if mae_adjusted >= mae_linear:
            return Adjustment(None, _spread(target[held] - X[held, 0]), mae_linear, mae_adjusted)
    gb = GradientBoostingRegressor(**ADJUSTMENT, random_state=seed).fit(X, target, sample_weight=w)
    if not len(held):
        return Adjustment(ensemble_of(gb, X, gb.predict), 0.0)
    return Adjustment(ensemble_of(gb, X, gb.predict), _spread(target[held] - adjusted), mae_linear, mae_adjusted)


def _out_of_fold(X: np.ndarray, target: np.ndarray, fold_of: np.ndarray, w: np.ndarray, *,
                 seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The cases some fold held out, and the trees' estimates for them (log1p months), each from trees fitted on the
    other folds."""
    held, estimates = [], []
    for f in range(FOLDS):
        inside = np.flatnonzero(fold_of != f)
        outside = np.flatnonzero(fold_of == f)
        if len(outside) and len(inside):
            gb = GradientBoostingRegressor(**ADJUSTMENT, random_state=seed).fit(X[inside], target[inside],
                                                                                 sample_weight=w[inside])
            held.extend(outside)
            estimates.extend(gb.predict(X[outside]))
    return np.asarray(held, dtype=int), np.asarray(estimates, dtype=np.float64)


def charge_balance(charges: Sequence[Sequence[str]], power: float) -> np.ndarray:
    """A weight per case: the training count of its rarest charge to the power -``power``, scaled to a mean of 1
    (0: every case weighs the same). The evaluation sets draw at most five cases per charge, so that a rare charge's
    terms count as much as a frequent one's there; the months model, fitted to every case alike, learns the frequent
    charges' terms best."""
    counts: dict[str, int] = {}
    for labels in charges:
        for label in set(labels):
            counts[label] = counts.get(label, 0) + 1
    raw = np.array([min((counts[c] for c in labels), default=1) ** -power for labels in charges], dtype=np.float64)
    return raw / raw.mean() if len(raw) else raw


def _spread(residuals: np.ndarray) -> float:
    """1.4826 times the median absolute deviation of out-of-fold residuals: a normal's standard deviation, not swayed
    by the odd case."""
    return float(1.4826 * np.median(np.abs(residuals - np.median(residuals))))
