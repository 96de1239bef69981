"""Measure bm25s against rank-bm25 on the real corpus to choose the BM25 backend.

    . scripts/env.sh && python bench/bm25_choice.py [--queries 200] [--json out.json]

Reads the shared data at run time ($LEXTRACE_SHARED_DATA, default ../shared/data
relative to the repository). Tokenizes once with the Lextrace tokenizer (timed
separately), then, for each corpus and library, builds an index and runs the same
queries in a forked child process so that peak memory is attributed to one
library at a time. Query texts are never printed (evaluation data).
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import json
import multiprocessing as mp
import os
import platform
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bm25s  # noqa: E402
import numpy as np  # noqa: E402
import rank_bm25  # noqa: E402

from lexlib.search.bm25 import BM25Index  # noqa: E402
from lexlib.search.tokenize import Tokenizer  # noqa: E402

K = 10
Tokens = list[list[str]]


def shared_data_dir() -> Path:
    return Path(os.environ.get("LEXTRACE_SHARED_DATA", ROOT.parent / "shared" / "data"))


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def eval_queries(data: Path, n: int) -> list[str]:
    """smoke.jsonl first, then cail_dev.jsonl cases not already taken (smoke is a subset of it)."""
    seen: set[str] = set()
    facts: list[str] = []
    for name in ("smoke.jsonl", "cail_dev.jsonl"):
        for rec in read_jsonl(data / "eval" / name):
            if rec["id"] not in seen and len(facts) < n:
                seen.add(rec["id"])
                facts.append(rec["fact"])
    return facts


# -- memory ---------------------------------------------------------------------
def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return -1


def reset_peak_rss() -> bool:
    """Reset VmHWM (Linux >= 4.0) so the child's peak reflects only its own work."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


# -- the contenders -----------------------------------------------------------------
def top_k(scores: np.ndarray, k: int = K) -> list[int]:
    """Same selection for every library: positive scores, best first, ties by index."""
    order = np.lexsort((np.arange(scores.size), -scores))[:k]
    return [int(i) for i in order if scores[i] > 0]


def run_bm25s(method: str) -> Callable[[Tokens, Tokens], tuple[float, float, list[list[int]]]]:
    def run(docs: Tokens, queries: Tokens) -> tuple[float, float, list[list[int]]]:
        t0 = time.perf_counter()
        retriever = bm25s.BM25(k1=1.5, b=0.75, method=method)
        retriever.index(docs, show_progress=False)
        t1 = time.perf_counter()
        results = []
        for q in queries:
            ids = retriever.get_tokens_ids(q)
            scores = retriever.get_scores_from_ids(ids) if ids else np.zeros(len(docs), np.float32)
            results.append(top_k(np.asarray(scores, dtype=np.float64)))
        return t1 - t0, time.perf_counter() - t1, results

    return run


def run_rank_bm25(docs: Tokens, queries: Tokens) -> tuple[float, float, list[list[int]]]:
    t0 = time.perf_counter()
    okapi = rank_bm25.BM25Okapi(docs, k1=1.5, b=0.75)
    t1 = time.perf_counter()
    results = [top_k(np.asarray(okapi.get_scores(q), dtype=np.float64)) for q in queries]
    return t1 - t0, time.perf_counter() - t1, results


def run_lextrace(docs: Tokens, queries: Tokens) -> tuple[float, float, list[list[int]]]:
    t0 = time.perf_counter()
    index = BM25Index.build(list(range(len(docs))), docs)
    t1 = time.perf_counter()
    results = [[int(d) for d, _ in hits] for hits in index.search_many(queries, k=K)]
    return t1 - t0, time.perf_counter() - t1, results


CONTENDERS: dict[str, Callable[[Tokens, Tokens], tuple[float, float, list[list[int]]]]] = {
    "bm25s (lucene)": run_bm25s("lucene"),
    "bm25s (robertson)": run_bm25s("robertson"),
    "rank-bm25 (Okapi)": run_rank_bm25,
    "lextrace BM25Index": run_lextrace,
}


def _child(name: str, docs: Tokens, queries: Tokens, conn) -> None:
    exact = reset_peak_rss()
    rss0 = _status_kb("VmRSS")
    build_s, query_s, results = CONTENDERS[name](docs, queries)
    conn.send({"build_s": build_s, "query_s": query_s, "results": results,
               "peak_mb": _status_kb("VmHWM") / 1024, "delta_mb": (_status_kb("VmHWM") - rss0) / 1024,
               "peak_exact": exact})
    conn.close()


def measure(name: str, docs: Tokens, queries: Tokens) -> dict:
    ctx = mp.get_context("fork")  # the child inherits the tokenized corpus without copying it
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(name, docs, queries, child))
    proc.start()
    child.close()
    out = parent.recv()
    proc.join()
    return out


def overlap(a: Sequence[list[int]], b: Sequence[list[int]]) -> tuple[float, float]:
    """Mean top-k set overlap and top-1 agreement."""
    sets = [len(set(x) & set(y)) / max(len(x), len(y), 1) for x, y in zip(a, b)]
    top1 = [bool(x and y and x[0] == y[0]) for x, y in zip(a, b)]
    return float(np.mean(sets)), float(np.mean(top1))


def common_terms(docs: Tokens, queries: Tokens) -> tuple[int, float]:
    """Terms in more than half of the documents, and their share of all query tokens.

    Okapi idf log((N-df+0.5)/(df+0.5)) is negative for them: rank-bm25 replaces it
    with 0.25 x the mean idf, bm25s Robertson keeps it negative, Lucene's
    log(1 + ...) stays small and positive. That is where the variants disagree.
    """
    df = Counter(t for d in docs for t in set(d))
    common = {t for t, n in df.items() if n > len(docs) / 2}
    total = sum(len(q) for q in queries)
    return len(common), sum(t in common for q in queries for t in q) / max(total, 1)


def variant_deviation(docs: Tokens, queries: Tokens) -> float:
    """Largest relative gap between rank-bm25 Okapi and (k1+1) x bm25s Robertson on common-term-free queries."""
    df = Counter(t for d in docs for t in set(d))
    common = {t for t, n in df.items() if n > len(docs) / 2}
    okapi = rank_bm25.BM25Okapi(docs, k1=1.5, b=0.75)
    robertson = bm25s.BM25(k1=1.5, b=0.75, method="robertson")
    robertson.index(docs, show_progress=False)
    worst = 0.0
    for q in queries:
        q = [t for t in q if t not in common]
        ids = robertson.get_tokens_ids(q)
        if not ids:
            continue
        a = np.asarray(okapi.get_scores(q), dtype=np.float64)
        b = 2.5 * np.asarray(robertson.get_scores_from_ids(ids), dtype=np.float64)
        worst = max(worst, float(np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-12)))
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--json", type=Path, help="also write the numbers here")
    args = ap.parse_args()

    data = shared_data_dir()
    if not (data / "cases.jsonl").exists():
        sys.exit(f"shared data not found at {data} (set LEXTRACE_SHARED_DATA)")
    cases = [r["fact"] for r in read_jsonl(data / "cases.jsonl")]
    statutes = [f"{r['label']} {r['text']}" for r in read_jsonl(data / "statutes.jsonl")]
    queries = eval_queries(data, args.queries)

    tok = Tokenizer()
    t0 = time.perf_counter()
    tok.tokens("预热")  # dictionary load is not tokenization
    t_init = time.perf_counter() - t0
    t0 = time.perf_counter()
    case_tokens = tok.tokens_many(cases)
    t_cases = time.perf_counter() - t0
    t0 = time.perf_counter()
    statute_tokens = tok.tokens_many(statutes)
    query_tokens = tok.tokens_many(queries)
    t_rest = time.perf_counter() - t0

    report: dict = {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "command": "python bench/bm25_choice.py " + " ".join(sys.argv[1:]),
        "machine": f"{platform.platform()}, {os.cpu_count()} cpus, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}",
        "versions": {"bm25s": bm25s.__version__, "rank_bm25": importlib.metadata.version("rank-bm25"), "numpy": np.__version__},
        "tokenize": {
            "dictionary_load_s": t_init,
            "cases_s": t_cases, "cases_docs": len(cases), "cases_chars": sum(map(len, cases)),
            "cases_tokens": sum(map(len, case_tokens)),
            "statutes_and_queries_s": t_rest, "queries": len(queries),
            "query_tokens_mean": float(np.mean([len(q) for q in query_tokens])),
        },
        "corpora": {},
    }
    print(f"# BM25 library choice — {report['date']}\n# {report['machine']}")
    tk = report["tokenize"]
    print(f"tokenize: dictionary {t_init:.2f} s; {len(cases)} case facts ({tk['cases_chars']:,} chars, "
          f"{tk['cases_tokens']:,} tokens) {t_cases:.1f} s; {len(statutes)} statutes + {len(queries)} queries "
          f"{t_rest:.1f} s (mean {tk['query_tokens_mean']:.0f} tokens/query)")

    for corpus_name, docs in (("cases", case_tokens), ("statutes", statute_tokens)):
        rows = {name: measure(name, docs, query_tokens) for name in CONTENDERS}
        ref = rows["bm25s (lucene)"]
        okapi = rows["rank-bm25 (Okapi)"]
        print(f"\n## {corpus_name}: {len(docs)} documents, {len(query_tokens)} queries, top-{K}")
        print(f"{'library':<22}{'build s':>9}{'queries s':>11}{'ms/query':>10}{'peak RSS MB':>13}"
              f"{'+RSS MB':>9}{'top10 ∩ Okapi':>15}{'top1 = Okapi':>14}")
        for name, r in rows.items():
            ov, t1 = overlap(r["results"], okapi["results"])
            r.update(overlap_okapi=ov, top1_okapi=t1)
            print(f"{name:<22}{r['build_s']:>9.2f}{r['query_s']:>11.2f}{1000 * r['query_s'] / len(query_tokens):>10.2f}"
                  f"{r['peak_mb']:>13.0f}{r['delta_mb']:>9.0f}{ov:>15.3f}{t1:>14.3f}")
        ratios = {
            "build": okapi["build_s"] / ref["build_s"],
            "query": okapi["query_s"] / ref["query_s"],
            "query_vs_lextrace": okapi["query_s"] / rows["lextrace BM25Index"]["query_s"],
            "added_rss": okapi["delta_mb"] / max(ref["delta_mb"], 1e-9),
        }
        common, share = common_terms(docs, query_tokens)
        print(f"variant check: {common} terms occur in more than half of the documents and make up "
              f"{share:.0%} of query tokens; only their idf differs between Okapi (floored at "
              f"0.25 x mean idf) and Lucene/Robertson")
        deviation = variant_deviation(docs, query_tokens[:20])
        print(f"variant check: with those terms removed from 20 queries, max |Okapi - 2.5 x Robertson| "
              f"= {deviation:.1e} of the largest score (same formula up to Okapi's constant (k1+1) factor)")
        same, _ = overlap(rows["lextrace BM25Index"]["results"], ref["results"])
        print(f"ratios rank-bm25 / bm25s(lucene): build {ratios['build']:.1f}x, queries {ratios['query']:.0f}x, "
              f"added RSS {ratios['added_rss']:.1f}x; rank-bm25 / BM25Index queries {ratios['query_vs_lextrace']:.0f}x")
        print(f"BM25Index vs bm25s(lucene) top-{K} overlap: {same:.3f} (same scores, expected 1.000)")
        for r in rows.values():
            del r["results"]
        report["corpora"][corpus_name] = {"docs": len(docs), "rows": rows, "ratios": ratios,
                                          "lextrace_vs_bm25s_overlap": same,
                                          "terms_df_over_half": common, "query_token_share_df_over_half": share,
                                          "okapi_vs_robertson_max_rel_deviation": deviation}
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
