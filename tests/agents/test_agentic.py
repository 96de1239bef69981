"""The agentic retrieval mode (worker.agents.agentic): the planner loop, its two planners, the cap,
refusals, and its evidence going through the same Auditor and Adjudicator."""

import datetime as dt
import json

import pytest

from worker.agents.agentic import (
    AgenticParams,
    LLMPlanner,
    StatisticalPlanner,
    adjudicate_agentic,
    adjudicate_case_agentic,
    agentic_summary,
)
from worker.agents.testing.fixtures import FixedProbabilities, tiny_legal_graph
from worker.agents.llm import Budget, BudgetExceeded, LLMClient, Usage
from worker.agents.llm.client import LLMResult
from worker.agents.testing.stub_server import StubServer
from worker.agents.testing.memory_retriever import InMemoryRetriever
from worker.agents.pipeline import adjudicate
from worker.agents.prompts.planner import PLANNER_PROMPT_VERSION, planner_messages, planner_prompt_hash
from worker.agents.strategies.statistical import StatisticalStrategy
from worker.agents.types import CaseInput, Status

FACTS = "被告人张某于2018年3月翻墙进入被害人李某家中，秘密窃取现金人民币五千元，以非法占有为目的。"
CASE = CaseInput(facts=FACTS, defendants=("张某",), offence_date=dt.date(2018, 3, 1))


def FakeChargeModel(charges):  # noqa: N802 (a stand-in class)
    return FixedProbabilities(dict(charges), model_id="fake-charges")


class ScriptedClient:
    """In-process stand-in for LLMClient that answers from a script (an Exception is raised)."""

    model = "scripted"

    def __init__(self, replies):
        self.replies = list(replies)
        self.usage = Usage()
        self.seen = []

    def sampling_params(self):
        return {"temperature": 0.0}

    def complete_json(self, messages, schema, *, name, stage=None):
        self.seen.append(messages)
        value = self.replies.pop(0)
        if isinstance(value, Exception):
            raise value
        self.usage.add(stage or name, calls=1, prompt_tokens=10, completion_tokens=5)
        return LLMResult(value=value, raw_text=json.dumps(value), prompt_tokens=10, completion_tokens=5, latency_s=0.0,
                         attempts=1, cached=False, model=self.model, request_hash="x", stage=stage, structured="json_schema",
                         fallback=False, repairs=0, finish_reason="stop")


def run(planner=None, *, strategy=None, agentic=None, case=CASE):
    graph = tiny_legal_graph()
    return adjudicate_agentic(case, "张某", strategy=strategy or StatisticalStrategy(), graph=graph,
                              retriever=InMemoryRetriever(graph), planner=planner, agentic=agentic or AgenticParams())


# --- statistical planner --------------------------------------------------------------------------


def test_statistical_planner_finds_the_evidence_and_the_same_auditor_decides():
    bundle = run()
    steps = bundle.research.steps
    # the facts name no charge and the lexical statute search finds nothing: the precedents give the
    # candidate charge; 264's checklist has items the facts do not show, so the interpretations are asked
    assert [s.action for s in steps] == ["search_statutes", "search_precedents", "search_interpretations", "stop"]
    assert [s.status for s in steps] == ["ok", "ok", "ok", "stop"]
    # every step records the state before it, the query, and the results with scores
    assert steps[0].state["candidate_charges"] == [] and steps[2].state["candidate_charges"] == ["盗窃罪"]
    assert steps[2].query.startswith("盗窃罪") and steps[2].results[0]["pk"] == 1  # 入户盗窃 interpretation
    assert steps[1].results and all({"kind", "pk", "label", "score"} <= set(r) for r in steps[1].results)
    assert steps[1].new == len(steps[1].results)
    # the Auditor audited the planner's articles; the judgment is verified as in the fixed mode
    assert "264" in [a.key for a in bundle.audit.articles] and [a.key for a in bundle.audit.verified] == ["264"]
    assert bundle.judgment.status == Status.JUDGED and bundle.judgment.charges == ["盗窃罪"]
    assert bundle.params["mode"] == "agentic" and bundle.versions["planner"] == "statistical/1"
    assert agentic_summary(bundle) == {"steps": 4, "searches": 3, "planner_calls": 0, "capped": False}


def test_statistical_planner_asks_for_the_missing_article_of_a_prejudged_charge_then_interpretations():
    strategy = StatisticalStrategy(charge_model=FakeChargeModel([("诈骗罪", 0.9)]))
    case = CaseInput(facts="被告人张某虚构投资项目，骗取被害人李某人民币五万元。", defendants=("张某",),
                     offence_date=dt.date(2018, 3, 1))
    bundle = run(strategy=strategy, case=case)
    actions = [(s.action, s.status) for s in bundle.research.steps]
    assert actions[0] == ("search_statutes", "ok")
    # the charge's article is found (named in the query → the graph's articles defining it)
    assert 6 in bundle.research.candidate_articles
    assert ("search_precedents", "ok") in actions and actions[-1] == ("stop", "stop")
    interp = [s for s in bundle.research.steps if s.action == "search_interpretations"]
    # 266's checklist has items the lexical check leaves open: the interpretations are asked once
    assert len(interp) == 1 and interp[0].query.startswith("诈骗罪")
    assert any(r["kind"] == "interpretation" and r["pk"] == 2 for r in interp[0].results)


def test_precedents_are_ranked_for_sentencing_with_authority_and_psi():
    bundle = run()
    ranked = bundle.research.sentencing["ranked"]
    assert [r["pk"] for r in ranked] == bundle.research.candidate_cases
    by_pk = {r["pk"]: r for r in ranked}
    assert by_pk[103]["authority"] == 1.05 and by_pk[101]["authority"] == 1.0
    assert by_pk[101]["psi"] == 8 * 30 and by_pk[103]["psi"] == 40 * 30
    scores = [r["score"] for r in ranked]
    assert scores == sorted(scores, reverse=True)
    assert bundle.research.sentencing["reference"]["precedents"] == [r["pk"] for r in ranked][:3]


# --- LLM planner (scripted) ----------------------------------------------------------------------------


def act(action, query="", reason="r"):
    return {"action": action, "query": query, "reason": reason}


def test_scripted_llm_planner_stops_when_it_says_so():
    client = ScriptedClient([act("search_statutes", "盗窃罪 入户"), act("search_interpretations", "入户盗窃 认定"),
                             act("search_precedents", "入户 秘密窃取 盗窃罪"), act("stop")])
    bundle = run(LLMPlanner(client))
    steps = bundle.research.steps
    assert [(s.action, s.status) for s in steps] == [("search_statutes", "ok"), ("search_interpretations", "ok"),
                                                     ("search_precedents", "ok"), ("stop", "stop")]
    assert all(s.planner_calls == 1 for s in steps)
    assert steps[1].results[0]["kind"] == "interpretation" and steps[1].results[0]["pk"] == 1
    assert bundle.judgment.status == Status.JUDGED
    # the planner saw its earlier actions and their observations (multi-turn conversation)
    last = client.seen[-1]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert "OBSERVATION" in last[3]["content"] and "第二百六十四条" in last[3]["content"]
    assert bundle.versions["planner_prompts"] == PLANNER_PROMPT_VERSION


def test_a_repeated_query_is_suppressed_and_not_run_again():
    client = ScriptedClient([act("search_statutes", "盗窃罪 入户"), act("search_statutes", " 盗窃罪入户 "),
                             act("search_precedents", "盗窃罪入户"), act("stop")])
    bundle = run(LLMPlanner(client))
    steps = bundle.research.steps
    assert [s.status for s in steps] == ["ok", "repeated", "ok", "stop"]
    assert steps[1].results == [] and "already" in steps[1].refused
    assert len([h for h in bundle.research.hits if h.path == "plan-statutes"]) == len(steps[0].results)


def test_unknown_action_and_empty_query_are_rejected():
    client = ScriptedClient([act("search_web", "盗窃"), act("search_statutes", "  "), act("search_statutes", "盗窃罪"),
                             act("stop")])
    bundle = run(LLMPlanner(client))
    steps = bundle.research.steps
    assert [s.status for s in steps] == ["rejected", "rejected", "ok", "stop"]
    assert "unknown action 'search_web'" in steps[0].refused and steps[1].refused == "empty query"
    assert steps[0].results == [] and [a.key for a in bundle.audit.articles] == ["264"]


def test_a_planner_that_never_stops_is_capped_in_steps():
    queries = [act("search_statutes", f"盗窃罪 {i}") for i in range(20)]
    bundle = run(LLMPlanner(ScriptedClient(queries)), agentic=AgenticParams(max_steps=4, max_planner_calls=50))
    steps = bundle.research.steps
    assert len(steps) == 5 and steps[-1].status == "cap_steps" and all(s.status == "ok" for s in steps[:4])
    assert agentic_summary(bundle)["capped"] is True


def test_a_budget_error_ends_the_loop_with_the_evidence_so_far():
    client = ScriptedClient([act("search_statutes", "盗窃罪"), BudgetExceeded("calls 2 > 1")])
    bundle = run(LLMPlanner(client))
    assert [s.status for s in bundle.research.steps] == ["ok", "budget"]
    assert bundle.audit is not None and bundle.audit.articles  # the Auditor still decides what was found


def test_a_never_stopping_planner_over_http_is_capped_in_calls():
    """The real client against the OpenAI-compatible stub: schema-valid actions that never stop."""
    with StubServer() as stub:
        stub.set_mode("canned")
        stub.push(*[act("search_precedents", f"入户 秘密窃取 {i}") for i in range(10)])
        client = LLMClient(stub.url, "stub-model", budget=Budget(max_calls=20))
        bundle = run(LLMPlanner(client), agentic=AgenticParams(max_steps=10, max_planner_calls=3))
        assert stub.stats()["calls"] == 3
    steps = bundle.research.steps
    assert [s.status for s in steps] == ["ok", "ok", "ok", "cap_calls"]
    assert client.usage.snapshot()["plan"]["calls"] == 3


def test_an_off_schema_reply_over_http_is_a_rejected_step():
    with StubServer() as stub:
        stub.set_mode("canned")
        # an unknown action twice (the reply and its one repair), then a valid stop
        stub.push(act("search_web", "x"), act("search_web", "x"), act("stop"))
        client = LLMClient(stub.url, "stub-model")
        bundle = run(LLMPlanner(client))
    steps = bundle.research.steps
    assert [s.status for s in steps] == ["rejected", "stop"]
    assert "not a valid action" in steps[0].refused
    assert bundle.judgment.status == Status.NO_EVIDENCE  # nothing was retrieved: an explicit state, not a verdict


def test_fixed_mode_is_unchanged_and_has_no_steps():
    graph = tiny_legal_graph()
    bundle = adjudicate(CASE, "张某", strategy=StatisticalStrategy(), graph=graph, retriever=InMemoryRetriever(graph))
    assert bundle.research.steps == [] and bundle.research.sentencing == {} and "mode" not in bundle.params


def test_one_fresh_planner_per_defendant():
    graph = tiny_legal_graph()
    case = CaseInput(facts=FACTS + "被告人王某望风。", defendants=("张某", "王某"), offence_date=dt.date(2018, 3, 1))
    made = []

    def factory():
        made.append(StatisticalPlanner())
        return made[-1]

    bundles = adjudicate_case_agentic(case, strategy=StatisticalStrategy(), graph=graph, retriever=InMemoryRetriever(graph),
                                      planner_factory=factory)
    assert len(bundles) == 2 and len(made) == 2 and all(b.research.steps for b in bundles)


# --- planner prompt ---------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_planner_prompt_is_versioned_and_renders_history(lang):
    history = [{"n": 1, "action": "search_statutes", "query": "盗窃", "reason": "", "status": "ok",
                "results": [{"kind": "article", "pk": 5, "label": "第二百六十四条", "score": 0.9}], "refused": ""},
               {"n": 2, "action": "search_statutes", "query": "盗窃", "reason": "", "status": "repeated",
                "results": [], "refused": "already made"}]
    messages = planner_messages(lang, facts=FACTS, defendant="张某", prejudged=[("盗窃罪", 0.8)], history=history)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "search_interpretations" in messages[1]["content"] and "盗窃罪" in messages[1]["content"]
    assert "already made" in messages[5]["content"]
    assert len(planner_prompt_hash(lang)) == 64
    assert planner_prompt_hash("zh") != planner_prompt_hash("en")


def test_the_agentic_core_imports_no_django_celery_or_torch():
    import subprocess
    import sys

    code = ("import sys, worker.agents.agentic, worker.agents.models.priors, worker.agents.prompts.planner; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('django', 'celery', 'torch', 'apps')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_llm_planners_replies_are_recorded_and_replay_the_same_steps():
    from worker.agents.tools.replay import RecordedReplies

    records = []
    client = ScriptedClient([act("search_statutes", "盗窃罪 入户"), act("search_precedents", "入户 盗窃罪"), act("stop")])
    first = run(LLMPlanner(client, records=records))
    assert [r["prompt"]["stage"] for r in records] == ["plan", "plan", "plan"]
    replayed = run(LLMPlanner(RecordedReplies(records), records=[]))
    steps = lambda b: [(s.action, s.query, s.status, [r["pk"] for r in s.results]) for s in b.research.steps]
    assert steps(replayed) == steps(first)
