"""Probes of the statistical judge on stored evaluation runs (docs/RESULTS.md, "sixth round"): what a change
would score, measured before anything is built. Read-only.

    DB_NAME=lextrace_bench python scripts/judge_probes.py union RUN
        each defendant given every co-defendant's charges (records of several defendants)
    DB_NAME=lextrace_bench python scripts/judge_probes.py term RUN BASELINE_RUN
        the term MAE per kind of first judgment, beside another run of the same set (classifier_only)
    DB_NAME=lextrace_bench python scripts/judge_probes.py refusals RUN BASELINE_RUN
        the refused judgments: what the best candidate with a shown element, or the baseline, would answer
    python scripts/judge_probes.py auditor-relative ROWS.jsonl
        the Auditor fitted with each signal relative to the other candidates of the defendant (held-out fifth)

ROWS.jsonl: the Auditor's training rows as `train_statistical` exports them (apps/registry/auditor_export.py).
"""

from __future__ import annotations

import os
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _django():
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legalsite.settings")
    import django

    django.setup()


def _cases(run: int):
    from apps.evaluation.models import EvaluationCase

    return EvaluationCase.objects.filter(run_id=run).order_by("position")


def union(run: int) -> Counter:
    """Over the judgments of records with several defendants: right as judged, right with every co-defendant's
    charges ("shared right"), and the judgments that gains and loses."""
    from apps.evaluation.metrics import map_predicted, normalize_charge

    c = Counter()
    for case in _cases(run):
        judged = case.prediction.get("defendants") or []
        if len(judged) < 2:
            continue
        gold = {normalize_charge(x) for x in case.gold["charges"]}
        everyone = sorted({ch for d in judged if d["status"] == "judged" for ch in d["charges"]})
        for d in judged:
            own = map_predicted(d["charges"], case.gold["charges"]) == gold
            shared = map_predicted(everyone, case.gold["charges"]) == gold if d["status"] == "judged" else own
            c["judgments"] += 1
            c["right"] += own
            c["shared right"] += shared
            c["gained"] += shared and not own
            c["lost"] += own and not shared
    return c


def _print_union(c: Counter) -> None:
    n = c["judgments"] or 1
    print(f"judgments of records with several defendants: {c['judgments']}")
    print(f"accuracy as judged {100 * c['right'] / n:.1f}, with every co-defendant's charges "
          f"{100 * c['shared right'] / n:.1f} ({c['gained']} gained, {c['lost']} lost)")


def term(run: int, baseline: int) -> dict[tuple, list[float]]:
    """Per kind of first judgment (status, one or several defendants): [n, summed error of ``run``, of
    ``baseline``] in months, over the records with a gold term."""
    from apps.evaluation.metrics import term_months

    other = {c.case_id: c for c in _cases(baseline)}
    rows: dict[tuple, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for case in _cases(run):
        if case.gold.get("term") is None or not case.prediction.get("defendants"):
            continue
        gold = term_months(case.gold["term"])
        first, theirs = case.prediction["defendants"][0], other[case.case_id].prediction["defendants"][0]
        kind = (first["status"], "several defendants" if len(case.prediction["defendants"]) > 1 else "one defendant")
        row = rows[kind]
        row[0] += 1
        row[1] += abs(term_months(first.get("term")) - gold)
        row[2] += abs(term_months(theirs.get("term")) - gold)
    return dict(rows)


def _print_term(rows: dict) -> None:
    print(f"{'first judgment':<45} {'n':>5} {'MAE':>8} {'baseline':>9}")
    for kind, (n, mine, theirs) in sorted(rows.items()):
        print(f"{' / '.join(kind):<45} {n:>5} {mine / n:>8.2f} {theirs / n:>9.2f}")


def refusals(run: int, baseline: int) -> Counter:
    """Over the refused judgments: the baseline's answer right, no candidate with a shown element, and the best
    candidate with a shown element (by the Auditor's P, by the charge classifier's P) naming the right charge."""
    from apps.evaluation.metrics import _charge_set, map_predicted
    from worker.agents.types import Bundle

    other = {c.case_id: c for c in _cases(baseline)}
    c = Counter()
    for case in _cases(run):
        gold = _charge_set(case.gold["charges"])
        for d, theirs, bundle in zip(case.prediction["defendants"], other[case.case_id].prediction["defendants"],
                                     case.bundles):
            if d["status"] == "judged":
                continue
            c["refused"] += 1
            c["baseline right"] += map_predicted(theirs["charges"], case.gold["charges"]) == gold
            audit = Bundle.from_dict(bundle).audit
            shown = [a for a in (audit.articles if audit else [])
                     if a.charges and a.in_force and a.signals.get("items_supported", 0) > 0]
            if not shown:
                c["no candidate with a shown element"] += 1
                continue
            for name, key in (("Auditor's P", lambda a: a.score), ("charge classifier's P", lambda a: a.signals["chg_p"])):
                best = max(shown, key=key)
                c[f"best by the {name} right"] += map_predicted([best.charges[0]], case.gold["charges"]) == gold
    return c


def auditor_relative(rows_path: str) -> None:
    import numpy as np

    from training.auditor import _boosting, _held_out, _probability, _thresholds, load_rows, row_weights
    from worker.agents.stages.auditor.signals import FEATURES

    rows = load_rows(Path(rows_path))
    units = defaultdict(list)
    for n, r in enumerate(rows):
        units[(r["case"], r.get("defendant", ""))].append(n)
    relative = ("chg_p", "art_p", "rule_sim", "item_p_max", "item_p_mean", "items_share", "fact_share", "vote_chg",
                "items_supported")
    X = np.array([[float(r["signals"].get(f, 0.0)) for f in FEATURES] for r in rows])
    R = np.zeros((len(rows), 2 * len(relative)))
    columns = [FEATURES.index(f) for f in relative]
    for members in units.values():
        part = X[members][:, columns]
        R[members, :len(relative)] = part - part.max(axis=0)
        R[members, len(relative):] = np.log1p((-part).argsort(axis=0).argsort(axis=0))
    y = np.array([int(r["label"]) for r in rows])
    w = row_weights(rows)
    held = np.array([_held_out(r["case"]) for r in rows])
    held_rows = [r for r, h in zip(rows, held) if h]
    for name, M in (("the Auditor's signals", X), ("… and relative to the other candidates", np.hstack([X, R]))):
        p = _probability(_boosting(M[~held], y[~held], w[~held]), M)
        first = [max(m, key=lambda i: p[i]) for m in units.values() if held[m[0]] and y[m].any()]
        accuracy, threshold, multi = _thresholds(held_rows, p[held])
        print(f"{name:<42} gold first {100 * np.mean(y[first]):.1f} % of {len(first)}; exact articles "
              f"{100 * accuracy:.1f} % (thresholds {threshold}, {multi})")


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "auditor-relative":
        sys.path.insert(0, str(ROOT))
        auditor_relative(argv[1])
        return 0
    commands = {"union": (union, 1), "term": (term, 2), "refusals": (refusals, 2)}
    if not argv or argv[0] not in commands or len(argv) != 1 + commands[argv[0]][1] or not all(a.isdigit() for a in argv[1:]):
        print(__doc__)
        return 2
    _django()
    command, _ = commands[argv[0]]
    found = command(*map(int, argv[1:]))
    if argv[0] == "union":
        _print_union(found)
    elif argv[0] == "term":
        _print_term(found)
    else:
        for k, v in found.items():
            print(f"{k:<45} {v:>5}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
