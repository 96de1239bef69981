"""Gradient-boosted regression trees, evaluated in numpy: the learned Auditor's boosted kind and the term
model's adjustment use them.

One array of nodes holds every tree: per node the signal it splits on (``LEAF`` for a leaf), the threshold
(a value ``<=`` it goes left), the two children (absolute indices, always after their parent) and the node's
value. Leaf values are the trees' contributions (the learning rate included); an inner node's value is the
weighted mean of the leaves below it and every root's value is 0 (its part is in the intercept), so the
value changes along a path add up to what that tree contributes, and each change belongs to the signal
split on (the path decomposition the evidence viewer shows). The trees were split on single-precision
values, as scikit-learn fits them; inputs are rounded the same way.

training/trees.py converts a fitted scikit-learn ensemble into these arrays and checks that both agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

LEAF = -1
ARRAYS = ("tree_feature", "tree_threshold", "tree_left", "tree_right", "tree_value", "tree_roots")


class TreeEnsemble:
    def __init__(self, *, n_features: int, intercept: float, tree_feature, tree_threshold, tree_left, tree_right,
                 tree_value, tree_roots):
        self.n_features = int(n_features)
        self.intercept = float(intercept)
        self.tree_feature, self.tree_left, self.tree_right, self.tree_roots = (
            np.asarray(a, dtype=np.int64).reshape(-1) for a in (tree_feature, tree_left, tree_right, tree_roots))
        self.tree_threshold, self.tree_value = (np.asarray(a, dtype=np.float64).reshape(-1) for a in (tree_threshold, tree_value))
        n = len(self.tree_feature)
        inner = self.tree_feature != LEAF
        at = np.flatnonzero(inner)
        if not (self.tree_threshold.shape == self.tree_left.shape == self.tree_right.shape == self.tree_value.shape == (n,)):
            raise ValueError("tree arrays differ in length")
        if (np.any(self.tree_feature[inner] >= self.n_features) or np.any(self.tree_feature < LEAF)
                or np.any((self.tree_left[inner] <= at) | (self.tree_left[inner] >= n))
                or np.any((self.tree_right[inner] <= at) | (self.tree_right[inner] >= n))
                or np.any((self.tree_roots < 0) | (self.tree_roots >= n))):
            raise ValueError("malformed trees (a child must come after its parent)")
        if not (np.all(np.isfinite(self.tree_threshold[inner])) and np.all(np.isfinite(self.tree_value))
                and np.isfinite(self.intercept)):
            raise ValueError("non-finite tree values")
        # children come after parents, so no path is longer than the largest tree
        self._depth = int(max(np.diff(np.append(self.tree_roots, n)), default=1))

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in ARRAYS}

    @staticmethod
    def _single(X: np.ndarray) -> np.ndarray:
        return np.asarray(X, dtype=np.float64).astype(np.float32).astype(np.float64)

    def leaves(self, X: np.ndarray) -> np.ndarray:
        """(rows, trees): the leaf each row of ``X`` reaches in each tree."""
        X = self._single(X).reshape(-1, self.n_features)
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

    def raw(self, X: np.ndarray) -> np.ndarray:
        """The ensemble's output for each row: the intercept plus every tree's leaf."""
        return self.intercept + self.tree_value[self.leaves(X)].sum(axis=1)

    def contributions(self, x: Sequence[float]) -> np.ndarray:
        """What each input added to ``raw([x])`` beyond the intercept (the values sum to that difference)."""
        x = self._single(np.asarray(x)).reshape(-1)
        parts = np.zeros(self.n_features)
        for root in self.tree_roots:
            node = int(root)
            while self.tree_feature[node] != LEAF:
                f = int(self.tree_feature[node])
                child = int(self.tree_left[node] if x[f] <= self.tree_threshold[node] else self.tree_right[node])
                parts[f] += self.tree_value[child] - self.tree_value[node]
                node = child
        return parts


def matrix(rows: Sequence[Mapping[str, float]], features: Sequence[str]) -> np.ndarray:
    """Rows of named values as a matrix in ``features`` order (a missing value is 0)."""
    return np.array([[float(r.get(f, 0.0)) for f in features] for r in rows], dtype=np.float64).reshape(-1, len(features))
