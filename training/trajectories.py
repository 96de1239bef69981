"""Planner trajectories of approved agentic runs, as chat JSONL for supervised fine-tuning (and as GRPO prompts).

    python -m training.trajectories --bundles approved.jsonl --exclude ../shared/data/eval/cail_dev.jsonl --out traj.jsonl

``--bundles`` holds one evidence bundle per line (Bundle.to_dict() of an approved run's defendant;
`manage.py export_trajectories --bundles` writes it from the database). Each agentic bundle becomes
one conversation with the evidence masked (worker/agents/tools/trajectories.py describes the format).

Contamination filter as training/sft_export.py: a bundle whose facts share a ``--ngram`` run with an
evaluation file is dropped (boilerplate n-grams excepted).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from lexlib.contamination import boilerplate, contamination_index, is_contaminated
from worker.agents.tools.trajectories import trajectory_example
from worker.agents.types import Bundle


def trajectory_examples(bundles: Iterable[Bundle | dict], *, lang: str = "zh", exclude_facts: Iterable[str] = (),
                        ngram: int = 20, boilerplate_cases: int = 2) -> Iterator[dict]:
    """Examples of the agentic bundles (typed, or as Bundle.to_dict() stored them) not contaminated by
    ``exclude_facts`` (evaluation sets)."""
    bundles = [Bundle.of(b) for b in bundles]
    index = contamination_index(exclude_facts, ngram)
    if index:
        facts = [b.case.facts for b in bundles]
        index -= boilerplate(facts, index, ngram, boilerplate_cases)
    for bundle in bundles:
        if index and is_contaminated(bundle.case.facts, index, ngram):
            continue
        example = trajectory_example(bundle, lang=lang)
        if example is not None:
            yield example


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.trajectories", description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundles", type=Path, required=True, help="JSONL, one Bundle.to_dict() per line")
    parser.add_argument("--exclude", type=Path, action="append", default=[], help="evaluation files (repeatable)")
    parser.add_argument("--ngram", type=int, default=20)
    parser.add_argument("--lang", default="zh", choices=("zh", "en"))
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    read = lambda path: [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    bundles = read(args.bundles)
    excluded = [r["fact"] for path in args.exclude for r in read(path)]
    written = 0
    with args.out.open("w", encoding="utf-8") as handle:
        for example in trajectory_examples(bundles, lang=args.lang, exclude_facts=excluded, ngram=args.ngram):
            handle.write(json.dumps(example, ensure_ascii=False) + "\n")
            written += 1
    print(json.dumps({"bundles": len(bundles), "trajectories": written, "out": str(args.out)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
