"""LLM calls and tokens per defendant (benchmarks P4/P5), counted by the OpenAI-compatible stub.

The LLM strategy runs against the real graph and indexes of the full corpus
(lextrace_bench) with the stub server answering every call with the minimal
schema-valid reply (usage = characters / 2). Side by side in one run:
per-article checklist verification, per-item verification (the paper's
Auditor), and the naive-RAG baseline. The stub's replies say "not satisfied",
so the Auditor verifies nothing and the Adjudicator is not called: the figures
are the retrieval-and-audit cost, the part that grows with the candidates.

Run:  make bench-llm-cost   (after make bench-import, make bench-search, make bench-graph)
"""

import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legalsite.settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from apps.graph.models import GraphBuild  # noqa: E402
from apps.graph.retriever import DbRetriever  # noqa: E402
from apps.graph.store import AgeGraphStore  # noqa: E402
from worker.agents.llm import LLMClient  # noqa: E402
from worker.agents.llm.stub_server import StubServer  # noqa: E402
from worker.agents.pipeline import Params, adjudicate  # noqa: E402
from worker.agents.strategies.llm import LLMStrategy  # noqa: E402
from worker.agents.types import CaseInput  # noqa: E402

SHARED = Path(os.environ.get("LEXTRACE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
LIMIT = int(os.environ.get("BENCH_LLM_CASES", "10"))
PAPER_TOKENS = 10_700


def run(cases, url: str, *, mode: str, ablation: str) -> list[tuple[int, int]]:
    graph, retriever = AgeGraphStore(), DbRetriever()
    per_defendant = []
    for record in cases:
        client = LLMClient(url, "stub-model", max_retries=0)
        strategy = LLMStrategy(client, checklist_mode=mode)
        case = CaseInput(facts=record["fact"], defendants=tuple(record["defendants"][:1]))
        adjudicate(case, case.defendants[0] if case.defendants else "", strategy=strategy, graph=graph,
                   retriever=retriever, params=Params.for_ablation(ablation))
        totals = client.usage.totals()
        per_defendant.append((int(totals.calls),
                              int(totals.prompt_tokens + totals.completion_tokens)))
    return per_defendant


def main() -> None:
    if connection.settings_dict["NAME"] != "lextrace_bench" or not GraphBuild.objects.filter(status="done").exists():
        sys.exit("run through `make bench-llm-cost` after the corpus, indexes and graph are built in lextrace_bench")
    cases = [json.loads(line) for line in (SHARED / "eval" / "smoke.jsonl").open(encoding="utf-8")][:LIMIT]
    rows = {}
    with StubServer() as stub:
        stub.set_mode("ok")
        for label, mode, ablation in (("per-article", "article", "full"), ("per-item", "item", "full"),
                                      ("naive RAG", "article", "naive_rag")):
            rows[label] = run(cases, stub.url, mode=mode, ablation=ablation)
    naive_tokens = statistics.median(t for _, t in rows["naive RAG"]) or 1
    print(f"{len(cases)} cases of smoke.jsonl, first defendant each, LLM strategy against the stub (usage = chars/2)")
    print(f"{'variant':<12} {'calls p50':>9} {'calls max':>9} {'tokens p50':>10} {'× naive':>8} {'÷ paper 10.7k':>13}")
    for label, values in rows.items():
        calls = [c for c, _ in values]
        tokens = [t for _, t in values]
        p50 = statistics.median(tokens)
        print(f"{label:<12} {statistics.median(calls):>9.0f} {max(calls):>9d} {p50:>10.0f} {p50 / naive_tokens:>8.2f} "
              f"{p50 / PAPER_TOKENS:>13.2f}")


if __name__ == "__main__":
    main()
