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


def test_a_verified_punishment_article_goes_with_the_charge_its_precedents_cite_it_for():
    from worker.agents.memory_store import InMemoryGraphStore
    from worker.agents.types import ArticleAudit, Audit, Research

    s = StatisticalStrategy(statute_charges={"贪污罪"})
    s._labels_of_charge["贪污罪"] = ["贪污罪"]  # what a charge model's label list would give

    def article(pk, key, charges, score):
        return ArticleAudit(article_pk=pk, key=key, label=key, charges=charges, version_pk=pk, text="", in_force=True,
                            score=score, passed=True)

    defining, punishment, unrelated = article(1, "382", ["贪污罪"], 0.9), article(2, "383", [], 0.8), article(3, "64", [], 0.7)
    research = Research(focus="f", features={}, query_text="f", fact_shares={"贪污罪": {2: 0.9, 3: 0.2}})
    judgment = s.adjudicate("f", Audit(articles=[defining, punishment, unrelated]), research, [], InMemoryGraphStore())
    assert judgment.charges == ["贪污罪"] and judgment.article_keys == ["382", "383"]
