"""Fit the learned Auditor from exported candidate rows.

    python -m training.auditor --rows rows.jsonl --out DIR/auditor

``rows.jsonl`` is written by apps/registry/auditor_export.py: for training cases, the pipeline ran with
the out-of-fold classifiers and leave-one-out retrieval, and every in-force candidate article of every
defendant became one row::

    {"case": id, "defendant": name, "article": key, "label": 1 if the article is a gold article,
     "group": the case's rarest gold charge, "signals": {...worker.agents.signals...}}

The model is a logistic regression on the standardised signals. Rows are weighted so that every charge
weighs the same in total (1 / the number of sampled cases of the case's rarest gold charge): the
evaluation sets, and the long tail a court needs help with, are near-uniform over charges while the
corpus is not. A fifth of the cases is held out (by a hash of the id) and measures the fitted Auditor and
the active one alike, for the promotion gate. The two thresholds (worker/agents/auditor_model.py) are
chosen on the weighted training rows,
by the exact-set accuracy of the articles each case would get: an article passes at P >= threshold when
one of its items is supported, the best passing article is always cited, a further one at P >=
multi_threshold (never below 0.5: a further charge must be more likely than not).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

from worker.agents.auditor_model import ArticleAuditor
from worker.agents.signals import FEATURES, GROUPS

THRESHOLDS = tuple(round(x, 2) for x in np.arange(0.05, 0.96, 0.05))


def _held_out(case_id: str, share: float = 0.2) -> bool:
    digest = hashlib.sha256(f"auditor-heldout:{case_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


def load_rows(path: Path) -> list[dict[str, Any]]:
    with Path(path).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def row_weights(rows: Sequence[dict[str, Any]]) -> np.ndarray:
    """1 / (sampled cases of the row's group), normalised to mean 1."""
    cases_per_group = Counter()
    seen = set()
    for r in rows:
        if r["case"] not in seen:
            seen.add(r["case"])
            cases_per_group[r["group"]] += 1
    w = np.array([1.0 / cases_per_group[r["group"]] for r in rows])
    return w / w.mean()


def decide(rows: Sequence[dict[str, Any]], p: np.ndarray, threshold: float, multi: float) -> float:
    """Weighted share of (case, defendant) units whose cited articles equal their gold articles."""
    units: dict[tuple, list[int]] = defaultdict(list)
    for n, r in enumerate(rows):
        units[(r["case"], r.get("defendant", ""))].append(n)
    weights = row_weights(rows)
    right = total = 0.0
    for members in units.values():
        passing = sorted((n for n in members if p[n] >= threshold and rows[n]["signals"]["items_supported"] > 0),
                         key=lambda n: -p[n])
        chosen = set(passing[:1]) | {n for n in passing[1:] if p[n] >= multi}
        gold = {n for n in members if rows[n]["label"]}
        w = weights[members[0]]
        total += w
        right += w * (chosen == gold)
    return right / total if total else 0.0


def fit_auditor(rows: Sequence[dict[str, Any]], *, C: float = 1.0, features: Sequence[str] = FEATURES,
                metadata: dict[str, Any] | None = None) -> tuple[ArticleAuditor, dict[str, Any]]:
    if len({r["label"] for r in rows}) < 2:
        raise ValueError("the rows need both applying and not-applying articles")
    started = time.perf_counter()
    X = np.array([[float(r["signals"].get(f, 0.0)) for f in features] for r in rows])
    y = np.array([int(r["label"]) for r in rows])
    w = row_weights(rows)
    mean, scale = X.mean(axis=0), X.std(axis=0)
    scale[scale <= 1e-9] = 1.0
    lr = LogisticRegression(C=C, max_iter=2000)
    lr.fit((X - mean) / scale, y, sample_weight=w)
    p = lr.predict_proba((X - mean) / scale)[:, 1]
    # A further charge only when it is more likely than not (multi_threshold >= 0.5): the weighted rows choose
    # how much more; the pass threshold is free.
    grid = [(decide(rows, p, t, m), t, m) for t in THRESHOLDS for m in THRESHOLDS if m >= max(t, 0.5)]
    best_acc, threshold, multi = max(grid, key=lambda g: (g[0], g[1], g[2]))
    report = {
        "rows": len(rows), "cases": len({r["case"] for r in rows}), "positives": int(y.sum()),
        "groups": len({r["group"] for r in rows}), "C": C, "threshold": threshold, "multi_threshold": multi,
        "weighted_exact_articles_at_thresholds": round(best_acc, 4),
        "coefficients": {f: round(float(c), 4) for f, c in zip(features, lr.coef_[0])},
        "fit_s": round(time.perf_counter() - started, 2),
    }
    model = ArticleAuditor(features=list(features), mean=mean, scale=scale, coef=lr.coef_[0], intercept=float(lr.intercept_[0]),
                           threshold=threshold, multi_threshold=multi,
                           metadata={**(metadata or {}), "training": report, "groups": {k: list(v) for k, v in GROUPS.items()}})
    return model, report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.auditor", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--report", type=Path, help="write the report (metrics, and the baseline's on the same rows) here")
    parser.add_argument("--baseline", type=Path, metavar="DIR",
                        help="an Auditor artefact (the active one) to evaluate on the same rows, for the promotion gate")
    parser.add_argument("--without", action="append", default=[], metavar="GROUP",
                        help="leave out a kind of evidence (a key of worker.agents.signals.GROUPS); repeatable")
    args = parser.parse_args(argv)
    rows = load_rows(args.rows)
    dropped = {f for g in args.without for f in GROUPS[g]}
    features = [f for f in FEATURES if f not in dropped]
    # A fifth of the cases is held out: the gate compares this Auditor and the active one on them.
    held = [r for r in rows if _held_out(r["case"])]
    fitted = [r for r in rows if not _held_out(r["case"])] if held else rows
    model, report = fit_auditor(fitted, C=args.C, features=features, metadata={"rows_path": str(args.rows),
                                                                              "without": list(args.without)})
    scored = held or rows
    metrics = {"primary_metric": "weighted_exact_articles", "higher_is_better": True, "n": len({r["case"] for r in scored}),
               "weighted_exact_articles": round(decide(scored, model.probabilities([r["signals"] for r in scored]),
                                                       model.threshold, model.multi_threshold), 4)}
    model.metadata["metrics"] = metrics
    model.save(args.out)
    baseline_metrics = None
    if args.baseline is not None:
        active = ArticleAuditor.load(args.baseline)
        p = active.probabilities([r["signals"] for r in scored])
        baseline_metrics = dict(metrics, weighted_exact_articles=round(decide(scored, p, active.threshold, active.multi_threshold), 4))
    if args.report is not None:
        args.report.write_text(json.dumps({"metrics": metrics, "baseline_metrics": baseline_metrics, "fit_s": report["fit_s"],
                                           "n_train": report["rows"], "n_heldout": 0, "n_labels": None,
                                           "model_id": model.model_id, "path": str(args.out), "training": report},
                                          ensure_ascii=False, indent=1), encoding="utf-8")
    print(json.dumps(report, ensure_ascii=False, indent=1))
    print(f"auditor: {args.out}  model_id {model.model_id}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
