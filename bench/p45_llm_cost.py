"""P4/P5: LLM calls and prompt + completion tokens per defendant, counted by the OpenAI-compatible stub.

The LLM strategy runs against the real graph and indexes with worker/agents/testing/stub_server.py
answering every call with the minimal schema-valid reply (usage = prompt characters / 2);
the stub counts the calls, the client sums the usage it reports. Side by side in one run,
case by case: per-article checklist verification, per-item verification (the paper's
Auditor), and the naive-RAG baseline. Each defendant gets the production per-case budget
(LEXTRACE_LLM_MAX_CALLS / LEXTRACE_LLM_MAX_TOKENS), the cap. The stub's replies say
"not satisfied", so the Auditor verifies nothing and the Adjudicator is not called: the
figures are the retrieval-and-audit cost, the part that grows with the candidates.

Goals: median calls ≤ 30, and no defendant above the per-case call cap (P4; a defendant the
budget stops ends as ``budget_exhausted``, counted in ``stopped_by_budget``); tokens ≤ 3× naive RAG and
≤ 10.7k, the paper's figure (P5) — for the configured checklist mode (LEXTRACE_LLM_CHECKLIST_MODE).
"""

from __future__ import annotations

from bench.common import Context, goal, row, spread

PAPER_TOKENS = 10_700
VARIANTS = (("per-article", "article", "full"), ("per-item", "item", "full"), ("naive RAG", "article", "naive_rag"))


def run(ctx: Context) -> list[dict]:
    from django.conf import settings

    from apps.graph.retriever import DbRetriever
    from apps.graph.store import AgeGraphStore
    from worker.agents.llm import Budget, BudgetExceeded, LLMClient
    from worker.agents.testing.stub_server import StubServer
    from worker.agents.pipeline import Params, adjudicate
    from worker.agents.strategies.llm import LLMStrategy
    from worker.agents.types import CaseInput

    graph, retriever = AgeGraphStore(), DbRetriever()
    records = ctx.eval_cases(ctx.size(10, 2))
    calls = {label: [] for label, _, _ in VARIANTS}
    tokens = {label: [] for label, _, _ in VARIANTS}
    statuses = {label: {} for label, _, _ in VARIANTS}
    capped = {label: 0 for label, _, _ in VARIANTS}
    with StubServer() as stub:
        stub.set_mode("ok")
        for record in records:
            case = CaseInput(facts=record["fact"], defendants=tuple(record.get("defendants", ())[:1]))
            for label, mode, ablation in VARIANTS:
                budget = Budget(max_calls=settings.LLM_MAX_CALLS_PER_CASE, max_tokens=settings.LLM_MAX_TOKENS_PER_CASE)
                client = LLMClient(stub.url, "stub-model", max_retries=0, budget=budget,
                                   max_tokens=settings.LLM_MAX_REPLY_TOKENS)
                stub.state.reset_stats()
                try:
                    bundle = adjudicate(case, case.defendants[0] if case.defendants else "",
                                        strategy=LLMStrategy(client, checklist_mode=mode,
                                                                         context_tokens=settings.LLM_CONTEXT_TOKENS), graph=graph,
                                        retriever=retriever, params=Params.for_ablation(ablation))
                    status = bundle.judgment.status.value
                    capped[label] += "budget" in status
                except BudgetExceeded:
                    capped[label] += 1
                    status = "budget exceeded"
                totals = client.usage.totals()
                calls[label].append(stub.state.calls)
                tokens[label].append(int(totals.prompt_tokens + totals.completion_tokens))
                statuses[label][status] = statuses[label].get(status, 0) + 1
    configured = {"article": "per-article", "item": "per-item"}[settings.LLM_CHECKLIST_MODE]
    c, t = {k: spread(v) for k, v in calls.items()}, {k: spread(v) for k, v in tokens.items()}
    naive_calls, naive_tokens = c["naive RAG"]["p50"] or 1, t["naive RAG"]["p50"] or 1
    details = {"defendants": len(records), "configured_mode": configured, "cap_calls": settings.LLM_MAX_CALLS_PER_CASE,
               "cap_tokens": settings.LLM_MAX_TOKENS_PER_CASE, "statuses": statuses, "stopped_by_budget": capped,
               "calls": c, "tokens": t, "paper_tokens": PAPER_TOKENS}
    rows = []
    for label in ("per-article", "per-item"):
        tag = "" if label == configured else " (not the configured mode)"
        rows.append(row(
            "P4", f"LLM calls per defendant, {label} checklist{tag} (p50)", c[label]["p50"], "calls",
            baseline="naive-RAG baseline through the same stub, same run", baseline_value=naive_calls,
            stats=c[label], baseline_stats=c["naive RAG"],
            goals=[goal("median calls ≤ 30", None if ctx.tiny else c[label]["p50"] <= 30),
                   goal(f"calls within the per-case cap ({settings.LLM_MAX_CALLS_PER_CASE})",
                        c[label]["max"] <= settings.LLM_MAX_CALLS_PER_CASE)],
            details=details if label == configured else {},
        ))
        rows.append(row(
            "P5", f"LLM tokens per defendant, {label} checklist{tag} (p50)", t[label]["p50"], "tokens",
            baseline="naive-RAG baseline through the same stub, same run", baseline_value=naive_tokens,
            stats=t[label], baseline_stats=t["naive RAG"],
            goals=[goal("tokens ≤ 3× naive RAG", None if ctx.tiny else t[label]["p50"] <= 3 * naive_tokens),
                   goal("tokens ≤ 10.7k (paper)", None if ctx.tiny else t[label]["p50"] <= PAPER_TOKENS)],
            details={"ratio_to_paper": t[label]["p50"] / PAPER_TOKENS},
        ))
    return rows
