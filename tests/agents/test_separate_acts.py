"""A rejected article passes as a further act only for a part of the facts of its own (statistical strategy's
``_separate_acts``): the part most likely its charge shows its conduct and none of the charged offences'."""

from worker.agents.strategies.statistical import StatisticalStrategy
from worker.agents.types import ArticleAudit, ItemVerdict

DRIVE = "2019年4月20日21时，周某醉酒后驾驶小型轿车在市区道路上行驶，经检测其血液酒精含量为每百毫升168毫克。"
THEFT = "另查明，2019年4月12日凌晨，周某撬开被害人郑某家的窗户入户，窃得现金3000元。"


class _Parts(StatisticalStrategy):
    """The rule alone: the parts' charges are given, each charge is its own label."""

    def __init__(self, parts):
        super().__init__()
        self.parts = parts

    def _part_labels(self, focus):
        return self.parts

    def _labels_for(self, charge):
        return [charge]


def _article(pk, charge, facts, quote, *, passed):
    start = facts.index(quote)
    item = ItemVerdict(item_pk=pk, order=1, question="是否撬开门窗入户盗窃" if charge == "盗窃罪" else "是否醉酒驾驶机动车",
                       satisfied=True, score=1.0, reasoning="", span=(start, start + len(quote)), span_text=quote)
    return ArticleAudit(article_pk=pk, key=str(pk), label=str(pk), charges=[charge], version_pk=None, text="",
                        in_force=True, items=[item], passed=passed, score=0.9 if passed else 0.05)


def test_a_part_of_its_own_passes_the_rejected_article_as_a_further_act():
    facts = DRIVE + THEFT
    drive = _article(1331, "危险驾驶罪", facts, "醉酒后驾驶小型轿车", passed=True)
    theft = _article(264, "盗窃罪", facts, "撬开被害人郑某家的窗户入户", passed=False)
    found = _Parts({"盗窃罪": (0.9, THEFT)})._separate_acts(facts, [(drive, 1, 1), (theft, 1, 1)])
    assert theft.passed and found == {264: ("盗窃罪", 0.9, THEFT)}


def test_a_part_that_also_shows_the_charged_offence_is_the_same_act_told_again():
    both = "另查明，2019年4月12日凌晨，周某醉酒后驾驶小型轿车至郑某家，撬开被害人郑某家的窗户入户，窃得现金3000元。"
    facts = "一、周某参与多次违法活动。" + both
    drive = _article(1331, "危险驾驶罪", facts, "醉酒后驾驶小型轿车", passed=True)
    theft = _article(264, "盗窃罪", facts, "撬开被害人郑某家的窗户入户", passed=False)
    assert _Parts({"盗窃罪": (0.9, both)})._separate_acts(facts, [(drive, 1, 1), (theft, 1, 1)]) == {}
    assert not theft.passed


def test_no_further_act_without_a_charged_one_or_outside_its_part():
    facts = DRIVE + THEFT
    theft = _article(264, "盗窃罪", facts, "撬开被害人郑某家的窗户入户", passed=False)
    assert _Parts({"盗窃罪": (0.9, THEFT)})._separate_acts(facts, [(theft, 1, 1)]) == {}, "nothing charged yet"
    drive = _article(1331, "危险驾驶罪", facts, "醉酒后驾驶小型轿车", passed=True)
    assert _Parts({"盗窃罪": (0.9, DRIVE)})._separate_acts(facts, [(drive, 1, 1), (theft, 1, 1)]) == {}, \
        "the theft's element lies outside the part said to be a theft"
    assert _Parts({})._separate_acts(facts, [(drive, 1, 1), (theft, 1, 1)]) == {}, "no part most likely a theft"
