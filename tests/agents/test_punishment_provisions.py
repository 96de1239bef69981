"""Punishment provisions (383 for 贪污罪, 386 for 受贿罪, 390 for 行贿罪): they give the penalty of an offence another
article defines, so they apply when that article does, and so does the provision an applying one punishes by (383
for a bribe, through 386). Their own checklists ask for the penalty's tiers, which a bribery's facts never show."""

import pytest

from worker.agents import reasons
from worker.agents.stages.auditor.provisions import punished_by, punished_charge
from worker.agents.strategies.statistical import _punishment_decisions
from worker.agents.types import ArticleAudit

# Our wording of the three provisions, in the statutes' phrasing.
EMBEZZLEMENT_PENALTY = ("对犯贪污罪的，根据情节轻重，分别依照下列规定处罚：（一）贪污数额较大或者有其他较重情节的，处三年以下"
                        "有期徒刑或者拘役，并处罚金。")
BRIBE_PENALTY = "对犯受贿罪的，根据受贿所得数额及情节，依照本法第三百八十三条的规定处罚。索贿的从重处罚。"
GIVING_PENALTY = "对犯行贿罪的，处五年以下有期徒刑或者拘役，并处罚金。"


def article(pk: int, key: str, text: str = "", charges=(), passed: bool = False) -> ArticleAudit:
    return ArticleAudit(article_pk=pk, key=key, label=f"第{key}条", charges=list(charges), version_pk=pk * 10,
                        text=text, in_force=True, passed=passed)


def test_the_offence_a_provision_punishes_and_the_articles_it_punishes_by_are_read_from_its_text():
    assert punished_charge(EMBEZZLEMENT_PENALTY) == "贪污罪" and punished_by(EMBEZZLEMENT_PENALTY) == set()
    assert punished_charge(BRIBE_PENALTY) == "受贿罪" and punished_by(BRIBE_PENALTY) == {(383, 0)}
    assert punished_charge(GIVING_PENALTY) == "行贿罪"
    # convicting under another article is not punishing by it, and an article defining an offence punishes none
    assert punished_by("下列走私行为，依照本法第一百五十三条的规定定罪处罚。") == set()
    assert punished_charge("国家工作人员利用职务上的便利，索取他人财物的，是受贿罪。") is None


@pytest.mark.parametrize("bribe_passed", [True, False])
def test_a_bribes_penalty_applies_through_386_when_bribery_does(bribe_passed):
    bribe = article(1, "385", charges=["受贿罪"], passed=bribe_passed)
    penalty = article(2, "386", BRIBE_PENALTY)
    tiers = article(3, "383", EMBEZZLEMENT_PENALTY)
    decided = _punishment_decisions([(bribe, 1), (penalty, 0), (tiers, 0)])
    assert decided[2] == ("受贿罪", ["第385条"] if bribe_passed else [], [])
    if bribe_passed:
        assert decided[3] == ("贪污罪", [], ["第386条"]), "383 is 386's penalty"
    else:
        assert decided[3] == ("贪污罪", [], []), "no embezzlement and no bribery: 383 does not apply"


def test_a_punishment_provision_applies_with_the_offence_it_punishes_and_the_reviewer_reads_why():
    from django.utils import translation

    from apps.cases.reasons import reason_render

    giving = article(1, "389", charges=["行贿罪"], passed=True)
    penalty = article(2, "390", GIVING_PENALTY)
    charge, covered, by = _punishment_decisions([(giving, 1), (penalty, 0)])[2]
    assert (charge, covered, by) == ("行贿罪", ["第389条"], [])
    with translation.override("en"):
        why = reasons.why(reasons.ARTICLE_PUNISHMENT, applies=True, charge=charge, covered="、".join(covered), by="")
        text = reason_render(why)["text"]
        assert text.startswith("Applies") and "行贿罪" in text and "第389条" in text
        no = reasons.why(reasons.ARTICLE_PUNISHMENT, applies=False, charge=charge, covered="", by="")
        assert reason_render(no)["text"].startswith("Does not apply") and "行贿罪" in reason_render(no)["text"]
        by_386 = reasons.why(reasons.ARTICLE_PUNISHMENT, applies=True, charge="贪污罪", covered="", by="第386条")
        assert "第386条" in reason_render(by_386)["text"]
    item = reasons.why(reasons.ITEM_OFFENCE_APPLIES, article="第三百八十五条", element="是否利用职务上的便利")
    with translation.override("en"):
        assert reason_render(item)["text"] == ("第三百八十五条, which defines the offence, applies: the facts show its "
                                               "element “是否利用职务上的便利”.")
    with translation.override("zh-hans"):
        assert reason_render(item)["text"] == "规定该罪的第三百八十五条适用：案件事实显示其要件“是否利用职务上的便利”。"


def test_a_punishment_provision_the_auditor_passed_carries_nothing_when_its_offence_does_not_apply():
    """386's own P may pass the Auditor; it still applies only with an article of 受贿罪, and neither does 383 through
    it (a perjury's judgment had 383 verified so)."""
    bribe = article(1, "385", charges=["受贿罪"], passed=False)
    penalty = article(2, "386", BRIBE_PENALTY, passed=True)
    tiers = article(3, "383", EMBEZZLEMENT_PENALTY)
    decided = _punishment_decisions([(bribe, 0), (penalty, 1), (tiers, 1)])
    assert decided[2] == ("受贿罪", [], []) and decided[3] == ("贪污罪", [], [])


BRIBERY = ("公诉机关指控：2015年至2016年，被告人黄某在担任某镇经济发展办公室主任期间，利用职务上的便利，为他人在工程承揽中谋取利益，"
           "先后三次收受张某所送人民币共计5万元。")


def _bribery_graph(precedents_cite_the_penalty: bool, unit_provision: bool = False):
    from worker.agents.testing.fixtures import tiny_legal_graph

    graph = tiny_legal_graph()
    graph.add_article(85, 385, charges=["受贿罪"])
    graph.add_article_text(850, 85, "国家工作人员利用职务上的便利，索取他人财物的，或者非法收受他人财物，为他人谋取利益的，是受贿罪。")
    graph.add_checklist(850, ["是否国家工作人员", "是否利用职务上的便利", "是否非法收受他人财物"])
    graph.add_article(86, 386)
    graph.add_article_text(860, 86, BRIBE_PENALTY)
    graph.add_checklist(860, ["是否构成受贿罪"])
    graph.add_article(83, 383)
    graph.add_article_text(830, 83, EMBEZZLEMENT_PENALTY)
    graph.add_checklist(830, ["是否贪污数额较大"])
    graph.add_reference(86, 83)
    if unit_provision:  # a unit-crime provision, numbered before 386 so that the Auditor decides it first
        graph.add_article(84, 384)
        graph.add_article_text(840, 84, "单位犯本节第三百八十五条规定之罪的，对单位判处罚金，并对其直接负责的主管人员和其他直接责任"
                                        "人员，依照该条的规定处罚。")
        graph.add_checklist(840, ["是否单位犯罪"])
        graph.add_reference(84, 85)
    cited = [85, 86, 83] if precedents_cite_the_penalty else [85]
    for pk in (401, 402, 403):
        graph.add_case(pk, f"bribe-{pk}", charges=["受贿罪"], article_pks=cited)
    return graph


@pytest.mark.parametrize("precedents_cite_the_penalty", [True, False])
def test_the_researcher_adds_the_penalty_of_a_candidates_offence_and_the_judgment_verifies_it(
        precedents_cite_the_penalty):
    """Whether or not the precedents cite 386 and 383, a bribery has them to decide, and they apply with 385; brought
    by the punishment path alone, they leave the other candidates' rule ranks as they were."""
    import datetime as dt

    from worker.agents.pipeline import adjudicate
    from worker.agents.strategies.statistical import StatisticalStrategy
    from worker.agents.testing.fixtures import FixedProbabilities
    from worker.agents.testing.memory_retriever import InMemoryRetriever
    from worker.agents.types import CaseInput

    graph = _bribery_graph(precedents_cite_the_penalty)
    strategy = StatisticalStrategy(charge_model=FixedProbabilities({"受贿罪": 0.9, "盗窃罪": 0.05}, model_id="fake"))
    case = CaseInput(facts=BRIBERY, defendants=("黄某",), offence_date=dt.date(2016, 6, 1))
    bundle = adjudicate(case, "黄某", strategy=strategy, graph=graph, retriever=InMemoryRetriever(graph))
    sources = bundle.research.article_sources
    assert "punishment" in sources[86] and "punishment" in sources[83]
    verified = {a.article_pk: a for a in bundle.audit.verified}
    assert {85, 86, 83} <= set(verified)
    assert verified[86].why["code"] == reasons.ARTICLE_PUNISHMENT and verified[86].why["covered"] == "第三百八十五条"
    assert verified[83].why["by"] == "第三百八十六条"
    # 386's "是否构成受贿罪" is shown by 385 applying, quoting the element of 385 the facts show: the reviewer reads the
    # evidence of every cited article, a provision decided by rule included
    offence = verified[86].items[0]
    assert offence.satisfied and offence.why["code"] == reasons.ITEM_OFFENCE_APPLIES
    assert offence.why["article"] == "第三百八十五条" and offence.span_text and offence.span_text in BRIBERY
    assert bundle.judgment.charges == ["受贿罪"]
    assert bundle.judgment.article_keys == (["385", "383", "386"] if precedents_cite_the_penalty else ["385"])


def test_a_unit_crime_provision_decided_first_does_not_stop_the_penalty_being_decided():
    """Deciding a unit-crime provision before 386 once left the Auditor without the articles it decides 386's item by (a
    name the two decisions shared): the bribe of a defendant unit failed with an error on the development split."""
    import datetime as dt

    from worker.agents.pipeline import adjudicate
    from worker.agents.strategies.statistical import StatisticalStrategy
    from worker.agents.testing.fixtures import FixedProbabilities
    from worker.agents.testing.memory_retriever import InMemoryRetriever
    from worker.agents.types import CaseInput

    graph = _bribery_graph(False, unit_provision=True)
    strategy = StatisticalStrategy(charge_model=FixedProbabilities({"受贿罪": 0.9}, model_id="fake"))
    facts = BRIBERY.replace("被告人黄某", "被告单位某镇经济发展办公室及其直接负责的主管人员被告人黄某", 1)
    case = CaseInput(facts=facts, defendants=("黄某",), offence_date=dt.date(2016, 6, 1))
    bundle = adjudicate(case, "黄某", strategy=strategy, graph=graph, retriever=InMemoryRetriever(graph))
    verified = {a.article_pk: a for a in bundle.audit.verified}
    assert {84, 85, 86, 83} <= set(verified) and verified[84].why["code"] == reasons.ARTICLE_UNIT
    assert verified[86].items[0].why["code"] == reasons.ITEM_OFFENCE_APPLIES
