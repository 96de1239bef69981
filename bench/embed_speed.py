"""How long each CPU embedding backend needs for the precedent corpus and the statutes.

    . scripts/env.sh && python bench/embed_speed.py [--e5-cases 100] [--skip-e5-statutes]

Prints, asserts nothing. Reads the shared data at run time ($LEXTRACE_SHARED_DATA,
default ../shared/data relative to the repository). LSA is fitted and applied to
all cases; e5 embeds a sample of cases (evenly spaced, so lengths are
representative) and the time for the whole corpus is extrapolated both per case
and per character. A small, informative quality check: for the first 200
evaluation facts, how often the nearest precedent (LSA, and BM25 for reference)
carries one of the gold charges.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from lexlib.search.bm25 import BM25Index  # noqa: E402
from lexlib.search.embeddings import E5Backend, LSABackend  # noqa: E402
from lexlib.search.tokenize import Tokenizer  # noqa: E402


def shared_data_dir() -> Path:
    return Path(os.environ.get("LEXTRACE_SHARED_DATA", ROOT.parent / "shared" / "data"))


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0


def eval_cases(data: Path, n: int) -> list[dict]:
    """smoke.jsonl first, then the rest of cail_dev.jsonl (smoke is a subset of it)."""
    seen: set[str] = set()
    out: list[dict] = []
    for name in ("smoke.jsonl", "cail_dev.jsonl"):
        for rec in read_jsonl(data / "eval" / name):
            if rec["id"] not in seen and len(out) < n:
                seen.add(rec["id"])
                out.append(rec)
    return out


def top1_charge_hit(neighbours: list[int], queries: list[dict], cases: list[dict]) -> float:
    hits = [bool(set(q["charges"]) & set(cases[i]["charges"])) for q, i in zip(queries, neighbours)]
    return float(np.mean(hits))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--e5-cases", type=int, default=100)
    ap.add_argument("--skip-e5-statutes", action="store_true", help="do not embed all statutes with e5")
    ap.add_argument("--json", type=Path, help="also write the numbers here")
    args = ap.parse_args()

    data = shared_data_dir()
    if not (data / "cases.jsonl").exists():
        sys.exit(f"shared data not found at {data} (set LEXTRACE_SHARED_DATA)")
    cases = read_jsonl(data / "cases.jsonl")
    facts = [c["fact"] for c in cases]
    statutes = [f"{r['label']} {r['text']}" for r in read_jsonl(data / "statutes.jsonl")]
    queries = eval_cases(data, 200)
    n_chars = sum(map(len, facts))
    r: dict = {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "command": "python bench/embed_speed.py " + " ".join(sys.argv[1:]),
        "machine": f"{platform.platform()}, {os.cpu_count()} cpus, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}",
        "cases": len(facts), "case_chars": n_chars,
    }
    print(f"# embedding speed — {r['date']}\n# {r['machine']}\n# {len(facts)} cases, {n_chars:,} chars")

    # -- LSA over the whole corpus ----------------------------------------------------------
    tok = Tokenizer()
    tok.tokens("预热")
    tokens, r["tokenize_s"] = timed(tok.tokens_many, facts)
    lsa = LSABackend(tokenizer=tok)
    _, r["lsa_fit_s"] = timed(lsa.fit_tokens, tokens)
    vectors, r["lsa_embed_s"] = timed(lsa.embed_tokens, tokens)
    one_query = queries[0]["fact"]
    lsa.embed_queries([one_query])
    _, r["lsa_query_s"] = timed(lsa.embed_queries, [one_query])
    r["lsa_dim"], r["lsa_vocab"], r["lsa_model_id"] = lsa.dim, len(lsa._vocab), lsa.model_id
    total = r["tokenize_s"] + r["lsa_fit_s"] + r["lsa_embed_s"]
    print(f"LSA (dim {lsa.dim}, vocabulary {len(lsa._vocab):,}): tokenize {r['tokenize_s']:.1f} s + fit "
          f"{r['lsa_fit_s']:.1f} s + embed all {r['lsa_embed_s']:.1f} s = {total:.1f} s; "
          f"one eval fact as query (tokenize + embed) {1000 * r['lsa_query_s']:.0f} ms")

    # -- e5 on a sample, extrapolated --------------------------------------------------------
    e5 = E5Backend()
    e5.embed_queries(["预热"])
    step = max(1, len(facts) // args.e5_cases)
    sample = facts[::step][: args.e5_cases]
    _, e5_s = timed(e5.embed_passages, sample)
    sample_chars = sum(map(len, sample))
    r.update(e5_sample=len(sample), e5_sample_s=e5_s, e5_sample_chars=sample_chars,
             e5_full_by_count_s=e5_s / len(sample) * len(facts), e5_full_by_chars_s=e5_s / sample_chars * n_chars)
    _, r["e5_query_s"] = timed(e5.embed_queries, [one_query])
    _, r["e5_short_query_s"] = timed(e5.embed_queries, ["被告人醉酒驾驶机动车"])
    print(f"e5: {len(sample)} cases ({sample_chars:,} chars) {e5_s:.1f} s = {e5_s / len(sample):.2f} s/case; "
          f"all {len(facts)} cases ≈ {r['e5_full_by_count_s'] / 3600:.1f} h by count, "
          f"{r['e5_full_by_chars_s'] / 3600:.1f} h by characters; one eval fact as query "
          f"({len(one_query)} chars) {1000 * r['e5_query_s']:.0f} ms")
    print(f"e5 short query (10 chars) {1000 * r['e5_short_query_s']:.0f} ms")
    print(f"ratio e5 (extrapolated) / LSA (tokenize+fit+embed): {r['e5_full_by_chars_s'] / total:.0f}x")
    if not args.skip_e5_statutes:
        _, r["e5_statutes_s"] = timed(e5.embed_passages, statutes)
        _, r["lsa_statutes_s"] = timed(lsa.embed_passages, statutes)
        print(f"all {len(statutes)} statutes: e5 {r['e5_statutes_s']:.1f} s "
              f"({r['e5_statutes_s'] / len(statutes):.2f} s each); LSA {r['lsa_statutes_s']:.2f} s")

    # -- informative: does the nearest precedent carry a gold charge? ---------------------------
    q_tokens = tok.tokens_many([q["fact"] for q in queries])
    lsa_top1 = (lsa.embed_tokens(q_tokens) @ vectors.T).argmax(axis=1).tolist()
    bm25 = BM25Index.build(list(range(len(tokens))), tokens)
    bm25_top1 = [hits[0][0] if hits else 0 for hits in bm25.search_many(q_tokens, k=1)]
    r["charge_hit_at1_lsa"] = top1_charge_hit(lsa_top1, queries, cases)
    r["charge_hit_at1_bm25"] = top1_charge_hit(bm25_top1, queries, cases)
    print(f"nearest precedent shares a gold charge ({len(queries)} eval facts): "
          f"LSA {r['charge_hit_at1_lsa']:.1%}, BM25 {r['charge_hit_at1_bm25']:.1%}")
    if args.json:
        args.json.write_text(json.dumps(r, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
