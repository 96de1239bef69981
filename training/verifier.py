"""Train the checklist-item verifier by weak supervision (worker/agents/models/verifier.py holds the features).

Pairs (facts, checklist item) of a precedent are labelled:
  satisfied      every item of every article the precedent cites;
  not satisfied  every item of up to ``negatives_per_case`` *confusable* articles it does not
                 cite: articles of the same section (or chapter when the article has no
                 section) within ``neighbourhood`` article numbers of a cited one, nearest
                 first — the mistakes a retriever makes (neighbouring offences of one family),
                 not random articles that no retriever would propose.

The labels are noisy by construction (a cited article's item may be a sentencing
circumstance the facts do not show), which is why the model is a low-capacity calibrated
logistic regression on nine documented features rather than anything that could memorise.
``CalibratedClassifierCV(method="sigmoid", cv=3)`` gives calibrated probabilities the
Auditor thresholds; the conversion to numpy is checked against scikit-learn on a sample.

The evaluator returns a metrics dict on held-out precedents (the same seeded hash split
as the text models): ROC AUC (primary), Brier score, log loss, ECE, accuracy at the
threshold, and the lexical rule the strategy used before (best-sentence share >= 0.5) on
the same pairs for comparison.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import sklearn
from sklearn.calibration import CalibratedClassifierCV
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import brier_score_loss, log_loss, roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from training.text_models import reliability
from worker.agents.models.verifier import (
    FEATURE_NAMES,
    ChecklistVerifier,
    FactsView,
    grams,
    item_content,
    pair_features,
)

LEXICAL_RULE = 0.5  # the rule-based verifier's best-sentence share


# ---------------------------------------------------------------------- structure
class Structure:
    """Articles, their checklists and their neighbourhoods, from statutes.jsonl and checklists.jsonl records."""

    def __init__(self, statutes: Sequence[Mapping[str, Any]], checklists: Sequence[Mapping[str, Any]], *,
                 neighbourhood: int = 6):
        self.items: dict[str, list[str]] = {}
        for c in checklists:
            items = [q for q in c.get("items") or [] if item_content(q)]
            if items:
                self.items[str(c.get("key") or c["article"])] = items
        self.place: dict[str, tuple[str, str]] = {}
        self.number: dict[str, int] = {}
        self.charges: dict[str, set[str]] = {}
        for s in statutes:
            key = str(s.get("key") or s["number"])
            if s.get("repealed"):
                continue
            self.place[key] = (s.get("chapter") or "", s.get("section") or s.get("chapter") or "")
            self.number[key] = int(s["number"])
            self.charges[key] = set(s.get("charges") or [])
        self.neighbourhood = neighbourhood
        by_section: dict[str, list[str]] = {}
        for key, (_, section) in self.place.items():
            by_section.setdefault(section, []).append(key)
        self._by_section = by_section

    def confusable(self, cited: set[str]) -> list[str]:
        """Uncited articles with a checklist near a cited one in the hierarchy, nearest first."""
        found: dict[str, int] = {}
        for key in cited:
            if key not in self.place:
                continue
            section = self.place[key][1]
            for other in self._by_section.get(section, ()):
                if other in cited or other not in self.items:
                    continue
                distance = abs(self.number[other] - self.number[key])
                if distance <= self.neighbourhood:
                    found[other] = min(found.get(other, distance), distance)
        return sorted(found, key=lambda k: (found[k], self.number[k], k))


# ---------------------------------------------------------------------- pairs
def build_pairs(cases: Sequence[Mapping[str, Any]], structure: Structure, *, negatives_per_case: int = 3,
                seed: int = 13) -> tuple[list[str], list[tuple[int, str, str, bool]]]:
    """(facts per case, [(case index, article key, question, satisfied)]); cases without a cited checklist are skipped."""
    facts, pairs = [], []
    for case in cases:
        cited = {str(a) for a in case.get("articles") or []}
        positives = [k for k in sorted(cited) if k in structure.items]
        if not positives or not case.get("fact"):
            continue
        negatives = structure.confusable(cited)
        if len(negatives) > negatives_per_case:
            # The nearest ones, ties broken by a stable hash of the case.
            negatives = sorted(negatives[: 2 * negatives_per_case],
                               key=lambda k: hashlib.sha256(f"{seed}:{case['id']}:{k}".encode()).digest())[:negatives_per_case]
        i = len(facts)
        facts.append(case["fact"])
        for key, label in [(k, True) for k in positives] + [(k, False) for k in negatives]:
            pairs.extend((i, key, q, label) for q in structure.items[key])
    return facts, pairs


def item_idf(facts: Sequence[str], questions: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """For every bigram of a checklist item: smoothed idf over the fact texts and over the distinct items."""
    items = sorted({item_content(q) for q in questions})
    vocab = sorted({b for q in items for b in grams(q)})
    index = {b: i for i, b in enumerate(vocab)}
    df = np.zeros(len(vocab))
    for text in facts:
        present = [index[b] for b in grams(text) if b in index]
        df[present] += 1
    item_df = np.zeros(len(vocab))
    for q in items:
        item_df[[index[b] for b in grams(q)]] += 1
    return (vocab, np.log((1 + len(facts)) / (1 + df)) + 1.0, np.log((1 + len(items)) / (1 + item_df)) + 1.0)


def featurize(facts: Sequence[str], pairs: Sequence[tuple[int, str, str, bool]], idf_of) -> tuple[np.ndarray, np.ndarray]:
    views: dict[int, FactsView] = {}
    X = np.zeros((len(pairs), len(FEATURE_NAMES)))
    y = np.zeros(len(pairs), dtype=bool)
    for row, (i, _key, question, label) in enumerate(pairs):
        if i not in views:
            views = {i: FactsView(facts[i])}  # pairs are grouped by case: keep one view
        X[row], _ = pair_features(views[i], question, idf_of)
        y[row] = label
    return X, y


# ---------------------------------------------------------------------- fit
def fit_verifier(facts: Sequence[str], pairs: Sequence[tuple[int, str, str, bool]], *, C: float = 1.0, folds: int = 3,
                 seed: int = 13, metadata: Mapping[str, Any] | None = None, check_sample: int = 500) -> ChecklistVerifier:
    if len({p[3] for p in pairs}) < 2:
        raise ValueError("the verifier needs satisfied and unsatisfied pairs")
    started = time.perf_counter()
    vocab, idf, iidf = item_idf(facts, [p[2] for p in pairs])
    lookup = {b: (float(w), float(v)) for b, w, v in zip(vocab, idf, iidf)}
    unseen = (float(idf.max()), float(iidf.max())) if idf.size else (1.0, 1.0)
    X, y = featurize(facts, pairs, lambda b: lookup.get(b, unseen))
    features_s = time.perf_counter() - started
    started = time.perf_counter()
    base = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=1000))
    calibrated = CalibratedClassifierCV(base, method="sigmoid", cv=folds, ensemble=True).fit(X, y)
    fit_s = time.perf_counter() - started
    means, scales, coefs, intercepts, platts = [], [], [], [], []
    for member in calibrated.calibrated_classifiers_:
        scaler, lr = member.estimator.named_steps["standardscaler"], member.estimator.named_steps["logisticregression"]
        [cal] = member.calibrators
        means.append(scaler.mean_)
        scales.append(scaler.scale_)
        coefs.append(lr.coef_[0])
        intercepts.append(lr.intercept_[0])
        platts.append((cal.a_, cal.b_))
    # Members are fitted on different folds and so standardise differently: fold each member's
    # scaler into its own linear layer, so one (mean 0, scale 1) standardisation serves all.
    coef = np.array([c / s for c, s in zip(coefs, scales)])
    intercept = np.array([b - float(c @ m) for c, m, b in zip(coef, means, intercepts)])
    meta = {
        "task": "checklist item satisfied (weakly supervised)",
        "estimator": {"type": "CalibratedClassifierCV(StandardScaler + LogisticRegression)", "method": "sigmoid",
                      "cv": folds, "C": C},
        "features": list(FEATURE_NAMES),
        "n_pairs": len(pairs), "n_positive": int(y.sum()), "n_cases": len(facts),
        "sklearn_version": sklearn.__version__,
        "timings": {"features_s": round(features_s, 2), "fit_s": round(fit_s, 2)},
        "mean_coefficients": dict(zip(FEATURE_NAMES, np.mean([c for c in coefs], axis=0).round(4).tolist())),
    }
    meta.update(metadata or {})
    model = ChecklistVerifier(vocab=vocab, idf=idf, item_idf=iidf, mean=np.zeros(len(FEATURE_NAMES)), scale=np.ones(len(FEATURE_NAMES)),
                              coef=coef, intercept=intercept, platt=np.array(platts), metadata=meta)
    sample = X[np.random.default_rng(seed).choice(len(X), size=min(check_sample, len(X)), replace=False)]
    diff = float(np.abs(model.proba_features(sample) - calibrated.predict_proba(sample)[:, 1]).max())
    if diff > 1e-6:
        raise AssertionError(f"numpy verifier differs from scikit-learn by {diff:.3g}")
    return model


# ---------------------------------------------------------------------- evaluation
class VerifierEvaluator:
    """Held-out metrics of a ChecklistVerifier on weakly labelled pairs. Primary: ROC AUC."""

    primary_metric = "roc_auc"

    def __init__(self, facts: Sequence[str], pairs: Sequence[tuple[int, str, str, bool]], *, name: str = "verifier"):
        self.facts, self.pairs, self.name = list(facts), list(pairs), name

    def __call__(self, model: ChecklistVerifier) -> dict[str, Any]:
        X, y = featurize(self.facts, self.pairs, model.idf_of)
        p = model.proba_features(X) if len(X) else np.zeros(0)
        pred = p >= model.threshold
        rule = X[:, FEATURE_NAMES.index("best_share")] >= LEXICAL_RULE if len(X) else np.zeros(0, dtype=bool)
        both = len(set(y.tolist())) == 2
        ece, table = reliability(p, y)
        return {
            "name": self.name, "primary_metric": self.primary_metric, "higher_is_better": True,
            "n": len(y), "n_positive": int(y.sum()), "n_cases": len(self.facts),
            "roc_auc": float(roc_auc_score(y, p)) if both else float("nan"),
            "brier": float(brier_score_loss(y, p)) if len(y) else float("nan"),
            "log_loss": float(log_loss(y, np.clip(p, 1e-9, 1 - 1e-9), labels=[False, True])) if len(y) else float("nan"),
            "ece": ece,
            "accuracy": float((pred == y).mean()) if len(y) else float("nan"),
            "satisfied_rate": float(pred.mean()) if len(y) else float("nan"),
            "threshold": model.threshold,
            "lexical_rule": {
                "accuracy": float((rule == y).mean()) if len(y) else float("nan"),
                "satisfied_rate": float(rule.mean()) if len(y) else float("nan"),
                "roc_auc_best_share": (float(roc_auc_score(y, X[:, 0])) if both else float("nan")),
            },
            "reliability": table,
        }

