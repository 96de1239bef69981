"""P2: retrieval per defendant, all paths (the Researcher: R_sem, R_com, R_chg, R_art, and the
articles of the retrieved cases) against the live graph and indexes; and, as a second row, the paths the
statistical judge runs (R_chg alone when it has a charge classifier).

Baseline, same run and same focused facts, interleaved: vector-only top-k — one dense
(pgvector HNSW) search of the precedents with the query embedded, k = the pipeline's k.
The strategy's focus, features and pre-judged charges are computed beforehand and not timed. Each
retrieval gets a fresh graph store and retriever, as a new run does (until 2026-12-04 one pair served every
repeat, so the second and third repeats of a defendant answered from their memos).
Goals: p50 ≤ 5× the baseline p50, and ≤ 100 ms.
"""

from __future__ import annotations

import time

from bench.common import Context, goal, row, spread


def run(ctx: Context) -> list[dict]:
    from apps.corpus.models import SearchIndex
    from apps.corpus.search_service import dense_search
    from apps.graph.retriever import DbRetriever
    from apps.judging.services import statistical_strategy
    from apps.graph.store import AgeGraphStore
    from worker.agents.pipeline import Params
    from worker.agents.stages.researcher import research
    from worker.agents.types import CaseInput

    strategy, params = statistical_strategy(), Params()
    inputs = []
    for record in ctx.eval_cases(ctx.size(40, 5)):
        case = CaseInput(facts=record["fact"], defendants=tuple(record.get("defendants", ())[:1]))
        focus = strategy.focus(case, case.defendants[0] if case.defendants else "")
        features, query_text = strategy.features(focus)
        inputs.append((case, focus, features, query_text, strategy.prejudge(focus, params.max_charges)))

    def retrieve(args, run_params):
        # A fresh graph store and retriever for each defendant, as a new run gets: their memos (a charge's
        # articles and precedents, the vectors read) must not answer a repeat of the same defendant.
        case, focus, features, query_text, prejudged = args
        return research(case, focus, features, query_text, prejudged, graph=AgeGraphStore(), retriever=DbRetriever(),
                        params=run_params)

    def vector_only(args):
        return dense_search(target=SearchIndex.Target.PRECEDENTS, query=args[1], k=params.k)

    judge_params = Params.for_ablation("full", paths=strategy.paths)
    variants = {"all paths": params, "the statistical judge's paths": judge_params}
    for run_params in variants.values():
        retrieve(inputs[0], run_params)
    vector_only(inputs[0])  # warm: tokenizer, models, prepared plans
    repeats = ctx.size(3, 1)
    times = {name: [] for name in variants}
    t_vec, hits = [], []
    for _ in range(repeats):
        for args in inputs:
            for name, run_params in variants.items():
                t = time.perf_counter()
                found = retrieve(args, run_params)
                times[name].append(time.perf_counter() - t)
                if run_params is params:
                    hits.append(len(found.hits))
            t = time.perf_counter()
            vector_only(args)
            t_vec.append(time.perf_counter() - t)
    s_vec = spread([x * 1000 for x in t_vec])
    rows = []
    for name, run_params in variants.items():
        s_run = spread([x * 1000 for x in times[name]])
        ratio = s_run["p50"] / s_vec["p50"]
        rows.append(row(
            "P2", f"retrieval per defendant, {name} (p50)", s_run["p50"], "ms",
            baseline=f"vector-only top-{params.k} (dense HNSW search of the precedents, query embedded), same run",
            baseline_value=s_vec["p50"], ratio=ratio, stats=s_run, baseline_stats=s_vec,
            goals=[goal("p50 ≤ 5× vector-only p50", None if ctx.tiny else ratio <= 5),
                   goal("p50 ≤ 100 ms", None if ctx.tiny else s_run["p50"] <= 100)],
            details={"defendants": len(inputs), "repeats": repeats, "hits_p50": sorted(hits)[len(hits) // 2],
                     "paths": list(run_params.paths)},
        ))
    return rows
