"""Charge accuracy of one evaluation run by the kind of record: one defendant, or several. Under the paper's
per-defendant protocol each defendant's judgment is scored against the record's gold set, the union of every
defendant's charges, so a judgment naming only this defendant's own offence is wrong when a co-defendant
committed another; the last column counts those (the prediction a strict subset of the gold set).

    DB_NAME=lextrace_bench python scripts/defendant_breakdown.py 91
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def breakdown(run: int) -> dict[str, Counter]:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legalsite.settings")
    import django

    django.setup()
    from apps.evaluation.metrics import map_predicted, normalize_charge
    from apps.evaluation.models import EvaluationCase

    out = {"one defendant": Counter(), "several defendants": Counter()}
    for case in EvaluationCase.objects.filter(run_id=run):
        gold = {normalize_charge(c) for c in case.gold["charges"]}
        judged = (case.prediction or {}).get("defendants") or []
        counts = out["several defendants" if len(judged) > 1 else "one defendant"]
        for d in judged:
            predicted = map_predicted(d.get("charges") or [], case.gold["charges"])
            counts["judgments"] += 1
            counts["right"] += predicted == gold
            counts["refused"] += d.get("status") != "judged"
            counts["subset"] += d.get("status") == "judged" and predicted < gold
    return out


def main() -> int:
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        print(__doc__)
        return 2
    print(f"{'records':<20} {'judgments':>9} {'accuracy':>9} {'refused':>8} {'a strict subset of the gold set':>32}")
    for kind, c in breakdown(int(sys.argv[1])).items():
        accuracy = 100 * c["right"] / c["judgments"] if c["judgments"] else 0.0
        print(f"{kind:<20} {c['judgments']:>9} {accuracy:>8.1f}% {c['refused']:>8} {c['subset']:>32}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
