"""P3: the full statistical pipeline per defendant (Researcher, Auditor, Adjudicator, verification)
against the real graph (AGE) and indexes (pgvector, BM25), with the registered models.

Cases: ../shared/data/eval/smoke.jsonl (development set; nothing is fitted to it), first
defendant each; tiny: the demo cases. Baseline, same run, interleaved case by case: the
naive-RAG ablation (flat top-k retrieval, no audit). Also reported, for information only:
how often the predicted charge set equals the gold one (DESIGN.md §6 normalisation).
Goal: p50 ≤ 1 s.
"""

from __future__ import annotations

import time

from bench.common import Context, goal, row, spread


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


def run(ctx: Context) -> list[dict]:
    from apps.judging.services import judgment_compute
    from worker.agents.types import CaseInput

    records = ctx.eval_cases(ctx.size(40, 4))
    judgment_compute(case=CaseInput(facts=records[0]["fact"], defendants=("甲",)))  # warm caches (tokenizer, models)
    times = {"full": [], "naive_rag": []}
    exact = {"full": 0, "naive_rag": 0}
    statuses: dict[str, dict[str, int]] = {"full": {}, "naive_rag": {}}
    for record in records:
        case = CaseInput(facts=record["fact"], defendants=tuple(record.get("defendants", ())[:1]))
        for ablation, measured in times.items():
            t = time.perf_counter()
            [bundle] = judgment_compute(case=case, ablation=ablation)
            measured.append(time.perf_counter() - t)
            status = bundle.judgment.status.value
            statuses[ablation][status] = statuses[ablation].get(status, 0) + 1
            exact[ablation] += exact_match(bundle.judgment.charges, record.get("charges", []))
    full, naive = spread(times["full"]), spread(times["naive_rag"])
    return [row(
        "P3", "full statistical pipeline per defendant (p50)", full["p50"], "s",
        baseline="naive-RAG ablation (flat top-k, no audit), same cases, same run", baseline_value=naive["p50"],
        stats=full, baseline_stats=naive, goals=[goal("p50 ≤ 1 s", None if ctx.tiny else full["p50"] <= 1.0)],
        details={"defendants": len(records), "charge_set_exact": exact, "statuses": statuses},
    )]
