"""IRAC-guided keyword expansion of the sparse article query, over HTTP against the stub LLM server."""

import json

import pytest

from worker.agents.testing.fixtures import tiny_legal_graph
from worker.agents.llm import LLMClient
from worker.agents.testing.stub_server import StubServer
from worker.agents.testing.memory_retriever import InMemoryRetriever
from worker.agents.pipeline import Params
from worker.agents.stages.researcher import research
from worker.agents.prompts.expansion import EXPANSION_STAGE, SCHEMA, clean_keywords, expansion_messages
from worker.agents.strategies.llm import LLMStrategy

FACTS = "被告人张某于2018年3月翻墙进入被害人李某家中，秘密窃取现金人民币五千元，以非法占有为目的。"


@pytest.fixture
def stub():
    with StubServer() as server:
        yield server


def strategy(stub, **kw):
    return LLMStrategy(LLMClient(stub.url, "stub-model", sleep=lambda s: None, max_retries=0), keyword_expansion=True, **kw)


def test_the_prompt_carries_the_facts_as_data_and_asks_for_irac_keywords():
    system, user = expansion_messages("zh", facts=FACTS, defendant="张某")
    assert system["role"] == "system" and "<<<FACTS\n" + FACTS in user["content"] and "IRAC" in user["content"]
    assert SCHEMA["required"] == ["issue", "rule", "keywords"]
    assert clean_keywords(["秘密窃取", " 入 户 ", "秘密窃取", "翻墙进入被害人李某家中"], FACTS) == ["秘密窃取", "入户"]


def test_the_strategy_asks_the_server_and_keeps_clean_keywords(stub):
    stub.push({"issue": "秘密取得他人财物是否构成盗窃", "rule": "以非法占有为目的秘密窃取公私财物数额较大",
               "keywords": ["秘密窃取", "数额较大", "入户", "秘密窃取"]})
    s = strategy(stub)
    assert s.expand_keywords(FACTS) == ["秘密窃取", "数额较大", "入户"]
    [request] = stub.stats()["requests"]
    assert request["response_format"]["json_schema"]["name"] == EXPANSION_STAGE
    assert FACTS in request["messages"][-1]["content"]
    assert s.records[-1]["prompt"]["stage"] == EXPANSION_STAGE and "result" in s.records[-1]


def test_a_failed_expansion_leaves_the_query_as_it_was(stub):
    stub.set_mode("garbage")
    s = strategy(stub)
    assert s.expand_keywords(FACTS) == [] and "error" in s.records[-1]


class RecordingRetriever(InMemoryRetriever):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.sparse_queries = []

    def articles_sparse(self, query, k):
        self.sparse_queries.append(query)
        return super().articles_sparse(query, k)


def test_the_researcher_appends_the_keywords_to_the_sparse_query_and_shows_them(stub):
    stub.push({"issue": "", "rule": "", "keywords": ["秘密窃取", "数额较大"]})
    graph = tiny_legal_graph()
    retriever = RecordingRetriever(graph)
    found = research(None, FACTS, {}, FACTS, [], graph=graph, retriever=retriever, params=Params(paths=("art",)),
                     expand=strategy(stub).expand_keywords)
    assert retriever.sparse_queries == [FACTS + " 秘密窃取 数额较大"]
    assert [(h.kind, h.pk) for h in found.hits if h.kind == "keyword"] == [("keyword", "秘密窃取"), ("keyword", "数额较大")]
    # Off by default: the strategy offers no expansion, and nothing is asked.
    plain = LLMStrategy(LLMClient(stub.url, "stub-model", max_retries=0))
    assert plain.expand_keywords is None and json.dumps(stub.stats()["calls"]) == "1"
