"""The GRPO reward of planner trajectories, on hand-computed examples (training/grpo_reward.py)."""

import pytest

from training.grpo_reward import (
    RewardWeights,
    accuracy,
    alignment,
    evidence_gain,
    format_score,
    query_quality,
    repetition,
    reward,
    term_closeness,
    verbosity,
)

FACTS = "被告人张某翻墙进入被害人李某家中，秘密窃取现金人民币五千元。"
GOLD = {"charges": ["盗窃罪"], "articles": [264], "term": {"months": 8, "life": False, "death": False}}


def step(action, query="", results=()):
    return {"action": action, "query": query, "results": list(results)}


ARTICLE_264 = {"kind": "article", "pk": 5, "label": "第二百六十四条", "score": 0.9, "detail": "盗窃罪"}
PRECEDENT = {"kind": "case", "pk": 101, "label": "TINY-101", "score": 0.5, "detail": "盗窃罪"}
GOOD = [step("search_statutes", "入户盗窃 秘密窃取", [ARTICLE_264]), step("search_precedents", "入户 秘密窃取 盗窃罪", [PRECEDENT]),
        step("stop")]


def test_accuracy_combines_charges_articles_and_term():
    exact = {"charges": ["盗窃罪"], "articles": ["264"], "term": {"months": 8, "life": False, "death": False}}
    assert accuracy(exact, GOLD) == pytest.approx(1.0)
    # charges right, articles wrong (F1 0), term 12 vs 8 months: PSI 360 vs 240 → 1 − 120/240 = 0.5
    partly = {"charges": ["盗窃"], "articles": ["266"], "term": {"months": 12, "life": False, "death": False}}
    assert accuracy(partly, GOLD) == pytest.approx(0.5 * 1 + 0.3 * 0 + 0.2 * 0.5)
    # two charges predicted, one right: F1 = 2·1/(2+1) = 2/3
    two = {"charges": ["盗窃罪", "诈骗罪"], "articles": ["264"], "term": None}
    assert accuracy(two, GOLD) == pytest.approx(0.5 * 2 / 3 + 0.3 * 1 + 0.2 * 0)
    assert accuracy(None, GOLD) == 0.0
    assert term_closeness({"months": 0, "life": True, "death": False}, GOLD["term"]) == 0.0


def test_alignment_with_a_reference_trajectory():
    assert alignment(GOOD, GOOD) == pytest.approx(1.0)
    # same action order, one query differs completely: 0.7 · 1 + 0.3 · (1 + 0) / 2
    other = [GOOD[0], step("search_precedents", "完全不同的词语"), step("stop")]
    assert alignment(other, GOOD) == pytest.approx(0.7 + 0.3 * 0.5)
    # stop at once: LCS 1 of max length 3, no search steps on one side → query part 0
    assert alignment([step("stop")], GOOD) == pytest.approx(0.7 / 3)
    assert alignment(GOOD, None) == 0.0


def test_evidence_gain_counts_gold_articles_and_charges_in_view():
    assert evidence_gain(GOOD, GOLD) == 1.0
    assert evidence_gain([step("search_precedents", "x", [PRECEDENT])], GOLD) == 0.5  # the charge, not the article
    assert evidence_gain([step("stop")], GOLD) == 0.0


def test_query_quality():
    assert query_quality(GOOD, FACTS) == 1.0
    copied = [step("search_statutes", FACTS)]
    assert query_quality(copied, FACTS) == 0.5
    assert query_quality([step("search_statutes", "   ")], FACTS) == 0.0
    assert query_quality([step("search_statutes", "秘密窃取"), step("search_statutes", "")], FACTS) == 0.5
    assert query_quality([step("search_statutes", "入户盗窃")], FACTS) == 0.5  # no wording of the facts
    assert query_quality([step("stop")], FACTS) == 0.0


def test_format_verbosity_and_repetition():
    assert format_score(GOOD, True) == 1.0
    assert format_score(GOOD[:2], True) == 0.5
    assert format_score(GOOD, False) == 0.0
    assert verbosity(100, 256) == 0.0 and verbosity(384, 256) == 0.5 and verbosity(10_000, 256) == 1.0
    repeated = [step("search_statutes", "盗窃"), step("search_statutes", " 盗 窃"), step("search_precedents", "盗窃"), step("stop")]
    assert repetition(repeated) == pytest.approx(1 / 3)
    assert repetition(GOOD) == 0.0


def test_total_is_the_weighted_sum_minus_penalties():
    exact = {"charges": ["盗窃罪"], "articles": ["264"], "term": GOLD["term"]}
    best = reward({"steps": GOOD, "judgment": exact, "valid": True, "tokens": 80}, gold=GOLD, facts=FACTS, reference=GOOD)
    assert best.total == pytest.approx(1.0 + 0.5 + 0.5 + 0.25 + 0.25)
    bad_steps = [step("search_statutes", FACTS), step("search_statutes", FACTS)]
    bad = reward({"steps": bad_steps, "judgment": None, "valid": False, "tokens": 512}, gold=GOLD, facts=FACTS,
                 reference=GOOD)
    # alignment: LCS 1 / 3 → 0.7/3; queries: both copy the facts (Jaccard with the reference query small)
    assert bad.accuracy == 0 and bad.format == 0 and bad.verbosity == 1.0 and bad.repetition == 0.5
    assert bad.query_quality == 0.5 and bad.evidence_gain == 0.0
    expected = 0.5 * bad.alignment + 0.25 * 0.5 - 0.1 * 1.0 - 0.25 * 0.5
    assert bad.total == pytest.approx(expected, abs=1e-6) and bad.total < best.total
    light = reward({"steps": GOOD, "judgment": exact, "valid": True, "tokens": 80}, gold=GOLD, facts=FACTS,
                   weights=RewardWeights(alignment=0.0))
    assert light.total == pytest.approx(1.0 + 0.5 + 0.25 + 0.25)
