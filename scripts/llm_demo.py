"""Run the LLM strategy on one small case against a real model server.

The pure pipeline (worker/agents/pipeline.py) over the in-memory fixture graph
(worker/agents/testing/fixtures.py: illustrative statutes and invented cases, not legal
information), with the production LLMClient talking to whatever
OpenAI-compatible server LEXTRACE_LLM_BASE_URL names - usually the llama.cpp
server of scripts/llm.sh. No database, no Django.

    eval "$(bash scripts/llm.sh start 1.5b)"
    .local/venv/bin/python scripts/llm_demo.py [--facts TEXT] [--paths chg|all] [--bundle out.json]

or simply `make llm-demo` (`make llm-demo LLM_SIZE=0.5b` for the small model).

Environment: LEXTRACE_LLM_BASE_URL, LEXTRACE_LLM_MODEL (required),
LEXTRACE_LLM_API_KEY, LEXTRACE_LLM_TIMEOUT (seconds per request; 300 here
because one thread generates ~5 tokens/s), LEXTRACE_LLM_MAX_CALLS (12 here:
a small budget, so a confused model ends in budget_exhausted instead of
running on), LEXTRACE_LLM_MAX_TOKENS (60000), LEXTRACE_LLM_CHECKLIST_MODE (article).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from worker.agents.testing.fixtures import tiny_legal_graph  # noqa: E402
from worker.agents.llm import Budget, LLMClient  # noqa: E402
from worker.agents.testing.memory_retriever import InMemoryRetriever  # noqa: E402
from worker.agents.pipeline import Params, adjudicate  # noqa: E402
from worker.agents.strategies.llm import LLMStrategy  # noqa: E402
from worker.agents.types import Bundle, CaseInput  # noqa: E402

DEFAULT_FACTS = "被告人张某于2018年3月翻墙进入被害人李某家中，秘密窃取现金人民币五千元，以非法占有为目的。"
DEFAULT_DEFENDANT = "张某"


def _env_number(name: str, default: float, kind=float):
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return kind(raw)
    except ValueError:
        sys.exit(f"{name} must be a number, got {raw!r}")


def make_client(*, max_calls: int | None = None, timeout_s: float | None = None) -> LLMClient:
    base_url = os.environ.get("LEXTRACE_LLM_BASE_URL", "").strip()
    model = os.environ.get("LEXTRACE_LLM_MODEL", "").strip()
    if not base_url or not model:
        sys.exit("set LEXTRACE_LLM_BASE_URL and LEXTRACE_LLM_MODEL first, e.g. eval \"$(bash scripts/llm.sh start)\"")
    budget = Budget(max_calls=max_calls if max_calls is not None else _env_number("LEXTRACE_LLM_MAX_CALLS", 12, int),
                    max_tokens=_env_number("LEXTRACE_LLM_MAX_TOKENS", 60000, int))
    return LLMClient(base_url, model, api_key=os.environ.get("LEXTRACE_LLM_API_KEY") or None,
                     timeout_s=timeout_s if timeout_s is not None else _env_number("LEXTRACE_LLM_TIMEOUT", 300.0),
                     max_retries=1, budget=budget)


def run_demo(client: LLMClient, *, facts: str = DEFAULT_FACTS, defendant: str = DEFAULT_DEFENDANT,
             offence_date: dt.date = dt.date(2018, 3, 1), paths: str = "chg",
             checklist_mode: str = "article") -> tuple[Bundle, float]:
    """One defendant through the pipeline; returns the bundle and the wall-clock seconds."""
    graph = tiny_legal_graph()
    # "chg" keeps the run short: only the pre-judged charges' articles are audited.
    params = Params(paths=("chg",)) if paths == "chg" else Params()
    case = CaseInput(facts=facts, defendants=(defendant,) if defendant else (), offence_date=offence_date)
    started = time.perf_counter()
    bundle = adjudicate(case, defendant, strategy=LLMStrategy(client, checklist_mode=checklist_mode), graph=graph,
                        retriever=InMemoryRetriever(graph), params=params)
    return bundle, time.perf_counter() - started


def report(bundle: Bundle, client: LLMClient, seconds: float) -> str:
    j = bundle.judgment
    totals = client.usage.totals()
    lines = [
        f"model:      {client.model} at {client.base_url} (checklist mode {bundle.versions.get('checklist', '?')})",
        f"status:     {j.status}",
        f"charges:    {'、'.join(j.charges) or '-'}",
        f"articles:   {', '.join(j.article_keys) or '-'}",
        f"citations:  {j.citations or '-'}",
    ]
    if j.term is not None and j.status == "judged":
        lines.append(f"term:       {j.term.months} months{' (life)' if j.term.life else ''}{' (death)' if j.term.death else ''}")
    if j.message:
        lines.append(f"message:    {j.message}")
    if j.reasoning:
        lines.append(f"reasoning:  {j.reasoning}")
    lines += [
        (f"llm calls:  {totals.calls} HTTP requests, {totals.results} results, {totals.repairs} repairs, "
         f"{totals.failures} failures (budget {client.budget.max_calls})"),
        f"tokens:     {totals.prompt_tokens} prompt + {totals.completion_tokens} completion = {totals.total_tokens}",
        f"seconds:    {seconds:.1f}",
        "stages:",
    ]
    for cost in bundle.costs:
        lines.append(f"  {cost.stage:<12} {cost.seconds:7.1f} s  {cost.llm_calls:2d} calls  "
                     f"{cost.prompt_tokens:5d} + {cost.completion_tokens:4d} tokens")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", default=DEFAULT_FACTS)
    parser.add_argument("--defendant", default=DEFAULT_DEFENDANT)
    parser.add_argument("--offence-date", default="2018-03-01", type=dt.date.fromisoformat)
    parser.add_argument("--paths", choices=("chg", "all"), default="chg",
                        help="retrieval paths: chg (short run, default) or all four")
    parser.add_argument("--checklist-mode", choices=LLMStrategy.CHECKLIST_MODES,
                        default=os.environ.get("LEXTRACE_LLM_CHECKLIST_MODE") or "article")
    parser.add_argument("--max-calls", type=int, default=None, help="call budget (default LEXTRACE_LLM_MAX_CALLS or 12)")
    parser.add_argument("--bundle", type=Path, help="also write the evidence bundle as JSON to this file")
    args = parser.parse_args(argv)
    client = make_client(max_calls=args.max_calls)
    bundle, seconds = run_demo(client, facts=args.facts, defendant=args.defendant, offence_date=args.offence_date,
                               paths=args.paths, checklist_mode=args.checklist_mode)
    print(report(bundle, client, seconds))
    if args.bundle:
        args.bundle.write_text(json.dumps(bundle.to_dict(), ensure_ascii=False, indent=1))
        print(f"bundle:     {args.bundle}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
