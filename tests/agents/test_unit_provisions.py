"""Unit-crime provisions (150 beside 140, 231 beside 228 …): read from the statute text, added by the
Researcher when the facts show a unit crime, decided by that rule, cited beside the article they cover."""

import datetime as dt

import pytest

from worker.agents import reasons
from worker.agents.numerals import find_article_ranges
from worker.agents.pipeline import adjudicate
from worker.agents.stages.auditor.provisions import key_of, unit_crime_shown, unit_scope
from worker.agents.strategies.statistical import StatisticalStrategy
from worker.agents.testing.fixtures import FixedProbabilities, tiny_legal_graph
from worker.agents.testing.memory_retriever import InMemoryRetriever
from worker.agents.types import CaseInput

UNIT_150 = ("单位犯本节第一百四十条至第一百四十八条规定之罪的，对单位判处罚金，并对其直接负责的主管人员和其他直接"
            "责任人员，依照各该条的规定处罚。")
FAKE_GOODS = "生产、销售伪劣产品罪"
BY_A_UNIT = ("公诉机关指控：被告单位某某饲料公司在2016年间以次充好，将不合格饲料冒充合格产品销售，销售金额六十万元。"
             "被告人张某系该公司法定代表人，是直接负责的主管人员。")
BY_A_PERSON = "公诉机关指控：被告人张某在2016年间以次充好，将不合格饲料冒充合格产品销售，销售金额六十万元。"


def test_the_scope_of_a_unit_crime_provision_is_read_from_its_text():
    scope = unit_scope(UNIT_150)
    assert scope.covers((140, 0)) and scope.covers((144, 0)) and scope.covers((148, 0))
    assert not scope.covers((149, 0)) and not scope.covers((139, 0))
    listed = unit_scope("单位犯本节第二百零一条、第二百零三条、第二百零四条规定之罪的，对单位判处罚金。")
    assert listed.covers((203, 0)) and not listed.covers((202, 0))
    with_sub = unit_scope("单位犯本节第二百一十三条至第二百一十九条之一规定之罪的，对单位判处罚金。")
    assert with_sub.covers((219, 1)) and with_sub.covers((215, 0)) and not with_sub.covers((219, 2))
    assert unit_scope("盗窃公私财物，数额较大的，处三年以下有期徒刑。") is None
    assert unit_scope("单位犯前款罪的，对单位判处罚金。") is None  # names no article: part of its own article
    assert find_article_ranges("第三条至第一条") == [] and key_of("219-1") == (219, 1) and key_of("264") == (264, 0)


def test_the_facts_show_a_unit_crime_by_the_unit_or_the_persons_it_answers_for():
    assert BY_A_UNIT[slice(*unit_crime_shown(BY_A_UNIT))] == "被告单位"
    assert unit_crime_shown("张某系该公司直接负责的主管人员。") is not None
    assert unit_crime_shown(BY_A_PERSON) is None
    assert unit_crime_shown("被告人张某在公司上班期间盗窃同事手机。") is None


def _graph():
    graph = tiny_legal_graph()
    graph.add_article(40, 140, charges=[FAKE_GOODS])
    graph.add_article_text(400, 40, "生产者、销售者在产品中掺杂、掺假，以假充真，以次充好或者以不合格产品冒充合格产品，"
                                    "销售金额五万元以上不满二十万元的，处二年以下有期徒刑或者拘役。")
    graph.add_checklist(400, ["是否以次充好", "是否以不合格产品冒充合格产品"])
    graph.add_article(41, 150)
    graph.add_article_text(410, 41, UNIT_150)
    graph.add_checklist(410, ["是否为单位犯罪", "是否属于第一百四十条至第一百四十八条规定之罪", "是否对单位判处罚金"])
    graph.add_reference(41, 40)
    for pk in (201, 202, 203):
        graph.add_case(pk, f"fake-{pk}", charges=[FAKE_GOODS], article_pks=[40])
    return graph


def _judge(facts):
    graph = _graph()
    strategy = StatisticalStrategy(charge_model=FixedProbabilities({FAKE_GOODS: 0.9, "盗窃罪": 0.05}, model_id="fake"))
    case = CaseInput(facts=facts, defendants=("张某",), offence_date=dt.date(2016, 6, 1))
    return adjudicate(case, "张某", strategy=strategy, graph=graph, retriever=InMemoryRetriever(graph))


def test_a_unit_crime_cites_the_unit_provision_beside_the_article_it_covers():
    bundle = _judge(BY_A_UNIT)
    assert bundle.research.article_sources[41] == ["unit"]
    unit = next(a for a in bundle.audit.articles if a.article_pk == 41)
    # the defendant's own sentences are the focus: they name him the person directly responsible for the unit
    assert unit.passed and unit.why["code"] == reasons.ARTICLE_UNIT and "直接负责的主管人员" in unit.why["quote"]
    assert unit.items[0].satisfied and "直接负责的主管人员" in unit.items[0].span_text
    assert bundle.judgment.charges == [FAKE_GOODS] and bundle.judgment.article_keys == ["140", "150"]


def test_without_a_unit_the_provision_is_no_candidate_and_not_cited():
    bundle = _judge(BY_A_PERSON)
    assert 41 not in bundle.research.candidate_articles
    assert bundle.judgment.charges == [FAKE_GOODS] and bundle.judgment.article_keys == ["140"]


@pytest.mark.parametrize("shown, covered, applies", [(True, True, True), (False, True, False), (True, False, False)])
def test_a_unit_provision_applies_only_with_the_unit_shown_and_an_article_of_its_scope(shown, covered, applies):
    from worker.agents.strategies.statistical import _unit_decisions
    from worker.agents.types import ArticleAudit, ItemVerdict

    unit = ArticleAudit(article_pk=41, key="150", label="第一百五十条", charges=[], version_pk=410, text=UNIT_150,
                        in_force=True, items=[ItemVerdict(item_pk=1, order=1, question="是否为单位犯罪", satisfied=shown,
                                                          score=1.0, reasoning="")])
    fake = ArticleAudit(article_pk=40, key="140" if covered else "266", label="第一百四十条", charges=[FAKE_GOODS],
                        version_pk=400, text="", in_force=True, passed=True)
    shown_item, articles = _unit_decisions([(unit, 1), (fake, 1)])[41]
    assert bool(shown_item and articles) is applies
