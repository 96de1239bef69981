"""The development split of the case corpus: drawn the way the evaluation sets were sampled.

    python -m training.devsplit --cases ../shared/data/cases.jsonl --out .local/dev-split.jsonl

The paper's CAIL set took at most five cases per charge, in file order, so it is near-uniform over
charges while the corpus is long-tailed. The split mimics that: the cases in a seeded order (the
sha256 of seed and id, so it does not depend on the file's order and is stable when cases are added),
a case taken while its first charge has fewer than ``PER_CHARGE`` taken, and never more than a third of
a charge's cases, so that every charge of the split is also learned from. Cases whose labels are not
verdicts (LeCaRDv2 titles, multiple-choice answers) are never taken.

The training job (training.statistical) leaves the split out of every model and uses it as the held-out
set; evaluations on it retrieve with leave-one-out (``evaluate --exclude-self``: the record and the
records merged into it are never retrieved). Every design choice, weight and threshold is made on this
split; the evaluation sets in ../shared/data/eval are only reported.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PER_CHARGE = 5
MAX_SHARE = 1 / 3
SEED = 13
NOT_VERDICTS = frozenset({"title", "mcq_answers"})


def case_charges(case: dict[str, Any]) -> list[str]:
    """The case's charges: the top-level list, else the union of its defendants' charges."""
    if case.get("charges"):
        return list(case["charges"])
    return sorted({c for d in case.get("per_defendant") or [] for c in d.get("charges") or []})


def dev_split_ids(cases: Sequence[dict[str, Any]], *, seed: int = SEED, per_charge: int = PER_CHARGE,
                  max_share: float = MAX_SHARE) -> set[str]:
    """The ids of the development split of ``cases``."""
    totals = Counter(c for case in cases for c in set(case_charges(case)))
    order = sorted(cases, key=lambda c: hashlib.sha256(f"{seed}:dev:{c['id']}".encode()).digest())
    taken: Counter[str] = Counter()
    chosen: set[str] = set()
    for case in order:
        charges = case_charges(case)
        if not charges or case.get("label_source") in NOT_VERDICTS:
            continue
        first = charges[0]
        if taken[first] < min(per_charge, int(totals[first] * max_share)):
            taken[first] += 1
            chosen.add(case["id"])
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.devsplit", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    cases = [json.loads(line) for line in args.cases.read_text(encoding="utf-8").splitlines() if line.strip()]
    ids = dev_split_ids(cases, seed=args.seed)
    kept = [c for c in cases if c["id"] in ids]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in kept), encoding="utf-8")
    charges = Counter(c for case in kept for c in case_charges(case))
    print(f"{len(kept)} of {len(cases)} cases written to {args.out} ({len(charges)} charges, "
          f"{sum(max(1, len(c.get('defendants') or [])) for c in kept)} defendants)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
