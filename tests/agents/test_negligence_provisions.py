"""Negligence provisions ("过失犯前款罪的…": 115's second paragraph, keyed 115-1, punishes 失火罪 beside 放火罪): one act is
done with intent or by carelessness, not both. When the facts show the carelessness, the judgment cites the negligence
provision and not the articles of the intentional offence; a party's argument that it was careless shows nothing."""

import datetime as dt

import pytest

from worker.agents.stages.auditor.provisions import carelessness_shown, negligent_form
from worker.agents.strategies.statistical import _careless_instead
from worker.agents.types import ArticleAudit, ItemVerdict

# Our wording of the three articles, in the statutes' phrasing.
ARSON = "放火、决水、爆炸以及投放毒害性物质或者以其他危险方法危害公共安全，尚未造成严重后果的，处三年以上十年以下有期徒刑。"
ARSON_HARM = "放火、决水、爆炸以及投放毒害性物质或者以其他危险方法致人重伤、死亡或者使公私财产遭受重大损失的，处十年以上有期徒刑。"
CARELESS = "过失犯前款罪的，处三年以上七年以下有期徒刑；情节较轻的，处三年以下有期徒刑或者拘役。"
INTENDED = ["放火罪", "爆炸罪"]


def test_a_negligence_provision_is_read_from_its_opening():
    assert negligent_form(CARELESS) and negligent_form("过失犯前款罪，造成严重后果的，处三年以下有期徒刑或者拘役。")
    assert not negligent_form(ARSON_HARM + CARELESS), "the article of the intentional offence names both paragraphs"
    assert not negligent_form("过失致人死亡的，处三年以上七年以下有期徒刑。"), "an offence of its own, not a careless form"


def item(question: str, satisfied: bool, sentence: str) -> ItemVerdict:
    return ItemVerdict(item_pk=1, order=1, question=question, satisfied=satisfied, score=1.0, reasoning="",
                       span_text=sentence)


def article(pk: int, key: str, text: str, charges, items=(), passed=True) -> ArticleAudit:
    return ArticleAudit(article_pk=pk, key=key, label=f"第{key}条", charges=list(charges), version_pk=pk * 10,
                        text=text, in_force=True, items=list(items), passed=passed)


SHOWN = "被告人刘某祭祖时因烧纸钱不慎将山林引燃。"
PLEADED = "被告人柯某对指控的事实没有异议，但认为其是酒后行为失控，属过失放火。"


@pytest.mark.parametrize("sentence, displaced", [(SHOWN, True), (PLEADED, False)])
def test_carelessness_the_facts_show_displaces_the_intentional_articles_a_plea_does_not(sentence, displaced):
    basic, harm = article(14, "114", ARSON, INTENDED), article(15, "115", ARSON_HARM + CARELESS, INTENDED)
    careless = article(16, "115-1", CARELESS, ["失火罪"], [item("是否过失犯罪", True, sentence)])
    other = article(33, "233", "过失致人死亡的，处三年以上七年以下有期徒刑。", ["过失致人死亡罪"])
    instead = _careless_instead([basic, harm, careless, other], [basic, harm, careless, other])
    assert instead == ({14: careless, 15: careless} if displaced else {})
    assert carelessness_shown("是否过失犯罪", True, sentence) is displaced
    assert not carelessness_shown("是否过失犯罪", False, SHOWN), "an item not shown shows nothing"


def test_the_first_paragraph_need_not_have_passed_and_carelessness_not_shown_changes_nothing():
    basic = article(14, "114", ARSON, INTENDED)
    harm = article(15, "115", ARSON_HARM + CARELESS, INTENDED, passed=False)
    careless = article(16, "115-1", CARELESS, ["失火罪"], [item("是否过失犯罪", True, SHOWN)])
    assert _careless_instead([basic, harm, careless], [basic, careless]) == {14: careless}
    unshown = article(16, "115-1", CARELESS, ["失火罪"], [item("是否过失犯罪", False, "")])
    assert _careless_instead([basic, harm, unshown], [basic, unshown]) == {}


FIRE = ("公诉机关指控：2013年8月9日13时许，被告人刘某携带火纸、打火机到某村山岭处祭祖，因烧冥纸不慎将山林引燃，造成山林火灾，"
        "经鉴定，过火有林地面积为99.1亩。")


def _fire_graph():
    from worker.agents.testing.fixtures import tiny_legal_graph

    graph = tiny_legal_graph()
    for pk, number, sub, text, charges, checklist in (
            (14, 114, 0, ARSON, INTENDED, ["是否放火"]),
            (15, 115, 0, ARSON_HARM + CARELESS, INTENDED, ["是否放火", "是否致人重伤、死亡或者使公私财产遭受重大损失"]),
            (16, 115, 1, CARELESS, ["失火罪"], ["是否过失犯罪"])):
        graph.add_article(pk, number, sub=sub, charges=charges)
        graph.add_article_text(pk * 10, pk, text)
        graph.add_checklist(pk * 10, checklist)
    for pk in (401, 402, 403):
        graph.add_case(pk, f"fire-{pk}", charges=["失火罪"], article_pks=[16])
    for pk in (404, 405, 406):
        graph.add_case(pk, f"arson-{pk}", charges=["放火罪"], article_pks=[14])
    return graph


@pytest.mark.parametrize("lang, said", [("en", "The facts show carelessness, not intent: 第一百一十五条之一"),
                                        ("zh-hans", "案件事实显示的是过失而非故意：改引")])
def test_a_careless_fire_is_judged_under_the_negligence_provision_and_the_reviewer_reads_why(lang, said):
    from django.utils import translation

    from apps.cases.reasons import reason_render
    from worker.agents.pipeline import adjudicate
    from worker.agents.strategies.statistical import StatisticalStrategy
    from worker.agents.testing.fixtures import FixedProbabilities
    from worker.agents.testing.memory_retriever import InMemoryRetriever
    from worker.agents.types import CaseInput

    graph = _fire_graph()
    # the classifier finds arson the likelier charge: the carelessness the facts show decides
    strategy = StatisticalStrategy(charge_model=FixedProbabilities({"放火罪": 0.8, "失火罪": 0.6}, model_id="fake"))
    bundle = adjudicate(CaseInput(facts=FIRE, defendants=("刘某",), offence_date=dt.date(2013, 8, 9)), "刘某",
                        strategy=strategy, graph=graph, retriever=InMemoryRetriever(graph))
    verified = {a.key for a in bundle.audit.verified}
    assert {"114", "115-1"} <= verified, "both pass the Auditor: the judgment chooses"
    assert bundle.judgment.charges == ["失火罪"] and bundle.judgment.article_keys == ["115-1"]
    left = next(w for w in bundle.judgment.not_cited if w["key"] == "114")
    assert left["kind"] == "careless" and left["instead"] == "第一百一十五条之一"
    with translation.override(lang):
        assert said in reason_render(left)["text"]
