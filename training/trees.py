"""Fitted scikit-learn gradient boosting as worker.agents.models.trees.TreeEnsemble arrays, checked to agree."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from worker.agents.models.trees import ARRAYS, LEAF, TreeEnsemble


def ensemble_of(gb, X_check: np.ndarray, raw: Callable[[np.ndarray], np.ndarray], *, atol: float = 1e-6) -> TreeEnsemble:
    """The trees of a fitted ``GradientBoostingClassifier`` / ``GradientBoostingRegressor`` (one output): leaf
    values times the learning rate, inner nodes the weighted mean of their children, every root at 0 (each
    tree's base joins the intercept). ``raw``: the estimator's own raw output (``decision_function`` or
    ``predict``), against which the arrays are checked on ``X_check``."""
    features, thresholds, lefts, rights, values, roots = [], [], [], [], [], []
    bases = 0.0
    for (estimator,) in gb.estimators_:
        t = estimator.tree_
        base = len(features)
        roots.append(base)
        value = t.value[:, 0, 0] * gb.learning_rate
        weight = t.weighted_n_node_samples
        for node in range(t.node_count - 1, -1, -1):  # children have larger indices than their parent
            left, right = t.children_left[node], t.children_right[node]
            if left != -1:
                value[node] = (weight[left] * value[left] + weight[right] * value[right]) / (weight[left] + weight[right])
        bases += value[0]
        value -= value[0]
        leaf = t.children_left == -1
        features.extend(np.where(leaf, LEAF, t.feature).tolist())
        thresholds.extend(np.where(leaf, 0.0, t.threshold).tolist())
        lefts.extend(np.where(leaf, -1, t.children_left + base).tolist())
        rights.extend(np.where(leaf, -1, t.children_right + base).tolist())
        values.extend(value.tolist())
    arrays = {"tree_feature": np.array(features, dtype=np.int64), "tree_threshold": np.array(thresholds),
              "tree_left": np.array(lefts, dtype=np.int64), "tree_right": np.array(rights, dtype=np.int64),
              "tree_value": np.array(values), "tree_roots": np.array(roots, dtype=np.int64)}
    # The starting value: what the estimator's output holds beyond its (uncentred) trees.
    first = X_check[:1]
    leaves = sum(gb.learning_rate * e.predict(first.astype(np.float32)) for (e,) in gb.estimators_)
    ensemble = TreeEnsemble(n_features=X_check.shape[1], intercept=float(raw(first)[0] - leaves[0] + bases), **arrays)
    sample = X_check[:: max(1, len(X_check) // 500)]
    diff = float(np.abs(ensemble.raw(sample) - raw(sample)).max())
    if diff > atol:
        raise AssertionError(f"numpy inference of the trees differs from scikit-learn by {diff:.3g}")
    return ensemble


def averaged(ensembles: Sequence[TreeEnsemble]) -> TreeEnsemble:
    """One ensemble whose output is the mean of ``ensembles``' outputs: their trees side by side, each value
    divided by their number, and the mean of their intercepts. The path decomposition still adds up: each
    tree's changes are scaled alike."""
    if not ensembles:
        raise ValueError("nothing to average")
    k = len(ensembles)
    parts: dict[str, list[np.ndarray]] = {name: [] for name in ARRAYS}
    offset = 0
    for e in ensembles:
        parts["tree_feature"].append(e.tree_feature)
        parts["tree_threshold"].append(e.tree_threshold)
        parts["tree_left"].append(np.where(e.tree_left >= 0, e.tree_left + offset, -1))
        parts["tree_right"].append(np.where(e.tree_right >= 0, e.tree_right + offset, -1))
        parts["tree_value"].append(e.tree_value / k)
        parts["tree_roots"].append(e.tree_roots + offset)
        offset += len(e.tree_feature)
    return TreeEnsemble(n_features=ensembles[0].n_features, intercept=float(np.mean([e.intercept for e in ensembles])),
                        **{name: np.concatenate(arrays) for name, arrays in parts.items()})
