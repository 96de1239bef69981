"""The LLM strategy's two Researcher choices: the community among the best scored ones, and
the precedents kept from the semantic path. The scores decide whenever the model gives no
usable answer; a replay makes the same choices from the recorded replies."""

import datetime as dt

from worker.agents.testing.fixtures import tiny_legal_graph
from worker.agents.llm import LLMClient
from worker.agents.testing.stub_server import StubServer
from worker.agents.testing.memory_retriever import InMemoryRetriever
from worker.agents.pipeline import Params, adjudicate
from worker.agents.stages.researcher import research
from worker.agents.tools.replay import RecordedReplies
from worker.agents.strategies.llm import LLMStrategy
from worker.agents.types import CaseInput

FACTS = "被告人张某于2018年3月翻墙进入被害人李某家中，秘密窃取现金人民币五千元，以非法占有为目的。"
CASE = CaseInput(facts=FACTS, defendants=("张某",), offence_date=dt.date(2018, 3, 1))
QUERY = "秘密窃取 非法占有目的 个人财产 数额较大"


def _research(graph, **hooks):
    return research(CASE, FACTS, {}, QUERY, [], graph=graph, retriever=InMemoryRetriever(graph),
                    params=Params(paths=("sem", "com")), **hooks)


def _path_cases(found, path):
    return [h.pk for h in found.hits if h.path == path and h.kind == "case"]


def test_the_model_may_pick_any_shortlisted_community_and_its_members_are_searched():
    graph = tiny_legal_graph()
    by_score = _research(graph)
    seen = []

    def pick(focus, communities):
        seen.append([c.pk for c in communities])
        return communities[-1].pk  # the lowest scored of the shortlist

    chosen = _research(graph, pick_community=pick)
    assert seen and seen[0][0] == by_score.community and len(seen[0]) >= 2
    assert chosen.community == seen[0][-1] != by_score.community
    assert set(_path_cases(chosen, "com")) <= set(graph.community_members(chosen.community))
    assert any(h.kind == "community" and h.label == "chosen by the model" for h in chosen.hits)


def test_an_unusable_community_answer_leaves_the_best_scored_one():
    graph = tiny_legal_graph()
    expected = _research(graph).community
    assert _research(graph, pick_community=lambda focus, cs: None).community == expected
    assert _research(graph, pick_community=lambda focus, cs: 999).community == expected


def test_the_model_keeps_the_precedents_it_selects_and_may_keep_none():
    graph = tiny_legal_graph()
    by_score = _path_cases(_research(graph), "sem")
    offered = []

    def select(focus, cases):
        offered.append([c.pk for c in cases])
        return [cases[3].pk, 424242, cases[1].pk]  # an id it was not offered is ignored

    kept = _path_cases(_research(graph, select_cases=select), "sem")
    assert len(offered[0]) > len(by_score)  # it chooses from 2k candidates
    assert kept == [offered[0][3], offered[0][1]]
    assert _path_cases(_research(graph, select_cases=lambda focus, cases: []), "sem") == []
    assert _path_cases(_research(graph, select_cases=lambda focus, cases: None), "sem") == by_score


def test_over_http_the_choices_are_made_recorded_and_replayed_without_a_model():
    graph = tiny_legal_graph()
    params = Params(paths=("sem", "com", "chg"))
    with StubServer() as stub:
        # Features and a charge as a model would give them; the stub answers the rest from the schemas.
        stub.push({"defendant": ["成年人"], "behaviour": ["秘密窃取"], "victim": ["个人财产"], "mental": ["非法占有目的"]},
                  {"charges": ["盗窃罪"], "reasoning": "秘密窃取"})
        client = LLMClient(stub.url, "stub-model", max_retries=0)
        live = adjudicate(CASE, "张某", strategy=LLMStrategy(client, research_choices=True), graph=graph,
                          retriever=InMemoryRetriever(graph), params=params)
    stages = [r["prompt"]["stage"] for r in live.llm_records]
    assert "pick_community" in stages and "rerank_cases" in stages
    assert [c.stage for c in live.costs][3] == "researcher" and live.costs[3].llm_calls == 2
    replay_client = RecordedReplies(live.llm_records, model="stub-model")
    again = adjudicate(CASE, "张某", strategy=LLMStrategy(replay_client, research_choices=True), graph=graph,
                       retriever=InMemoryRetriever(graph), params=params)
    assert again.research.community == live.research.community
    assert [h.pk for h in again.research.hits] == [h.pk for h in live.research.hits]
    assert again.judgment.status == live.judgment.status
    assert replay_client.unused() == {}


def test_a_failing_choice_falls_back_to_the_scores_and_the_run_goes_on():
    graph = tiny_legal_graph()
    with StubServer() as stub:
        stub.set_mode("garbage")
        client = LLMClient(stub.url, "stub-model", max_retries=0, repair_attempts=0)
        strategy = LLMStrategy(client, research_choices=True)
        value = strategy.pick_community(FACTS, graph.communities())
        kept = strategy.select_cases(FACTS, [graph.case(101), graph.case(102)])
    assert value is None and kept is None
    assert [r["prompt"]["stage"] for r in strategy.records] == ["pick_community", "rerank_cases"]
    assert all("error" in r for r in strategy.records)
