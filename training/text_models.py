"""Fit TF-IDF + linear models with scikit-learn and convert them to LinearTextModel.

Inputs are pre-tokenized documents (token lists from one tokenizer), so a
corpus is tokenized once for all models. Every fit ends by checking, on a
sample, that the numpy inference of the converted model reproduces
scikit-learn's own outputs (TfidfVectorizer + estimator) to 1e-6; a
conversion bug therefore fails the training job, not a judgment later.

Multilabel probabilities are calibrated per label with Platt scaling on
out-of-fold logits: one-vs-rest logistic regression with L2 shrinkage is
under-confident on its top label (measured: mean top-label probability 0.74
for a top-1 accuracy of 0.86 on held-out charges). Each label's (slope,
offset) is fitted with a Gaussian prior centred on one global (slope, offset),
so rare labels stay close to the global map.

The evaluators are callables returning a metrics dict with one primary metric.
"""

from __future__ import annotations

import functools
import time
import warnings
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression, Ridge

from worker.agents.models.textmodel import LinearTextModel, TermModel, sigmoid, terms

EQUIVALENCE_ATOL = 1e-6

Tokens = Sequence[str]


# ---------------------------------------------------------------------- pieces
def make_vectorizer(*, min_df: int | float = 2, max_features: int | None = 200_000, bigrams: bool = False):
    """The TfidfVectorizer whose arithmetic LinearTextModel.vectorize reproduces."""
    return TfidfVectorizer(
        analyzer=functools.partial(terms, bigrams=bigrams),
        min_df=min_df,
        max_features=max_features,
        sublinear_tf=True,
        norm="l2",
        use_idf=True,
        smooth_idf=True,
        dtype=np.float64,
    )


def _vocab_list(vectorizer: TfidfVectorizer) -> list[str]:
    vocab = [""] * len(vectorizer.vocabulary_)
    for term, i in vectorizer.vocabulary_.items():
        vocab[i] = term
    return vocab


def _fit_logistic(X, y: np.ndarray, *, C: float, max_iter: int) -> tuple[LogisticRegression, bool]:
    """One binary L2 logistic regression; returns (estimator, converged)."""
    clf = LogisticRegression(C=C, solver="lbfgs", max_iter=max_iter)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        clf.fit(X, y)
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return clf, converged


def platt(z: np.ndarray, y: np.ndarray, *, prior=(1.0, 0.0), strength: float = 0.0, iters: int = 100) -> np.ndarray:
    """(slope, offset) maximising sum log sigmoid(±(slope*z + offset)) - strength/2 * ||theta - prior||^2.

    Newton's method on two parameters; a tiny ridge keeps separable data finite.
    """
    z = np.asarray(z, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    prior = np.asarray(prior, dtype=np.float64)
    lam = max(strength, 1e-6)
    theta = prior.copy()
    for _ in range(iters):
        p = sigmoid(theta[0] * z + theta[1])
        r = p - y
        w = p * (1.0 - p)
        grad = np.array([r @ z, r.sum()]) + lam * (theta - prior)
        hess = np.array([[w @ (z * z), w @ z], [w @ z, w.sum()]]) + lam * np.eye(2)
        step = np.linalg.solve(hess, grad)
        # Damp huge steps (far from the optimum the quadratic model is poor).
        size = np.abs(step).max()
        if size > 5.0:
            step *= 5.0 / size
        theta -= step
        if size < 1e-10:
            break
    return theta


def _fold_ids(n: int, folds: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ids = np.arange(n) % folds
    rng.shuffle(ids)
    return ids


# ---------------------------------------------------------------------- multilabel
def _fit_multilabel(
    token_lists: Sequence[Tokens],
    label_sets: Sequence[Iterable[Hashable]],
    *,
    min_df: int | float = 2,
    max_features: int | None = 200_000,
    C: float = 30.0,
    bigrams: bool = False,
    min_label_count: int = 2,
    calibration_folds: int = 3,
    calibration_strength: float = 1.0,
    max_iter: int = 1000,
    seed: int = 13,
    check_sample: int = 200,
    metadata: Mapping[str, Any] | None = None,
    task: str = "multilabel",
) -> tuple[LinearTextModel, TfidfVectorizer, list[LogisticRegression]]:
    """Fit and convert; also returns the scikit-learn objects (for tests)."""
    if len(token_lists) != len(label_sets):
        raise ValueError("token_lists and label_sets differ in length")
    label_sets = [set(s) for s in label_sets]
    n = len(token_lists)
    counts = Counter(label for s in label_sets for label in s)
    kept = sorted(label for label, c in counts.items() if min_label_count <= c < n)
    dropped = {
        str(label): {"count": c, "reason": "rare" if c < min_label_count else "in every document"}
        for label, c in sorted(counts.items(), key=lambda kv: str(kv[0]))
        if label not in kept
    }
    if not kept:
        raise ValueError("no label has both enough positive and negative documents")

    started = time.perf_counter()
    vectorizer = make_vectorizer(min_df=min_df, max_features=max_features, bigrams=bigrams)
    X = vectorizer.fit_transform(token_lists)
    Y = np.array([[label in s for label in kept] for s in label_sets], dtype=bool)
    estimators: list[LogisticRegression] = []
    not_converged: list[str] = []
    for j, label in enumerate(kept):
        clf, ok = _fit_logistic(X, Y[:, j], C=C, max_iter=max_iter)
        estimators.append(clf)
        if not ok:
            not_converged.append(str(label))
    fit_s = time.perf_counter() - started

    coef = np.column_stack([clf.coef_[0] for clf in estimators])
    intercept = np.array([clf.intercept_[0] for clf in estimators])

    started = time.perf_counter()
    calibration, calibration_info = _calibrate(
        token_lists, Y, folds=calibration_folds, strength=calibration_strength, seed=seed,
        vectorizer_args={"min_df": min_df, "max_features": max_features, "bigrams": bigrams},
        C=C, max_iter=max_iter,
    )  # fmt: skip
    calibrate_s = time.perf_counter() - started

    meta = {
        "task": task,
        "estimator": {
            "type": "one-vs-rest LogisticRegression",
            "solver": "lbfgs",
            "C": C,
            "max_iter": max_iter,
            "not_converged": not_converged,
        },
        "features": {"min_df": min_df, "max_features": max_features, "bigrams": bigrams, "n_features": X.shape[1]},
        "n_train": n,
        "label_counts": {str(label): counts[label] for label in kept},
        "dropped_labels": dropped,
        "calibration": calibration_info,
        "sklearn_version": sklearn.__version__,
        "timings": {"fit_s": round(fit_s, 2), "calibrate_s": round(calibrate_s, 2)},
    }
    meta.update(metadata or {})
    model = LinearTextModel(
        kind="multilabel",
        vocab=_vocab_list(vectorizer),
        idf=vectorizer.idf_,
        coef=coef,
        intercept=intercept,
        labels=kept,
        calibration=calibration,
        config={"bigrams": bigrams, "threshold": 0.5},
        metadata=meta,
    )
    check_multilabel_equivalence(model, vectorizer, estimators, _sample(token_lists, check_sample, seed))
    return model, vectorizer, estimators


def fit_multilabel(
    token_lists: Sequence[Tokens],
    label_sets: Sequence[Iterable[Hashable]],
    *,
    min_df: int | float = 2,
    max_features: int | None = 200_000,
    C: float = 30.0,
    bigrams: bool = False,
    min_label_count: int = 2,
    calibration_folds: int = 3,
    calibration_strength: float = 1.0,
    max_iter: int = 1000,
    seed: int = 13,
    check_sample: int = 200,
    metadata: Mapping[str, Any] | None = None,
    task: str = "multilabel",
) -> LinearTextModel:
    """One calibrated sigmoid per label over TF-IDF features.

    Labels seen fewer than ``min_label_count`` times (or in every document) are
    dropped and listed in ``metadata["dropped_labels"]``. ``calibration_folds``
    < 2 leaves the raw logistic-regression probabilities (identity calibration).
    Defaults are what measured best on the corpus (unigrams, C=30, lbfgs).
    """
    model, _, _ = _fit_multilabel(
        token_lists, label_sets, min_df=min_df, max_features=max_features, C=C, bigrams=bigrams,
        min_label_count=min_label_count, calibration_folds=calibration_folds,
        calibration_strength=calibration_strength, max_iter=max_iter, seed=seed,
        check_sample=check_sample, metadata=metadata, task=task,
    )  # fmt: skip
    return model


def fit_binary(
    token_lists: Sequence[Tokens],
    targets: Sequence[bool],
    *,
    label: str = "positive",
    **kwargs: Any,
) -> LinearTextModel:
    """A one-label multilabel model (e.g. life imprisonment, death penalty)."""
    targets = [bool(t) for t in targets]
    if all(targets) or not any(targets):
        raise ValueError("fit_binary needs both positive and negative documents")
    kwargs.setdefault("task", f"binary:{label}")
    return fit_multilabel(token_lists, [{label} if t else set() for t in targets], min_label_count=1, **kwargs)


def _calibrate(
    token_lists: Sequence[Tokens],
    Y: np.ndarray,
    *,
    folds: int,
    strength: float,
    seed: int,
    vectorizer_args: Mapping[str, Any],
    C: float,
    max_iter: int,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Per-label Platt parameters from out-of-fold logits (vectorizer refitted per fold)."""
    n, n_labels = Y.shape
    if folds < 2:
        return np.tile([1.0, 0.0], (n_labels, 1)), {"method": "none"}
    fold = _fold_ids(n, folds, seed)
    Z = np.full(Y.shape, np.nan)
    for f in range(folds):
        train, held = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
        vec = make_vectorizer(**vectorizer_args)
        X_train = vec.fit_transform([token_lists[i] for i in train])
        X_held = vec.transform([token_lists[i] for i in held])
        for j in range(n_labels):
            y = Y[train, j]
            if y.all() or not y.any():
                continue  # no out-of-fold logit for this label in this fold
            clf, _ = _fit_logistic(X_train, y, C=C, max_iter=max_iter)
            Z[held, j] = clf.decision_function(X_held)
    finite = np.isfinite(Z)
    global_theta = platt(Z[finite], Y[finite])
    calibration = np.empty((n_labels, 2))
    for j in range(n_labels):
        ok = finite[:, j]
        calibration[j] = platt(Z[ok, j], Y[ok, j], prior=global_theta, strength=strength) if ok.any() else global_theta
    info = {
        "method": "platt per label, Gaussian prior on a global Platt fit, out-of-fold logits",
        "folds": folds,
        "prior_strength": strength,
        "global": [float(global_theta[0]), float(global_theta[1])],
        "seed": seed,
    }
    return calibration, info


def check_multilabel_equivalence(
    model: LinearTextModel,
    vectorizer: TfidfVectorizer,
    estimators: Sequence[LogisticRegression],
    token_lists: Sequence[Tokens],
    atol: float = EQUIVALENCE_ATOL,
) -> float:
    """Assert numpy inference == scikit-learn (logits and raw probabilities); returns the max difference."""
    if not token_lists:
        return 0.0
    X = vectorizer.transform(token_lists)
    _check_features(model, X, token_lists, atol)
    ref_z = np.column_stack([est.decision_function(X) for est in estimators])
    ref_p = np.column_stack([est.predict_proba(X)[:, 1] for est in estimators])
    got_z = model.decision_many(token_lists)
    got_p = model.predict_proba_many(token_lists, calibrated=False)
    diff = max(float(np.abs(got_z - ref_z).max()), float(np.abs(got_p - ref_p).max()))
    if diff > atol:
        raise AssertionError(f"numpy inference differs from scikit-learn by {diff:.3g} (> {atol})")
    # The calibrated output is the calibration map applied to those same logits.
    expected = sigmoid(ref_z * model.calibration[:, 0] + model.calibration[:, 1])
    cal_diff = float(np.abs(model.predict_proba_many(token_lists) - expected).max())
    if cal_diff > atol:
        raise AssertionError(f"calibrated probabilities differ by {cal_diff:.3g} (> {atol})")
    return max(diff, cal_diff)


def _check_features(model: LinearTextModel, X, token_lists: Sequence[Tokens], atol: float) -> None:
    for row, tokens in enumerate(token_lists):
        idx, vals = model.vectorize(tokens)
        ref = X.getrow(row).tocoo()
        order = np.argsort(ref.col)
        if not np.array_equal(idx, ref.col[order]) or not np.allclose(vals, ref.data[order], rtol=0, atol=atol):
            raise AssertionError(f"TF-IDF features of sample document {row} differ from scikit-learn's")


def _sample(token_lists: Sequence[Tokens], k: int, seed: int) -> list[Tokens]:
    if len(token_lists) <= k:
        return list(token_lists)
    idx = np.sort(np.random.default_rng(seed).choice(len(token_lists), size=k, replace=False))
    return [token_lists[i] for i in idx]


# ---------------------------------------------------------------------- regression
def _fit_regression(
    token_lists: Sequence[Tokens],
    values: Sequence[float],
    *,
    alpha: float = 1.0,
    target_transform: str | None = "log1p",
    min_df: int | float = 2,
    max_features: int | None = 200_000,
    bigrams: bool = False,
    seed: int = 13,
    check_sample: int = 200,
    metadata: Mapping[str, Any] | None = None,
    task: str = "regression",
    sample_weight: Sequence[float] | None = None,
) -> tuple[LinearTextModel, TfidfVectorizer, Ridge]:
    if len(token_lists) != len(values):
        raise ValueError("token_lists and values differ in length")
    y = np.asarray(values, dtype=np.float64)
    if target_transform == "log1p":
        if (y < 0).any():
            raise ValueError("log1p target needs non-negative values")
        y = np.log1p(y)
    elif target_transform is not None:
        raise ValueError(f"unknown target_transform {target_transform!r}")
    started = time.perf_counter()
    vectorizer = make_vectorizer(min_df=min_df, max_features=max_features, bigrams=bigrams)
    X = vectorizer.fit_transform(token_lists)
    ridge = Ridge(alpha=alpha).fit(X, y, sample_weight=sample_weight)
    fit_s = time.perf_counter() - started
    meta = {
        "task": task,
        "estimator": {"type": "Ridge", "alpha": alpha, "solver": "auto"},
        "features": {"min_df": min_df, "max_features": max_features, "bigrams": bigrams, "n_features": X.shape[1]},
        "target_transform": target_transform,
        "n_train": len(y),
        "sklearn_version": sklearn.__version__,
        "timings": {"fit_s": round(fit_s, 2)},
    }
    meta.update(metadata or {})
    model = LinearTextModel(
        kind="regression",
        vocab=_vocab_list(vectorizer),
        idf=vectorizer.idf_,
        coef=np.asarray(ridge.coef_, dtype=np.float64).reshape(-1, 1),
        intercept=np.array([float(ridge.intercept_)]),
        config={"bigrams": bigrams, "target_transform": target_transform},
        metadata=meta,
    )
    check_regression_equivalence(model, vectorizer, ridge, _sample(token_lists, check_sample, seed))
    return model, vectorizer, ridge


def fit_regression(
    token_lists: Sequence[Tokens],
    values: Sequence[float],
    *,
    alpha: float = 1.0,
    target_transform: str | None = "log1p",
    min_df: int | float = 2,
    max_features: int | None = 200_000,
    bigrams: bool = False,
    seed: int = 13,
    check_sample: int = 200,
    metadata: Mapping[str, Any] | None = None,
    task: str = "regression",
    sample_weight: Sequence[float] | None = None,
) -> LinearTextModel:
    """Ridge regression on TF-IDF (by default on log1p of the target, e.g. months), each case weighted by
    ``sample_weight`` when given."""
    model, _, _ = _fit_regression(
        token_lists, values, alpha=alpha, target_transform=target_transform, min_df=min_df,
        max_features=max_features, bigrams=bigrams, seed=seed, check_sample=check_sample,
        metadata=metadata, task=task, sample_weight=sample_weight,
    )  # fmt: skip
    return model


def check_regression_equivalence(
    model: LinearTextModel, vectorizer: TfidfVectorizer, ridge: Ridge, token_lists: Sequence[Tokens],
    atol: float = EQUIVALENCE_ATOL,
) -> float:  # fmt: skip
    if not token_lists:
        return 0.0
    X = vectorizer.transform(token_lists)
    _check_features(model, X, token_lists, atol)
    diff = float(np.abs(model.decision_many(token_lists)[:, 0] - ridge.predict(X)).max())
    if diff > atol:
        raise AssertionError(f"numpy inference differs from scikit-learn by {diff:.3g} (> {atol})")
    return diff


# ---------------------------------------------------------------------- evaluation
def reliability(conf: np.ndarray, correct: np.ndarray, bins: int = 10) -> tuple[float, list[dict[str, Any]]]:
    """Expected calibration error over equal-width bins, and the bins themselves."""
    conf = np.asarray(conf, dtype=np.float64)
    correct = np.asarray(correct, dtype=np.float64)
    if conf.size == 0:
        return float("nan"), []
    which = np.minimum((conf * bins).astype(int), bins - 1)
    ece = 0.0
    table = []
    for b in range(bins):
        m = which == b
        count = int(m.sum())
        if count:
            gap = abs(float(conf[m].mean()) - float(correct[m].mean()))
            ece += gap * count / conf.size
            table.append(
                {"lo": b / bins, "hi": (b + 1) / bins, "n": count,
                 "mean_p": float(conf[m].mean()), "frequency": float(correct[m].mean())}
            )  # fmt: skip
    return ece, table


class MultilabelEvaluator:
    """Held-out metrics of a multilabel model. Primary: exact-set accuracy.

    Predicted set = labels with p >= threshold, plus the top label always.
    Gold labels the model does not know count as misses.
    """

    primary_metric = "exact_set_accuracy"

    def __init__(
        self, token_lists: Sequence[Tokens], label_sets: Sequence[Iterable[Hashable]], *,
        name: str = "", threshold: float = 0.5, bins: int = 10,
    ) -> None:  # fmt: skip
        self.token_lists = list(token_lists)
        self.label_sets = [set(s) for s in label_sets]
        self.name = name
        self.threshold = threshold
        self.bins = bins

    def __call__(self, model: LinearTextModel) -> dict[str, Any]:
        P = model.predict_proba_many(self.token_lists)
        labels = model.labels
        n = len(self.label_sets)
        tp = fp = fn = exact = top1 = covered = 0
        recall3_hit = recall3_total = 0
        for p, gold in zip(P, self.label_sets):
            pred = {label for label, _ in model.labels_from_proba(p, self.threshold)}
            tp += len(pred & gold)
            fp += len(pred - gold)
            fn += len(gold - pred)
            exact += pred == gold
            order = np.argsort(-p, kind="stable")
            top1 += labels[order[0]] in gold
            top3 = {labels[i] for i in order[:3]}
            recall3_hit += len(top3 & gold)
            recall3_total += len(gold)
            covered += gold <= set(labels)
        Yg = np.array([[label in gold for label in labels] for gold in self.label_sets], dtype=bool)
        rows = np.arange(n)
        best = P.argmax(axis=1)
        ece_top1, table = reliability(P[rows, best], Yg[rows, best], self.bins)
        ece_labels, _ = reliability(P.ravel(), Yg.ravel(), self.bins)
        return {
            "name": self.name,
            "primary_metric": self.primary_metric,
            "higher_is_better": True,
            "n": n,
            "exact_set_accuracy": exact / n if n else float("nan"),
            "micro_f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else float("nan"),
            "micro_precision": tp / (tp + fp) if tp + fp else float("nan"),
            "micro_recall": tp / (tp + fn) if tp + fn else float("nan"),
            "top1_accuracy": top1 / n if n else float("nan"),
            "recall_at_3": recall3_hit / recall3_total if recall3_total else float("nan"),
            "ece_top1": ece_top1,
            "ece_labels": ece_labels,
            "mean_top1_p": float(P[rows, best].mean()) if n else float("nan"),
            "gold_covered": covered / n if n else float("nan"),
            "threshold": self.threshold,
            "reliability_top1": table,
        }


class TermEvaluator:
    """Held-out metrics of a TermModel. Primary: MAE in months (lower is better).

    CAIL convention: months are 0 for life imprisonment and death, so a
    life/death case predicted as 120 months costs 120. Exact match needs
    months, life and death all equal.
    """

    primary_metric = "mae_months"

    def __init__(self, token_lists: Sequence[Tokens], terms_gold: Sequence[Mapping[str, Any]], *, name: str = "",
                 contexts: Sequence[Mapping[str, float]] | None = None):
        self.token_lists = list(token_lists)
        self.gold = [(int(t["months"]), bool(t["life"]), bool(t["death"])) for t in terms_gold]
        self.name = name
        # the sentencing facts of each case, for a model with an adjustment (training/term.py)
        self.contexts = list(contexts) if contexts is not None else [None] * len(self.token_lists)

    def __call__(self, model: TermModel) -> dict[str, Any]:
        preds = [model.predict(tokens, context) for tokens, context in zip(self.token_lists, self.contexts)]
        n = len(preds)
        err = np.array([abs(p["months"] - g[0]) for p, g in zip(preds, self.gold)], dtype=np.float64)
        exact = sum((p["months"], p["life"], p["death"]) == g for p, g in zip(preds, self.gold))
        fixed = np.array([not (g[1] or g[2]) for g in self.gold], dtype=bool)
        out: dict[str, Any] = {
            "name": self.name,
            "primary_metric": self.primary_metric,
            "higher_is_better": False,
            "n": n,
            "mae_months": float(err.mean()) if n else float("nan"),
            "exact_match": exact / n if n else float("nan"),
            "mae_months_fixed_term": float(err[fixed].mean()) if fixed.any() else float("nan"),
            "median_abs_error_months": float(np.median(err)) if n else float("nan"),
        }
        for key, gi in (("life", 1), ("death", 2)):
            pred = np.array([p[key] for p in preds], dtype=bool)
            gold = np.array([g[gi] for g in self.gold], dtype=bool)
            prob = np.array([p[f"p_{key}"] for p in preds])
            tp = int((pred & gold).sum())
            out[key] = {
                "n_gold": int(gold.sum()),
                "n_pred": int(pred.sum()),
                "precision": tp / int(pred.sum()) if pred.any() else float("nan"),
                "recall": tp / int(gold.sum()) if gold.any() else float("nan"),
                "brier": float(np.mean((prob - gold) ** 2)) if n else float("nan"),
            }
        return out


def evaluate(evaluator: Callable[[Any], dict[str, Any]], model: Any) -> dict[str, Any]:
    """Run an evaluator and time it."""
    started = time.perf_counter()
    metrics = evaluator(model)
    metrics["eval_s"] = round(time.perf_counter() - started, 2)
    return metrics


__all__ = [
    "MultilabelEvaluator",
    "TermEvaluator",
    "check_multilabel_equivalence",
    "check_regression_equivalence",
    "evaluate",
    "fit_binary",
    "fit_multilabel",
    "fit_regression",
    "make_vectorizer",
    "platt",
    "reliability",
]
