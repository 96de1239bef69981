"""Planner trajectories for SFT: the planner's own conversation format, evidence masked, refusals dropped."""

import datetime as dt
import json

from tests.agents.test_agentic import ScriptedClient, act
from training.trajectories import main, trajectory_examples
from worker.agents.agentic import AgenticParams, LLMPlanner, adjudicate_agentic
from worker.agents.testing.fixtures import tiny_legal_graph
from worker.agents.testing.memory_retriever import InMemoryRetriever
from worker.agents.prompts.planner import planner_messages
from worker.agents.strategies.statistical import StatisticalStrategy
from worker.agents.tools.trajectories import trajectory_example
from worker.agents.types import CaseInput

FACTS = "被告人张某于2018年3月翻墙进入被害人李某家中，秘密窃取现金人民币五千元，以非法占有为目的。"
CASE = CaseInput(facts=FACTS, defendants=("张某",), offence_date=dt.date(2018, 3, 1), ref="run:1")


def bundle_of(replies, agentic=None):
    graph = tiny_legal_graph()
    return adjudicate_agentic(CASE, "张某", strategy=StatisticalStrategy(), graph=graph, retriever=InMemoryRetriever(graph),
                              planner=LLMPlanner(ScriptedClient(replies)), agentic=agentic or AgenticParams()).to_dict()


def test_a_trajectory_is_the_planner_conversation_with_the_evidence_masked():
    bundle = bundle_of([act("search_statutes", "盗窃罪 入户"), act("search_web", "x"), act("search_statutes", "盗窃罪入户"),
                        act("search_precedents", "入户 秘密窃取 盗窃罪"), act("stop", "", "够了")])
    example = trajectory_example(bundle)
    messages = example["messages"]
    roles = [(m["role"], m["weight"]) for m in messages]
    # the refused (unknown action) and repeated steps are not training targets
    assert roles == [("system", 0), ("user", 0), ("assistant", 1), ("user", 0), ("assistant", 1), ("user", 0), ("assistant", 1)]
    actions = [json.loads(m["content"])["action"] for m in messages if m["role"] == "assistant"]
    assert actions == ["search_statutes", "search_precedents", "stop"]
    assert "OBSERVATION" in messages[3]["content"] and "第二百六十四条" in messages[3]["content"]
    # the same prefix the planner saw at inference
    assert messages[:2] == [{**m, "weight": 0} for m in planner_messages("zh", facts=bundle["research"]["focus"],
                                                                       defendant="张某", prejudged=[])]
    assert example["synthetic_stop"] is False and example["reference"][-1]["action"] == "stop"
    assert example["judgment"]["charges"] == bundle["judgment"]["charges"]


def test_a_capped_trajectory_gets_a_stop_and_a_fixed_mode_bundle_none():
    capped = bundle_of([act("search_statutes", f"盗窃罪 {i}") for i in range(5)], AgenticParams(max_steps=2))
    example = trajectory_example(capped)
    assert example["synthetic_stop"] is True
    assert [json.loads(m["content"])["action"] for m in example["messages"] if m["role"] == "assistant"] == \
        ["search_statutes", "search_statutes", "stop"]
    fixed = dict(capped, research={**capped["research"], "steps": []})
    assert trajectory_example(fixed) is None


def test_contaminated_cases_are_dropped_and_the_cli_writes_jsonl(tmp_path):
    bundle = bundle_of([act("search_statutes", "盗窃罪"), act("stop")])
    assert len(list(trajectory_examples([bundle]))) == 1
    assert list(trajectory_examples([bundle], exclude_facts=[FACTS])) == []
    bundles, out, excluded = tmp_path / "b.jsonl", tmp_path / "t.jsonl", tmp_path / "eval.jsonl"
    bundles.write_text(json.dumps(bundle, ensure_ascii=False) + "\n", encoding="utf-8")
    excluded.write_text(json.dumps({"fact": "完全无关的另一个案件事实，与本案没有任何相同的二十个字符的片段。"}, ensure_ascii=False) + "\n",
                        encoding="utf-8")
    assert main(["--bundles", str(bundles), "--exclude", str(excluded), "--out", str(out)]) == 0
    [line] = out.read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["stage"] == "plan"
