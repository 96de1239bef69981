"""A charge is named as it stood on the offence date (worker/agents/charge_names.py), and the verification
accepts a former name of a verified article's charge."""

import datetime as dt

from worker.agents.charge_names import charges_of_name, name_on, offence_date_of


def test_a_charge_renamed_by_an_amendment_keeps_its_former_name_before_it():
    assert name_on("强制猥亵、侮辱罪", dt.date(2014, 6, 1)) == "强制猥亵、侮辱妇女罪"
    assert name_on("强制猥亵、侮辱罪", dt.date(2015, 11, 1)) == "强制猥亵、侮辱罪", "the day the Ninth Amendment took effect"
    assert name_on("强制猥亵、侮辱罪", None) == "强制猥亵、侮辱罪", "no date: the statutes' name"
    assert name_on("盗窃罪", dt.date(2001, 1, 1)) == "盗窃罪"
    assert name_on("生产、销售假药罪", dt.date(2022, 5, 1)) == "生产、销售、提供假药罪", "a later name too"


def test_where_one_charge_replaced_two_the_facts_choose_the_former_name():
    day = dt.date(2013, 3, 1)
    assert name_on("侵犯公民个人信息罪", day, "被告人通过网络非法获取公民个人信息二万条") == "非法获取公民个人信息罪"
    assert name_on("侵犯公民个人信息罪", day, "被告人将其掌握的客户信息出售给他人") == "出售、非法提供公民个人信息罪"
    assert charges_of_name("强制猥亵、侮辱妇女罪") == {"强制猥亵、侮辱妇女罪", "强制猥亵、侮辱罪"}


def test_the_offence_date_is_the_first_date_not_of_a_former_conviction():
    facts = ("被告人王某曾因盗窃罪于2009年3月被判处有期徒刑一年。2014年5月13日上午8时许，被告人王某在某宾馆内"
             "盗窃现金2800元。")
    assert offence_date_of(facts) == dt.date(2014, 5, 13)
    assert offence_date_of("二〇一三年十二月，被告人张某在某村砍伐林木。") == dt.date(2013, 12, 1)
    assert offence_date_of("被告人张某在某村砍伐林木。") is None


def test_the_verified_judgment_names_its_charges_as_on_the_offence_date():
    from dataclasses import replace

    from worker.agents.pipeline import Params, adjudicate
    from worker.agents.stages.verification import verify_judgment
    from worker.agents.strategies.statistical import StatisticalStrategy
    from worker.agents.testing.fixtures import FixedProbabilities, tiny_legal_graph
    from worker.agents.testing.memory_retriever import InMemoryRetriever
    from worker.agents.types import CaseInput, Status

    graph = tiny_legal_graph()
    facts = "公诉机关指控：被告人张某于夜间翻墙进入被害人李某家中，秘密窃取现金人民币五千元及手机一部。"
    case = CaseInput(facts=facts, defendants=("张某",))
    bundle = adjudicate(case, "张某", strategy=StatisticalStrategy(charge_model=FixedProbabilities({"盗窃罪": 0.9})),
                        graph=graph, retriever=InMemoryRetriever(graph), params=Params())
    assert bundle.judgment.status == Status.JUDGED and bundle.judgment.charges == ["盗窃罪"]
    # Suppose the verified article defined a charge renamed since (the tiny graph has none): the judgment
    # of a 2014 offence uses the former name, in the reasoning too; of 2016, the statutes' name.
    article = next(a for a in bundle.audit.articles if a.passed)
    article.charges = ["强制猥亵、侮辱罪"]
    judgment = replace(bundle.judgment, charges=["强制猥亵、侮辱罪"],
                       reasoning=bundle.judgment.reasoning.replace("盗窃罪", "强制猥亵、侮辱罪"))
    old = verify_judgment(judgment, bundle.audit, replace(case, offence_date=dt.date(2014, 2, 1)))
    assert old.status == Status.JUDGED and old.charges == ["强制猥亵、侮辱妇女罪"], old.message
    assert "强制猥亵、侮辱妇女罪" in old.reasoning
    assert verify_judgment(judgment, bundle.audit, replace(case, offence_date=dt.date(2016, 2, 1))).charges == ["强制猥亵、侮辱罪"]
    dated_by_facts = verify_judgment(judgment, bundle.audit, replace(case, facts="2014年2月1日，" + facts))
    assert dated_by_facts.charges == ["强制猥亵、侮辱妇女罪"], "no date given: the facts' first date"
    # A model that writes the former name itself is not refused: it names a verified article's charge.
    named = verify_judgment(replace(judgment, charges=["强制猥亵、侮辱妇女罪"]), bundle.audit,
                            replace(case, offence_date=dt.date(2014, 2, 1)))
    assert named.status == Status.JUDGED and named.charges == ["强制猥亵、侮辱妇女罪"]
