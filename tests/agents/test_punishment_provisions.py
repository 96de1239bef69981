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
