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
    from worker.agents.testing.memory_store import InMemoryGraphStore
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


class _LowAuditor:
    """An Auditor that finds every candidate unlikely (below its threshold)."""
    threshold, multi_threshold = 0.5, 0.6

    def __init__(self, p):
        self.p = p

    def probabilities(self, rows):
        import numpy as np

        return np.array(self.p[: len(rows)])

    def contributions(self, row):
        return {}


def test_when_nothing_reaches_the_threshold_the_best_candidate_with_a_shown_element_stands_and_says_so():
    from worker.agents.testing.memory_store import InMemoryGraphStore
    from worker.agents.types import ArticleAudit, ItemVerdict, Research

    def article(pk, key, charges, shown):
        items = [ItemVerdict(item_pk=pk, order=0, question="q", satisfied=shown, score=0.5, reasoning="")]
        return ArticleAudit(article_pk=pk, key=key, label=key, charges=charges, version_pk=pk, text="", in_force=True,
                            items=items)

    unshown, weak, weaker = article(1, "263", ["抢劫罪"], False), article(2, "264", ["盗窃罪"], True), article(3, "266", ["诈骗罪"], True)
    # By default (chosen on the development split) nothing below the threshold stands: the judgment is then an
    # explicit insufficient_evidence (tests/agents/test_pipeline.py).
    s = StatisticalStrategy(auditor=_LowAuditor([0.45, 0.3, 0.2]))
    s.decide_articles("f", [unshown, weak, weaker], Research(focus="f", features={}, query_text="f"), InMemoryGraphStore(),
                      lambda a: None)
    assert not any(a.passed for a in (unshown, weak, weaker))
    # With the fallback on, the best candidate with a shown element stands and says so.
    s = StatisticalStrategy(auditor=_LowAuditor([0.45, 0.3, 0.2]), best_supported_fallback=True)
    s.decide_articles("f", [unshown, weak, weaker], Research(focus="f", features={}, query_text="f"), InMemoryGraphStore(),
                      lambda a: None)
    assert not unshown.passed, "the most probable candidate has no element shown: it never passes"
    assert weak.passed and weak.why["code"] == "article.best_supported" and "below the threshold" in weak.reason
    assert not weaker.passed and weaker.why["code"] == "article.rejected"
    # Once one candidate reaches the threshold, nothing is passed below it.
    s = StatisticalStrategy(auditor=_LowAuditor([0.45, 0.3, 0.55]), best_supported_fallback=True)
    for a in (unshown, weak, weaker):
        a.passed = False
    s.decide_articles("f", [unshown, weak, weaker], Research(focus="f", features={}, query_text="f"), InMemoryGraphStore(),
                      lambda a: None)
    assert [a.passed for a in (unshown, weak, weaker)] == [False, False, True]
