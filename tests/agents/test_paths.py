"""The Researcher's retrieval paths as a registry: a registered path runs, Params.paths selects, and an
ablation no_<path> is the default paths without exactly that one."""

import datetime as dt

import pytest

from worker.agents.pipeline import Params, adjudicate
from worker.agents.stages.researcher import paths_to_run, research
from worker.agents.stages.researcher.paths import PATHS, Articles, Cases, RetrievalPath, default_paths, register
from worker.agents.strategies.statistical import StatisticalStrategy
from worker.agents.testing.fixtures import FixedProbabilities, tiny_legal_graph
from worker.agents.testing.memory_retriever import InMemoryRetriever
from worker.agents.types import CaseInput, Hit

THEFT = ("公诉机关指控：被告人张某于夜间翻墙进入被害人李某家中，秘密窃取现金人民币五千元及手机一部，"
         "以非法占有为目的，盗窃公私财物数额较大。案发后张某主动投案，如实供述。")
CASE = CaseInput(facts=THEFT, defendants=("张某",), offence_date=dt.date(2018, 3, 1))
FIXED = ("sem", "com", "chg", "art")


class EchoPath(RetrievalPath):
    """A path for the test: the fraud article (266, pk 6) and two fraud precedents, whatever the facts."""

    name = "echo"

    def find(self, q):
        yield Hit(path=self.name, kind="article", pk=6, score=0.5)
        yield Articles([6])
        yield Cases([(107, 0.9), (108, 0.8)])


@pytest.fixture
def echo():
    register(EchoPath)
    yield PATHS["echo"]
    del PATHS["echo"]


def _bundle(params=None, graph=None):
    graph = graph or tiny_legal_graph()
    strategy = StatisticalStrategy(charge_model=FixedProbabilities({"盗窃罪": 0.9, "诈骗罪": 0.2}, model_id="fake"))
    # the registry's default paths unless told (the statistical strategy's own full pipeline runs R_chg alone)
    return adjudicate(CASE, "张某", strategy=strategy, graph=graph, retriever=InMemoryRetriever(graph),
                      params=params or Params())


def _hits(bundle):
    return [(h.path, h.kind, h.pk, h.score, h.label) for h in bundle.research.hits]


def test_the_fixed_paths_and_the_flat_one_are_registered():
    assert tuple(PATHS)[:5] == (*FIXED, "flat")
    assert default_paths() == FIXED and Params().paths == FIXED
    assert [p.name for p in paths_to_run(Params.for_ablation("naive_rag"))] == ["flat"]
    assert paths_to_run(Params.for_ablation("no_researcher")) == []
    with pytest.raises(ValueError):
        register(type("Again", (RetrievalPath,), {"name": "sem"}))


def test_a_registered_path_runs_by_default_and_leaves_the_others_as_they_were(echo):
    without = _bundle(Params(paths=FIXED))
    assert Params().paths == (*FIXED, "echo")
    with_echo = _bundle()
    assert _hits(with_echo) == _hits(without) + [("echo", "article", 6, 0.5, ""), ("echo", "case", 107, 0.9, ""),
                                                  ("echo", "case", 108, 0.8, "")]
    assert "echo" in with_echo.research.article_sources[6]
    assert {107, 108} <= set(with_echo.research.candidate_cases)
    assert with_echo.params["paths"] == (*FIXED, "echo")
    # Params.paths selects: left out, it does not run
    assert not any(h.path == "echo" for h in _bundle(Params(paths=("chg", "art"))).research.hits)


@pytest.mark.parametrize("path", FIXED)
def test_an_ablation_removes_exactly_its_path(echo, path):
    full = _bundle()
    ablated = _bundle(Params.for_ablation(f"no_{path}"))
    assert ablated.params["paths"] == tuple(p for p in (*FIXED, "echo") if p != path)
    assert _hits(ablated) == [h for h in _hits(full) if h[0] != path]
    assert not any(path in sources for sources in ablated.research.article_sources.values())


def test_research_runs_the_selected_paths_in_the_order_they_were_registered(echo):
    graph = tiny_legal_graph()
    found = research(CASE, THEFT, {}, THEFT, [("盗窃罪", 0.9)], graph=graph, retriever=InMemoryRetriever(graph),
                     params=Params(paths=("echo", "chg")))
    order = list(dict.fromkeys(h.path for h in found.hits))
    assert order == ["chg", "echo"]


def test_a_strategy_names_the_paths_of_its_full_pipeline():
    graph = tiny_legal_graph()
    strategy = StatisticalStrategy(charge_model=FixedProbabilities({"盗窃罪": 0.9, "诈骗罪": 0.2}, model_id="fake"))
    full = adjudicate(CASE, "张某", strategy=strategy, graph=graph, retriever=InMemoryRetriever(graph))
    assert strategy.paths == ("chg",) and full.params["paths"] == ("chg",)
    assert StatisticalStrategy().paths is None, "without a charge classifier R_chg has nothing to anchor on"
    assert {h.path for h in full.research.hits} == {"chg"}
    # an ablation of a path the strategy does not run changes nothing; of the one it runs, everything
    no_sem = adjudicate(CASE, "张某", strategy=strategy, graph=graph, retriever=InMemoryRetriever(graph),
                        params=Params.for_ablation("no_sem", paths=strategy.paths))
    assert _hits(no_sem) == _hits(full)
    assert Params.for_ablation("no_chg", paths=strategy.paths).paths == ()


def test_a_label_no_article_defines_reaches_the_articles_of_the_statute_charge_it_stands_for():
    graph = tiny_legal_graph()

    def judged(label, **names):
        strategy = StatisticalStrategy(charge_model=FixedProbabilities({label: 0.9}, model_id="fake"), **names)
        return adjudicate(CASE, "张某", strategy=strategy, graph=graph, retriever=InMemoryRetriever(graph)).research

    assert graph.articles_defining("扒窃罪") == [] and graph.articles_defining("窃取罪") == []
    assert "chg" in judged("扒窃罪", aliases={"扒窃罪": "盗窃罪"}, statute_charges={"盗窃罪", "诈骗罪"}).article_sources[5]
    # without an alias, the shortest statute charge holding the label's characters in order (264 defines 盗窃罪)
    assert "chg" in judged("窃罪", statute_charges={"盗窃罪", "诈骗罪", "盗窃、抢夺枪支罪"}).article_sources[5]
    unknown = judged("扒窃罪")  # no statute charge known: the label alone, which no article defines
    assert "chg" not in unknown.article_sources.get(5, [])
