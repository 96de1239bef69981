"""Replaying stored bundles and diffing them stage by stage (pure: in-memory graph)."""

import copy

from tests.agents.test_llm_strategy import CASE, PARAMS, ScriptedClient, good_replies
from worker.agents.testing.fixtures import tiny_legal_graph
from worker.agents.testing.memory_retriever import InMemoryRetriever
from worker.agents.pipeline import adjudicate
from worker.agents.tools.replay import RecordedReplies, bundle_diff, case_of, params_of
from worker.agents.strategies.llm import LLMStrategy
from worker.agents.strategies.statistical import StatisticalStrategy
from worker.agents.types import Status


def llm_bundle(graph):
    return adjudicate(CASE, "张某", strategy=LLMStrategy(ScriptedClient(good_replies(graph))), graph=graph,
                      retriever=InMemoryRetriever(graph), params=PARAMS).to_dict()


def replay(stored, graph):
    client = RecordedReplies(stored["llm_records"], model="scripted")
    bundle = adjudicate(case_of(stored), stored["defendant"], strategy=LLMStrategy(client), graph=graph,
                        retriever=InMemoryRetriever(graph), params=params_of(stored))
    return bundle.to_dict(), client


def test_an_llm_bundle_replays_to_the_same_judgment_without_a_model():
    graph = tiny_legal_graph()
    stored = llm_bundle(graph)
    assert stored["judgment"]["status"] == "judged"
    again, client = replay(stored, graph)
    assert again["judgment"]["status"] == "judged"
    assert bundle_diff(stored, again) == [] and client.unused() == {}
    assert params_of(stored) == PARAMS and case_of(stored) == CASE


def test_a_changed_recorded_verdict_shows_in_the_diff():
    graph = tiny_legal_graph()
    stored = llm_bundle(graph)
    edited = copy.deepcopy(stored)
    checklist = next(r for r in edited["llm_records"] if r["prompt"]["stage"] == "checklist_article")
    checklist["result"]["value"]["items"][0]["met"] = False
    again, _ = replay(edited, graph)
    rows = bundle_diff(stored, again)
    assert any(r["stage"] == "auditor" and "item" in r["what"] and r["before"] is True and r["after"] is False for r in rows)


def test_a_replay_that_needs_an_unrecorded_reply_fails_explicitly():
    graph = tiny_legal_graph()
    stored = llm_bundle(graph)
    stored["llm_records"] = [r for r in stored["llm_records"] if r["prompt"]["stage"] != "adjudicate"]
    again, _ = replay(stored, graph)
    assert again["judgment"]["status"] == Status.MODEL_UNAVAILABLE.value
    assert "no recorded reply for stage adjudicate" in again["judgment"]["message"]
    assert {"stage": "adjudicator", "what": "status", "before": "judged", "after": "model_unavailable"} in bundle_diff(llm_bundle(graph), again)


def test_a_statistical_run_is_reproduced_and_a_graph_change_is_found():
    graph = tiny_legal_graph()
    run = lambda g: adjudicate(CASE, "张某", strategy=StatisticalStrategy(), graph=g,  # noqa: E731
                               retriever=InMemoryRetriever(g), params=PARAMS).to_dict()
    first = run(graph)
    assert bundle_diff(first, run(tiny_legal_graph())) == []
    changed = copy.deepcopy(first)
    changed["judgment"]["charges"] = ["抢劫罪"]
    assert bundle_diff(first, changed) == [{"stage": "adjudicator", "what": "charges", "before": first["judgment"]["charges"],
                                            "after": ["抢劫罪"]}]
