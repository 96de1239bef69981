"""Definition provisions (357 for 毒品, 367 for 淫秽物品): read from the statute text, added by the Researcher
beside a candidate whose text uses the term, decided by whether the facts show what they define, and cited only
as any article defining no charge is (when the precedents of the chosen charge cite it)."""

import datetime as dt

from worker.agents import reasons
from worker.agents.pipeline import adjudicate
from worker.agents.stages.auditor.provisions import DEFINITION_OPENING, defined_term
from worker.agents.strategies.statistical import StatisticalStrategy
from worker.agents.testing.fixtures import FixedProbabilities, tiny_legal_graph
from worker.agents.testing.memory_retriever import InMemoryRetriever
from worker.agents.types import CaseInput

DRUGS = "贩卖毒品罪"
DEFINITION_357 = ("本法所称的毒品，是指鸦片、海洛因、甲基苯丙胺（冰毒）、吗啡、大麻、可卡因以及国家规定管制的其他能够使人"
                  "形成瘾癖的麻醉药品和精神药品。")
SALE = "公诉机关指控：2017年3月5日，被告人张某在某宾馆门口以300元的价格向吸毒人员李某贩卖海洛因0.5克，被当场抓获。"


def test_the_term_of_a_definition_is_read_from_its_text():
    assert defined_term(DEFINITION_357) == "毒品"
    assert defined_term("本法所称淫秽物品，是指具体描绘性行为或者露骨宣扬色情的诲淫性的书刊。") == "淫秽物品"
    assert defined_term("本章所称战时，是指国家宣布进入战争状态。") == "战时"
    assert defined_term("本法所称以上、以下、以内，包括本数。") is None  # says how to count, defines no term of conduct
    assert defined_term("走私、贩卖、运输、制造毒品，无论数量多少，都应当追究刑事责任。") is None


def _graph(precedents_cite_the_definition=False):
    graph = tiny_legal_graph()
    graph.add_article(47, 347, charges=[DRUGS])
    graph.add_article_text(470, 47, "走私、贩卖、运输、制造毒品，无论数量多少，都应当追究刑事责任，予以刑事处罚。")
    graph.add_checklist(470, ["是否贩卖毒品", "是否明知是毒品"])
    graph.add_article(57, 357)
    graph.add_article_text(570, 57, DEFINITION_357)
    graph.add_checklist(570, ["是否属于鸦片", "是否属于海洛因", "是否属于甲基苯丙胺"])
    cited = [47, 57] if precedents_cite_the_definition else [47]
    for pk in (301, 302, 303):
        graph.add_case(pk, f"drugs-{pk}", charges=[DRUGS], article_pks=cited)
    return graph


def _judge(facts, graph):
    strategy = StatisticalStrategy(charge_model=FixedProbabilities({DRUGS: 0.9, "盗窃罪": 0.05}, model_id="fake"))
    case = CaseInput(facts=facts, defendants=("张某",), offence_date=dt.date(2017, 6, 1))
    return adjudicate(case, "张某", strategy=strategy, graph=graph, retriever=InMemoryRetriever(graph))


def test_the_definition_goes_with_the_article_using_its_term_and_applies_to_what_the_facts_show():
    bundle = _judge(SALE, _graph())
    assert "definition" in bundle.research.article_sources[57]
    definition = next(a for a in bundle.audit.articles if a.article_pk == 57)
    assert definition.passed and definition.why["code"] == reasons.ARTICLE_DEFINITION
    assert definition.why["term"] == "毒品" and "海洛因" in definition.why["quote"]
    assert definition.why["covered"] == "第三百四十七条"
    # verified, it is in the evidence chain; the drug judgments of the precedents do not cite it, so neither does this
    assert 57 in {a.article_pk for a in bundle.audit.verified}
    assert bundle.judgment.charges == [DRUGS] and bundle.judgment.article_keys == ["347"]


def test_a_definition_the_precedents_cite_is_cited_beside_the_article():
    bundle = _judge(SALE, _graph(precedents_cite_the_definition=True))
    assert bundle.judgment.charges == [DRUGS] and bundle.judgment.article_keys == ["347", "357"]


def test_the_definition_does_not_apply_when_the_facts_show_nothing_it_defines():
    bundle = _judge("公诉机关指控：2017年3月5日，被告人张某在某宾馆门口向李某贩卖毒品，被当场抓获。", _graph())
    definition = next(a for a in bundle.audit.articles if a.article_pk == 57)
    assert not definition.passed and definition.why["code"] == reasons.ARTICLE_DEFINITION
    assert not definition.why["shown"] and definition.why["covered"] == "第三百四十七条"
    assert bundle.judgment.article_keys == ["347"]


def test_no_candidate_using_the_term_no_definition():
    graph = _graph()
    strategy = StatisticalStrategy(charge_model=FixedProbabilities({"盗窃罪": 0.9}, model_id="fake"))
    case = CaseInput(facts="公诉机关指控：被告人张某在商场盗窃手机一部，价值3000元。", defendants=("张某",),
                     offence_date=dt.date(2017, 6, 1))
    bundle = adjudicate(case, "张某", strategy=strategy, graph=graph, retriever=InMemoryRetriever(graph))
    assert 57 not in bundle.research.candidate_articles


def test_the_memory_store_lists_the_definitions_in_statute_order():
    graph = _graph()
    graph.add_article(67, 367)
    graph.add_article_text(670, 67, "本法所称淫秽物品，是指具体描绘性行为或者露骨宣扬色情的诲淫性的书刊。")
    graph.add_article(51, 451)
    graph.add_article_text(510, 51, "本章所称战时，是指国家宣布进入战争状态。", valid_to=dt.date(2000, 1, 1))  # no longer in force
    found = graph.opening_with(DEFINITION_OPENING)
    assert [(node.number, text[:7]) for node, text in found] == [(357, "本法所称的毒品"), (367, "本法所称淫秽物")]
