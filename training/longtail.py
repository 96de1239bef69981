"""The charge and article classifiers made for the long tail.

Half of the charges a court meets are rare in any corpus (in ../shared/data/cases.jsonl half of the
evaluation records have a gold charge with 12 or fewer training cases), and a classifier fitted to the
corpus's frequencies answers the frequent charge instead. Measured on the development split
(training/devsplit.py; figures and commands in docs/RESULTS.md), what helps:

- the legal texts as extra training documents: for every charge, the text of the articles defining it,
  their checklist items and the judicial interpretations linked to them (for every article, its own):
  the Rule graph is the long tail's best evidence when precedents are few;
- class-balanced weights per label (one-vs-rest linear SVMs, squared hinge): a label's positives
  weigh as much as its negatives, however few;
- word tokens beside character 1-3-grams of the joined tokens (``char_ngrams``), which catch the
  sub-word units of long legal compounds that the segmentation splits differently from text to text.

Scores are calibrated per label with Platt scaling on out-of-fold scores (Gaussian prior on one global
map, as in training/text_models.py). The out-of-fold models themselves are kept (``LongtailFit.folds``):
the learned Auditor (training/auditor.py) is trained on features computed, for each training case, by
the models that did not see it.
"""

from __future__ import annotations

import time
import warnings
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.svm import LinearSVC

from training.text_models import _vocab_list, _sample, platt
from worker.agents.charge_names import statute_charges_of
from worker.agents.models.textmodel import LinearTextModel, terms

Tokens = Sequence[str]

DEFAULTS: dict[str, Any] = {
    "C": 0.5,
    "char_ngrams": (1, 3),
    "min_df": 2,
    "max_features": 120_000,
    "folds": 4,
    "max_iter": 3000,
}


@dataclass
class LongtailFit:
    model: LinearTextModel
    folds: list[LinearTextModel]  # folds[f] never saw the training documents with fold_of == f
    fold_of: np.ndarray  # (n_train,) fold of each training document
    oof: np.ndarray  # (n_train, n_labels) out-of-fold decision scores, in model.labels order


def make_vectorizer(*, min_df: int | float, max_features: int | None, char_ngrams: Sequence[int] | None) -> TfidfVectorizer:
    """The TfidfVectorizer whose arithmetic LinearTextModel.vectorize reproduces (tokens + char n-grams)."""
    ngrams = tuple(char_ngrams) if char_ngrams else None
    return TfidfVectorizer(analyzer=lambda tokens: terms(tokens, False, ngrams), min_df=min_df, max_features=max_features,
                           sublinear_tf=True, norm="l2", use_idf=True, smooth_idf=True, dtype=np.float64)


def fold_ids(n: int, folds: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ids = np.arange(n) % folds
    rng.shuffle(ids)
    return ids


def _fit_svms(X, Y: np.ndarray, *, C: float, max_iter: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """One balanced linear SVM per label; (coef (n_features, n_labels) float32, intercept, labels not converged).
    A label without positives here gets a constant score far below any decision (never predicted)."""
    n_features, n_labels = X.shape[1], Y.shape[1]
    coef = np.zeros((n_features, n_labels), dtype=np.float32)
    intercept = np.full(n_labels, -5.0)
    not_converged = []
    for j in range(n_labels):
        y = Y[:, j]
        if not y.any() or y.all():
            continue
        clf = LinearSVC(C=C, class_weight="balanced", max_iter=max_iter)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            clf.fit(X, y)
        if any(issubclass(w.category, ConvergenceWarning) for w in caught):
            not_converged.append(j)
        coef[:, j] = clf.coef_[0]
        intercept[j] = float(clf.intercept_[0])
    return coef, intercept, not_converged


def _decision(X, coef: np.ndarray, intercept: np.ndarray) -> np.ndarray:
    return np.asarray(X @ coef.astype(np.float64)) + intercept


def fit_longtail(token_lists: Sequence[Tokens], label_sets: Sequence[Iterable[Hashable]], *,
                 extra: Sequence[tuple[Tokens, Iterable[Hashable]]] = (), C: float = DEFAULTS["C"],
                 char_ngrams: Sequence[int] | None = DEFAULTS["char_ngrams"], min_df: int | float = DEFAULTS["min_df"],
                 max_features: int | None = DEFAULTS["max_features"], folds: int = DEFAULTS["folds"],
                 max_iter: int = DEFAULTS["max_iter"], calibration_strength: float = 1.0, seed: int = 13,
                 fold_of: Sequence[int] | None = None, check_sample: int = 100, metadata: Mapping[str, Any] | None = None,
                 task: str = "multilabel") -> LongtailFit:
    """Fit the model on the training documents plus ``extra`` (legal texts, always in training), and one model
    per fold; calibrate on the out-of-fold scores of the training documents. ``fold_of`` (one fold number
    per document, 0..folds-1) fixes the folds, so that several models share them (training.statistical
    derives them from the case ids); by default a seeded shuffle."""
    if len(token_lists) != len(label_sets):
        raise ValueError("token_lists and label_sets differ in length")
    label_sets = [set(s) for s in label_sets]
    extra = [(list(t), set(s)) for t, s in extra]
    counts = Counter(label for s in label_sets for label in s)
    labels = sorted(set(counts) | {label for _, s in extra for label in s}, key=str)
    if len(labels) < 2:
        raise ValueError("at least two labels are needed")
    n, folds = len(token_lists), max(2, min(folds, len(token_lists)))
    started = time.perf_counter()
    vectorizer = make_vectorizer(min_df=min_df, max_features=max_features, char_ngrams=char_ngrams)
    X_all = vectorizer.fit_transform(list(token_lists) + [t for t, _ in extra]).tocsr()
    X, X_extra = X_all[:n], X_all[n:]
    index = {label: j for j, label in enumerate(labels)}
    Y = np.zeros((n, len(labels)), dtype=bool)
    for i, s in enumerate(label_sets):
        Y[i, [index[label] for label in s]] = True
    Y_extra = np.zeros((len(extra), len(labels)), dtype=bool)
    for i, (_, s) in enumerate(extra):
        Y_extra[i, [index[label] for label in s]] = True

    fold_of = np.asarray(fold_of, dtype=np.int64) if fold_of is not None else fold_ids(n, folds, seed)
    if fold_of.shape != (n,) or fold_of.min(initial=0) < 0 or fold_of.max(initial=0) >= folds:
        raise ValueError("fold_of needs one fold in 0..folds-1 per document")
    oof = np.zeros((n, len(labels)))
    seen = np.zeros((n, len(labels)), dtype=bool)  # the fold's model had positives of the label
    fold_arrays = []
    for f in range(folds):
        inside = fold_of != f
        Y_fold = np.vstack([Y[inside], Y_extra])
        coef, intercept, _ = _fit_svms(sp.vstack([X[inside], X_extra]).tocsr(), Y_fold, C=C, max_iter=max_iter)
        oof[~inside] = _decision(X[~inside], coef, intercept)
        seen[~inside] = Y_fold.any(axis=0)
        fold_arrays.append((coef, intercept))
    coef, intercept, not_converged = _fit_svms(X_all, np.vstack([Y, Y_extra]), C=C, max_iter=max_iter)
    fit_s = time.perf_counter() - started

    # Platt per label on the out-of-fold scores (not on those of a fold that never saw the label).
    global_theta = platt(oof[seen], Y[seen]) if seen.any() else np.array([1.0, 0.0])
    calibration = np.empty((len(labels), 2))
    for j in range(len(labels)):
        ok = seen[:, j]
        calibration[j] = (platt(oof[ok, j], Y[ok, j], prior=global_theta, strength=calibration_strength)
                          if ok.any() and Y[ok, j].any() else global_theta)

    vocab = _vocab_list(vectorizer)
    config = {"bigrams": False, "char_ngrams": list(char_ngrams) if char_ngrams else None, "threshold": 0.5}
    meta = {
        "task": task,
        "estimator": {"type": "one-vs-rest LinearSVC (squared hinge), class_weight=balanced", "C": C, "max_iter": max_iter,
                      "not_converged": [str(labels[j]) for j in not_converged]},
        "features": {"min_df": min_df, "max_features": max_features, "char_ngrams": config["char_ngrams"],
                     "n_features": X_all.shape[1]},
        "n_train": n,
        "n_legal_documents": len(extra),
        "label_counts": {str(label): counts.get(label, 0) for label in labels},
        "calibration": {"method": "platt per label on out-of-fold SVM scores, Gaussian prior on a global fit",
                        "folds": folds, "prior_strength": calibration_strength,
                        "global": [float(global_theta[0]), float(global_theta[1])]},
        "sklearn_version": sklearn.__version__,
        "timings": {"fit_s": round(fit_s, 2)},
    }
    meta.update(metadata or {})

    def convert(coef_: np.ndarray, intercept_: np.ndarray, fold: int | None) -> LinearTextModel:
        m = dict(meta, fold=fold) if fold is not None else meta
        return LinearTextModel(kind="multilabel", vocab=vocab, idf=vectorizer.idf_, coef=coef_, intercept=intercept_,
                               labels=labels, calibration=calibration, config=config, metadata=m)

    model = convert(coef, intercept, None)
    sample = _sample(list(token_lists), check_sample, seed)
    if sample:
        got = model.decision_many(sample)
        want = _decision(vectorizer.transform(sample), coef, intercept)
        diff = float(np.abs(got - want).max())
        if diff > 1e-4:  # float32 weights
            raise AssertionError(f"numpy inference differs from scikit-learn by {diff:.3g}")
    return LongtailFit(model=model, folds=[convert(c, b, f) for f, (c, b) in enumerate(fold_arrays)], fold_of=fold_of,
                       oof=oof)


# ---------------------------------------------------------------------- the legal texts as training documents
def legal_texts(statutes: Sequence[Mapping[str, Any]], checklists: Sequence[Mapping[str, Any]] = (),
                interpretations: Sequence[Mapping[str, Any]] = ()) -> dict[str, str]:
    """Article key → its label, text, checklist items and the interpretation paragraphs linked to it.

    ``statutes``/``checklists``/``interpretations`` in the shared schema (../shared/data/README.md);
    interpretations link to Criminal Law article numbers and attach to the base article of that number.
    """
    items = {str(c["key"]): list(c.get("items") or []) for c in checklists}
    linked: dict[int, list[str]] = {}
    for i in interpretations:
        for number in i.get("articles") or []:
            linked.setdefault(int(number), []).append(str(i.get("text") or ""))
    texts = {}
    for s in statutes:
        if s.get("repealed"):
            continue
        key = str(s["key"])
        base = int(s["number"]) if not int(s.get("sub") or 0) else None
        parts = [str(s.get("label") or ""), str(s.get("text") or ""), *items.get(key, []),
                 *(linked.get(base, []) if base is not None else [])]
        texts[key] = "\n".join(p for p in parts if p)
    return texts


def charge_documents(labels: Iterable[str], statutes: Sequence[Mapping[str, Any]], texts: Mapping[str, str],
                     aliases: Mapping[str, str | None]) -> list[tuple[str, str]]:
    """(charge label, legal text) for every article defining the statute charge the label stands for."""
    defining: dict[str, list[str]] = {}
    for s in statutes:
        for charge in s.get("charges") or []:
            defining.setdefault(charge, []).append(str(s["key"]))
    names = set(defining)
    docs = []
    for label in labels:
        for charge in statute_charges_of(label, names, aliases):
            docs.extend((label, texts[key]) for key in defining.get(charge, []) if key in texts)
    return docs


def article_documents(numbers: Iterable[int], statutes: Sequence[Mapping[str, Any]], texts: Mapping[str, str]) -> list[tuple[int, str]]:
    """(article number, legal text) for each labelled article number (its base article and sub-articles)."""
    wanted = set(numbers)
    return [(int(s["number"]), texts[str(s["key"])]) for s in statutes
            if int(s["number"]) in wanted and str(s["key"]) in texts]
