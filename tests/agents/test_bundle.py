"""The bundle both ways: Bundle.to_dict writes a schema version, Bundle.from_dict reads every schema
so far back into the same typed objects (old stored bundles, without the version, still load)."""

import datetime as dt

import pytest

from worker.agents.agentic import AgenticParams, adjudicate_agentic
from worker.agents.testing.fixtures import FixedProbabilities, tiny_legal_graph
from worker.agents.testing.memory_retriever import InMemoryRetriever
from worker.agents.pipeline import Params, adjudicate
from worker.agents.strategies.statistical import StatisticalStrategy
from worker.agents.types import BUNDLE_SCHEMA, Bundle, BundleSchemaError, CaseInput, Status

THEFT = ("公诉机关指控：被告人张某于夜间翻墙进入被害人李某家中，秘密窃取现金人民币五千元及手机一部，"
         "以非法占有为目的，盗窃公私财物数额较大。案发后张某主动投案，如实供述。")
CASE = CaseInput(facts=THEFT, defendants=("张某",), offence_date=dt.date(2018, 3, 1), ref="TINY-9", merged=("X-1",))


def _strategy():
    return StatisticalStrategy(charge_model=FixedProbabilities({"盗窃罪": 0.92, "诈骗罪": 0.1}, model_id="fake/1"))


@pytest.fixture(params=["fixed", "agentic"])
def stored(request):
    graph = tiny_legal_graph()
    if request.param == "agentic":
        bundle = adjudicate_agentic(CASE, "张某", strategy=_strategy(), graph=graph, retriever=InMemoryRetriever(graph),
                                    params=Params(), agentic=AgenticParams())
    else:
        bundle = adjudicate(CASE, "张某", strategy=_strategy(), graph=graph, retriever=InMemoryRetriever(graph))
    return bundle.to_dict()


def test_a_bundle_reads_back_to_the_same_typed_objects(stored):
    assert stored["schema"] == BUNDLE_SCHEMA
    bundle = Bundle.from_dict(stored)
    assert bundle.judgment.status == Status.JUDGED and bundle.case == CASE
    assert bundle.research.hits and bundle.audit.articles and bundle.judgment.evidence
    assert isinstance(next(iter(bundle.research.article_sources)), int)
    assert bundle.to_dict() == stored, "to_dict ∘ from_dict is the identity on what to_dict wrote"


def test_a_bundle_stored_before_the_schema_version_still_loads(stored):
    old = {k: v for k, v in stored.items() if k != "schema"}  # the shape stored until now (schema 1)
    assert Bundle.from_dict(old).to_dict() == stored


def test_a_minimal_old_failure_bundle_loads():
    old = {"case": {"facts": "某事实", "defendants": ["甲"], "offence_date": None}, "defendant": "甲",
           "strategy": "statistical", "params": {"k": 5}, "versions": {"pipeline": "lextrace-pipeline/2"},
           "research": None, "audit": None,
           "judgment": {"status": "no_evidence", "message": "retrieval found no candidate article"},
           "costs": [{"stage": "focus", "seconds": 0.1}], "llm_records": []}
    bundle = Bundle.from_dict(old)
    assert bundle.judgment.status == Status.NO_EVIDENCE and bundle.research is None and bundle.case.facts == "某事实"


def test_a_bundle_of_a_newer_schema_is_refused():
    with pytest.raises(BundleSchemaError, match="newer"):
        Bundle.from_dict({"schema": BUNDLE_SCHEMA + 1})


def test_a_schema_1_bundle_with_the_defendants_as_a_repr_loads_them_as_names(stored):
    """Some bundles of schema 1 kept the defendants as the Python repr of the list (what
    scripts/decision_replay.py read by hand); the typed case holds the names."""
    old = {k: v for k, v in stored.items() if k != "schema"}
    old["case"] = {**old["case"], "defendants": "['张某', '李某']"}
    assert Bundle.from_dict(old).case.defendants == ("张某", "李某")
    old["case"]["defendants"] = "张某"
    assert Bundle.from_dict(old).case.defendants == ("张某",)


def test_of_reads_a_stored_bundle_and_passes_a_typed_one(stored):
    bundle = Bundle.of(stored)
    assert isinstance(bundle, Bundle) and Bundle.of(bundle) is bundle and bundle.to_dict() == stored
