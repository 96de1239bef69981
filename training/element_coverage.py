"""How well the element check separates an offence's own articles from the others, on labelled cases.

    python -m training.element_coverage --cases .local/dev-split.jsonl \
        --checklists ../shared/data/checklists.jsonl --train ../shared/data/cases.jsonl

The training cases (the split left out), with the gold articles most often left without an element:

    python -m training.element_coverage --cases ../shared/data/cases.jsonl --exclude .local/dev-split.jsonl \
        --checklists ../shared/data/checklists.jsonl --missing 20

For every case: the share of its gold specific-part articles with at least one supported checklist item
(the Auditor can only pass those), and the share of the most frequent other articles (the ``--common``
most cited in ``--train``, the usual confusions) that get one anyway. The first should be high, the
second low; both are printed with the counts behind them.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from worker.agents.stages.auditor.elements import ElementChecker

SPECIFIC_PART_FROM = 102


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _articles(case: dict) -> set[int]:
    return {int(a) for a in case.get("articles") or [] if int(a) >= SPECIFIC_PART_FROM}


def coverage(cases: list[dict], checklists: dict[int, list[str]], common: list[int], checker: ElementChecker,
             missing: int = 0) -> dict:
    """The counts above; with ``missing``, also the gold articles most often left without a shown element, each
    with its count, its total and a few case ids (where a new wording of an element is worth looking for)."""
    gold = gold_hit = other = other_hit = 0
    unshown: dict[int, list[str]] = {}
    totals: Counter = Counter()
    for case in cases:
        own = {a for a in _articles(case) if a in checklists}
        for article in own | {a for a in common if a in checklists}:
            hit = any(s.satisfied for s in checker.check(case["fact"], checklists[article]))
            if article in own:
                gold, gold_hit = gold + 1, gold_hit + hit
                totals[article] += 1
                if not hit:
                    unshown.setdefault(article, []).append(case["id"])
            else:
                other, other_hit = other + 1, other_hit + hit
    result = {"cases": len(cases), "gold_articles": gold, "gold_supported": gold_hit,
              "gold_share": round(gold_hit / gold, 4) if gold else None, "other_articles": other,
              "other_supported": other_hit, "other_share": round(other_hit / other, 4) if other else None}
    if missing:
        worst = sorted(unshown.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:missing]
        result["gold_without_element"] = [{"article": a, "cases": len(ids), "of": totals[a], "examples": ids[:3]}
                                          for a, ids in worst]
    return result


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, required=True, help="labelled cases to check (e.g. the dev split)")
    parser.add_argument("--checklists", type=Path, required=True)
    parser.add_argument("--train", type=Path, help="cases whose most cited articles are the confusions (default --cases)")
    parser.add_argument("--common", type=int, default=12)
    parser.add_argument("--exclude", type=Path, help="cases whose ids are left out of both sets "
                        "(the development split, to read the training cases)")
    parser.add_argument("--missing", type=int, default=0,
                        help="also list the N gold articles most often without an element")
    args = parser.parse_args(argv)
    from lexlib.search.tokenize import Tokenizer

    checklists = {int(c["article"]): c["items"] for c in _jsonl(args.checklists) if not c.get("sub")}
    excluded = {c["id"] for c in _jsonl(args.exclude)} if args.exclude else set()
    cases = [c for c in _jsonl(args.cases) if c["id"] not in excluded]
    ids = {c["id"] for c in cases}
    if args.train and args.train.resolve() != args.cases.resolve():
        train = [c for c in _jsonl(args.train) if c["id"] not in ids and c["id"] not in excluded]
    else:  # the cases are their own confusions (e.g. the training cases read with --exclude)
        train = cases
    cited = Counter(a for c in train for a in _articles(c) if a in checklists)
    common = [a for a, _ in cited.most_common(args.common)]
    tokenize = Tokenizer().tokens
    # The share of the training precedents whose facts use each word (serving reads it from the BM25 index).
    used = Counter(w for c in train for w in set(tokenize(c["fact"])))

    def fact_share(words):
        return {w: used.get(w, 0) / max(1, len(train)) for w in words}

    checker = ElementChecker.from_items([q for items in checklists.values() for q in items], tokenize=tokenize,
                                        fact_share=fact_share)
    result = coverage(cases, checklists, common, checker, missing=args.missing)
    print(json.dumps(result, ensure_ascii=False))
    return result


if __name__ == "__main__":
    main()
