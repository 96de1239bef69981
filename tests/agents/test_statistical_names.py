"""How the statistical strategy maps the classifier's dataset charge names onto statute charge names."""

from worker.agents.strategies.statistical import StatisticalStrategy

STATUTE = {"行贿罪", "对有影响力的人行贿罪", "走私、贩卖、运输、制造毒品罪", "盗窃罪"}


def test_a_statute_name_stands_only_for_itself():
    s = StatisticalStrategy(statute_charges=STATUTE)
    assert s._matches("行贿罪", "行贿罪")
    # 行贿罪 is a character subsequence of 对有影响力的人行贿罪, but a different offence.
    assert not s._matches("行贿罪", "对有影响力的人行贿罪")


def test_a_dataset_name_maps_by_alias_then_by_subsequence():
    s = StatisticalStrategy(statute_charges=STATUTE, aliases={"窝藏赃物罪": "盗窃罪"})
    assert s._matches("窝藏赃物罪", "盗窃罪")
    assert s._matches("贩卖毒品罪", "走私、贩卖、运输、制造毒品罪")
    assert not s._matches("贩卖毒品罪", "盗窃罪")


def test_without_a_statute_list_the_subsequence_rule_applies():
    assert StatisticalStrategy()._matches("行贿罪", "对有影响力的人行贿罪")
