"""The statistical pipeline end to end on ../shared/data/eval/smoke.jsonl against the
real graph (AGE) and indexes (pgvector, BM25) of the full corpus.

Reports time per defendant (p50, p90) with the naive-RAG baseline run side by
side on the same cases (ratio full / naive), and, for information only, how
often the predicted charge set equals the gold one. smoke.jsonl is part of the
development set: nothing is fitted to it.

Run:  make bench-pipeline   (after make bench-import, make bench-search, make bench-graph)
"""

import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legalsite.settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from apps.graph.models import GraphBuild  # noqa: E402
from apps.graph.services.reasoning import judgment_compute  # noqa: E402
from worker.agents.types import CaseInput  # noqa: E402

SHARED = Path(os.environ.get("LEXTRACE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def norm(charges):
    return {c if c.endswith("罪") else c + "罪" for c in charges}


def subsequence(short, long):
    it = iter(long)
    return all(ch in it for ch in short)


def exact_match(predicted, gold):
    """DESIGN.md §6: append 罪; a prediction counts as a gold label when the gold is a character subsequence of it."""
    gold = norm(gold)
    mapped = {next((g for g in gold if subsequence(g, p)), p) for p in norm(predicted)}
    return mapped == gold


def run(cases, ablation):
    times, exact, statuses = [], 0, {}
    for record in cases:
        case = CaseInput(facts=record["fact"], defendants=tuple(record["defendants"][:1]))
        t = time.perf_counter()
        [bundle] = judgment_compute(case=case, ablation=ablation)
        times.append(time.perf_counter() - t)
        statuses[bundle.judgment.status.value] = statuses.get(bundle.judgment.status.value, 0) + 1
        exact += exact_match(bundle.judgment.charges, record["charges"])
    return times, exact, statuses


def main() -> None:
    if connection.settings_dict["NAME"] != "lextrace_bench" or not GraphBuild.objects.filter(status="done").exists():
        sys.exit("run through `make bench-pipeline` after the corpus, indexes and graph are built in lextrace_bench")
    cases = [json.loads(line) for line in (SHARED / "eval" / "smoke.jsonl").open(encoding="utf-8")]
    judgment_compute(case=CaseInput(facts=cases[0]["fact"], defendants=("甲",)))  # warm caches (tokenizer, models)
    rows = {name: run(cases, name) for name in ("full", "naive_rag")}
    print(f"{len(cases)} cases of smoke.jsonl, first defendant each, statistical strategy")
    for name, (times, exact, statuses) in rows.items():
        q = statistics.quantiles(times, n=10)
        print(f"  {name:<10} p50 {statistics.median(times):.3f} s  p90 {q[-1]:.3f} s per defendant; "
              f"charge set exact {exact}/{len(cases)}; statuses {statuses}")
    full, naive = statistics.median(rows["full"][0]), statistics.median(rows["naive_rag"][0])
    print(f"  ratio p50 full / naive_rag: {full / naive:.2f}")


if __name__ == "__main__":
    main()
