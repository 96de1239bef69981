"""Write what the pipeline decides for a sample of cases (charges, articles, term, status per
defendant) as JSON, so that two builds can be compared: a performance change must not change
any judgment (issue 20).

    DB_NAME=lextrace_bench python scripts/judgment_fingerprint.py --cases ../shared/data/eval/smoke.jsonl \
        --n 40 --out .local/bench/judgments-after.json
    python scripts/judgment_fingerprint.py --compare before.json after.json

Run it with each build's code on the same database; --compare exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def fingerprint(cases: Path, n: int, ablations: list[str]) -> list[dict]:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legalsite.settings")
    import django

    django.setup()
    from apps.judging.services import judgment_compute
    from worker.agents.types import CaseInput

    records = [json.loads(line) for line in cases.read_text(encoding="utf-8").splitlines() if line.strip()][:n]
    out = []
    for record in records:
        case = CaseInput(facts=record["fact"], defendants=tuple(record.get("defendants", ())))
        for ablation in ablations:
            for bundle in judgment_compute(case=case, ablation=ablation):
                j = bundle.judgment
                term = j.term
                out.append({"case": record.get("id"), "ablation": ablation, "defendant": bundle.defendant,
                            "status": j.status.value, "charges": list(j.charges), "articles": list(j.article_keys),
                            "term": [term.months, term.life, term.death] if term else None,
                            "candidates": list(bundle.research.candidate_articles) if bundle.research else None})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=Path)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--ablation", action="append", help="full (default), naive_rag, …; repeatable")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = ap.parse_args()
    if args.compare:
        before, after = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        diff = [(b, a) for b, a in zip(before, after) if b != a]
        if len(before) != len(after):
            print(f"different lengths: {len(before)} vs {len(after)}")
            return 1
        for b, a in diff:
            print(f"{b['case']} {b['defendant']} {b['ablation']}:\n  before {b}\n  after  {a}")
        print(f"{len(before)} judgments compared, {len(diff)} differ")
        return 1 if diff else 0
    rows = fingerprint(args.cases, args.n, args.ablation or ["full"])
    text = json.dumps(rows, ensure_ascii=False, indent=1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
