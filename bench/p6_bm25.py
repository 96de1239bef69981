"""P6: our BM25 (lexlib.search.bm25.BM25Index) against rank-bm25 (BM25Okapi) on the same tokens.

Documents: every precedent fact of ../shared/data/cases.jsonl (tiny: the demo cases),
tokenized once with the Lextrace tokenizer; queries: eval facts (smoke.jsonl first).
Both libraries answer the same queries one at a time, interleaved, top-10 each with the
same selection rule (bench/bm25_choice.py:top_k). rank-bm25 needs about 3 s per query
on the full corpus, so only ``n`` queries run (20 full, 5 tiny). Also reported: top-10
set agreement and top-1 agreement (the two differ in idf for terms in more than half
of the documents; docs/SEARCH.md). Goal: our query time ≤ 1/50 of rank-bm25's.
"""

from __future__ import annotations

import time

import numpy as np

from bench.common import Context, goal, read_jsonl, row, shared_data_dir, spread, timed


def run(ctx: Context) -> list[dict]:
    import rank_bm25

    from lexlib.search.bm25 import BM25Index
    from lexlib.search.tokenize import Tokenizer
    from bench.bm25_choice import K, overlap, top_k

    docs_path = ctx.corpus_dir / "cases.jsonl"
    facts = [r["fact"] for r in read_jsonl(docs_path)]
    queries = [r["fact"] for r in ctx.eval_cases(ctx.size(20, 5))]
    tokenizer = Tokenizer()
    tokenizer.tokens("预热")  # dictionary load is not tokenization
    doc_tokens, tokenize_s = timed(tokenizer.tokens_many, facts)
    query_tokens = tokenizer.tokens_many(queries)

    ours, ours_build_s = timed(BM25Index.build, list(range(len(doc_tokens))), doc_tokens)
    okapi, okapi_build_s = timed(rank_bm25.BM25Okapi, doc_tokens, k1=1.5, b=0.75)
    ours.search(query_tokens[0], k=K)  # warm
    t_ours, t_okapi, r_ours, r_okapi = [], [], [], []
    for q in query_tokens:
        t = time.perf_counter()
        hits = ours.search(q, k=K)
        t_ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        scores = okapi.get_scores(q)
        found = top_k(np.asarray(scores, dtype=np.float64))
        t_okapi.append(time.perf_counter() - t)
        r_ours.append([int(d) for d, _ in hits])
        r_okapi.append(found)
    top10, top1 = overlap(r_ours, r_okapi)
    s_ours, s_okapi = spread([x * 1000 for x in t_ours]), spread([x * 1000 for x in t_okapi])
    ratio = s_ours["p50"] / s_okapi["p50"]
    return [row(
        "P6", f"BM25 query, {len(doc_tokens)} documents, top-{K} (p50)", s_ours["p50"], "ms",
        baseline="rank-bm25 BM25Okapi (k1 1.5, b 0.75) on the same tokens and queries, same run",
        baseline_value=s_okapi["p50"], ratio=ratio, stats=s_ours, baseline_stats=s_okapi,
        goals=[goal("query time ≤ 1/50 of rank-bm25", None if ctx.tiny else ratio <= 1 / 50)],
        details={"queries": len(query_tokens), "top10_agreement": top10, "top1_agreement": top1,
                 "build_s": {"ours": ours_build_s, "rank_bm25": okapi_build_s}, "tokenize_s": tokenize_s,
                 "documents_source": str(docs_path if ctx.tiny else shared_data_dir() / "cases.jsonl")},
    )]
