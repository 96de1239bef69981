"""Opt-in: the LLM path against a real llama.cpp server on this CPU (scripts/llm.sh).

Skipped unless LEXTRACE_LLM_REAL=1. The server is started here on a free port
and stopped at the end. The 0.5b model by default (plumbing, JSON enforcement:
its answers are often wrong); LEXTRACE_LLM_REAL_MODEL=1.5b for the demo model.
One thread: minutes, not seconds. No database.

    . scripts/env.sh
    LEXTRACE_LLM_REAL=1 python -m pytest -s -m llm tests/agents/test_llm_real.py
"""

import datetime as dt
import os
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest

from worker.agents.testing.fixtures import tiny_legal_graph
from worker.agents.llm import Budget, LLMClient
from worker.agents.testing.memory_retriever import InMemoryRetriever
from worker.agents.pipeline import Params, adjudicate
from worker.agents.strategies.llm import LLMStrategy
from worker.agents.types import CaseInput, Status

ROOT = Path(__file__).resolve().parents[2]
MODEL = os.environ.get("LEXTRACE_LLM_REAL_MODEL", "0.5b")
REQUEST_TIMEOUT_S = 600.0  # one request; a 2,000-token prompt takes minutes on one thread

pytestmark = [
    pytest.mark.llm,
    pytest.mark.slow,
    pytest.mark.skipif(os.environ.get("LEXTRACE_LLM_REAL") != "1",
                       reason="real LLM tests are opt-in: set LEXTRACE_LLM_REAL=1 (see docs/CONFIGURATION.md)"),
]

SCHEMA = {
    "type": "object",
    "properties": {
        "charges": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1, "maxItems": 3},
        "reasoning": {"type": "string"},
    },
    "required": ["charges", "reasoning"],
    "additionalProperties": False,
}
MESSAGES = [
    {"role": "system", "content": "你是法律推理助手。只输出 JSON。"},
    {"role": "user", "content": "案情：被告人王某在超市秘密窃取手机一部，价值三千元。\n请预判罪名，并简要说明理由。"},
]
FACTS = "被告人张某于2018年3月翻墙进入被害人李某家中，秘密窃取现金人民币五千元，以非法占有为目的。"
FAILURES = {s for s in Status if s != Status.JUDGED}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def llm_server():
    """Start the server through scripts/llm.sh (fetching the model if needed); always stop it."""
    env = dict(os.environ, LEXTRACE_LLM_PORT=str(_free_port()))
    try:
        started = subprocess.run(["bash", "scripts/llm.sh", "start", MODEL], cwd=ROOT, env=env,
                                 capture_output=True, text=True, timeout=1800)
        assert started.returncode == 0, f"scripts/llm.sh start {MODEL} failed:\n{started.stderr}"
        exports = dict(re.findall(r"^export (LEXTRACE_LLM_\w+)=(\S+)$", started.stdout, re.MULTILINE))
        assert exports.get("LEXTRACE_LLM_BASE_URL") and exports.get("LEXTRACE_LLM_MODEL"), started.stdout
        yield exports
    finally:
        subprocess.run(["bash", "scripts/llm.sh", "stop"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def _client(server: dict, **kwargs) -> LLMClient:
    return LLMClient(server["LEXTRACE_LLM_BASE_URL"], server["LEXTRACE_LLM_MODEL"], timeout_s=REQUEST_TIMEOUT_S,
                     max_retries=0, **kwargs)


@pytest.mark.timeout(1800)  # includes starting the server (and fetching the model the first time)
def test_a_raw_json_completion_parses_to_a_schema_valid_dict(llm_server):
    client = _client(llm_server)
    result = client.complete_json(MESSAGES, SCHEMA, name="predict_charges")
    assert isinstance(result.value, dict) and set(result.value) == {"charges", "reasoning"}
    assert result.value["charges"] and all(isinstance(c, str) and c for c in result.value["charges"])
    # llama-cpp-python 0.3.36 refuses response_format json_schema; the client falls back to json_object
    # with the schema, which llama.cpp enforces as a grammar.
    assert result.structured in ("json_schema", "json_object")
    assert result.prompt_tokens > 0 and result.completion_tokens > 0
    print(f"\n[{MODEL}] raw completion: {result.value} via {result.structured} (fallback={result.fallback}), "
          f"{result.attempts} requests, {result.prompt_tokens}+{result.completion_tokens} tokens, {result.latency_s:.1f} s")


@pytest.mark.timeout(3600)
def test_the_llm_strategy_ends_judged_with_verified_citations_or_in_an_explicit_failure(llm_server):
    graph = tiny_legal_graph()
    client = _client(llm_server, budget=Budget(max_calls=16, max_tokens=60000))
    case = CaseInput(facts=FACTS, defendants=("张某",), offence_date=dt.date(2018, 3, 1))
    started = time.perf_counter()
    bundle = adjudicate(case, "张某", strategy=LLMStrategy(client), graph=graph, retriever=InMemoryRetriever(graph),
                        params=Params(paths=("chg",)))
    seconds = time.perf_counter() - started
    judgment = bundle.judgment
    totals = client.usage.totals()
    print(f"\n[{MODEL}] status={judgment.status} charges={judgment.charges} articles={judgment.article_keys} "
          f"citations={judgment.citations} message={judgment.message!r}\n"
          f"[{MODEL}] {totals.calls} requests, {totals.prompt_tokens}+{totals.completion_tokens} tokens, {seconds:.0f} s")

    assert judgment is not None
    if judgment.status == Status.JUDGED:
        evidence = {e.n for e in judgment.evidence}
        verified = {a.key: a for a in bundle.audit.verified}
        assert judgment.citations and set(judgment.citations) <= evidence
        assert all(f"[{n}]" in judgment.reasoning for n in judgment.citations)
        assert judgment.article_keys and set(judgment.article_keys) <= set(verified)
        assert judgment.charges and set(judgment.charges) <= {c for a in verified.values() for c in a.charges}
    else:
        assert judgment.status in FAILURES and judgment.message, "a failure must say what went wrong"
    # The model was really asked, and what it cost is on record.
    assert totals.calls > 0 and totals.prompt_tokens > 0 and totals.completion_tokens > 0
    assert sum(c.llm_calls for c in bundle.costs) > 0 and sum(c.prompt_tokens for c in bundle.costs) > 0
    assert bundle.llm_records and bundle.versions["model"] == llm_server["LEXTRACE_LLM_MODEL"]
