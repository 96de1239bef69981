"""Precedent priors: court authority and the Punishment Severity Index, on hand-computed sentences.

Every expected value below is worked out by hand from the formula in worker/agents/models/priors.py:
PSI = months × 30 × type coefficient × suspension factor + 30 × log2(1 + fine / 1000)
      + 0.1 × rights months × 30 (+ 90 for confiscation).
"""

import math

import pytest

from worker.agents.graph_types import CaseNode, Term
from worker.agents.models.priors import (
    Sentence,
    authority,
    psi,
    psi_months,
    rank_for_sentencing,
    sentence_of,
    sentencing_reference,
)


def test_authority_by_court_level():
    assert authority("high") == 1.1
    assert authority("intermediate") == 1.05
    assert authority("basic") == 1.0
    assert authority("") == 1.0 and authority(None) == 1.0 and authority("unknown") == 1.0


@pytest.mark.parametrize("sentence, expected", [
    (Sentence("imprisonment", months=12), 360.0),  # 12 × 30 × 1.0
    (Sentence("imprisonment", months=36), 1080.0),  # 36 × 30
    (Sentence("detention", months=4), 108.0),  # 4 × 30 × 0.9
    (Sentence("surveillance", months=6), 90.0),  # 6 × 30 × 0.5
    (Sentence("imprisonment", months=12, suspended=True), 144.0),  # 360 × 0.4
    (Sentence("detention", months=3, suspended=True), 32.4),  # 90 × 0.9 × 0.4
    (Sentence("life"), 9000.0),  # 25 years × 12 × 30
    (Sentence("death"), 18000.0),  # 2 × life
    (Sentence("death_reprieve"), 14400.0),  # 1.6 × life
    (Sentence("fine_only", fine=1000), 30.0),  # 30 × log2(2)
    (Sentence("imprisonment", months=6, fine=3000), 240.0),  # 180 + 30 × log2(4)
    (Sentence("imprisonment", months=6, fine=7000), 270.0),  # 180 + 30 × log2(8)
    (Sentence("imprisonment", months=120, rights_months=24, confiscation=True), 3600.0 + 72.0 + 90.0),
    (Sentence("exempt"), 0.0),
])
def test_psi_of_hand_computed_sentences(sentence, expected):
    assert psi(sentence) == pytest.approx(expected)


def test_fines_are_on_a_log_scale():
    small, large = psi(Sentence("fine_only", fine=2000)), psi(Sentence("fine_only", fine=200000))
    assert small == pytest.approx(30 * math.log2(3), abs=1e-3)  # 47.549
    assert large == pytest.approx(30 * math.log2(201), abs=1e-3)  # 229.6: a hundred times the fine, under five times the index
    assert large < 5 * small


def test_order_of_severity():
    order = [Sentence("fine_only", fine=5000), Sentence("surveillance", months=6), Sentence("detention", months=6),
             Sentence("imprisonment", months=6), Sentence("imprisonment", months=120), Sentence("life"),
             Sentence("death_reprieve"), Sentence("death")]
    values = [psi(s) for s in order]
    assert values == sorted(values) and len(set(values)) == len(values)


def test_sentence_of_terms_and_dataset_kinds():
    assert sentence_of(Term(months=8)) == Sentence("imprisonment", 8)
    assert sentence_of(Term(life=True)) == Sentence("life")
    assert sentence_of(Term(death=True), kind="死刑缓期二年执行") == Sentence("death_reprieve")
    assert sentence_of({"months": 4, "life": False, "death": False}, kind="拘役", suspended=True) == Sentence("detention", 4, True)
    assert sentence_of(Term(months=0), fine=2000) == Sentence("fine_only", 0, fine=2000.0)
    assert sentence_of(None) is None
    with pytest.raises(ValueError):
        Sentence("flogging", 1)
    assert psi_months(psi(Sentence("imprisonment", 18))) == 18.0


def test_precedents_ranked_by_similarity_times_authority():
    basic = CaseNode(pk=1, ext_id="A", charges=("盗窃罪",), term=Term(months=6), court_level="basic")
    high = CaseNode(pk=2, ext_id="B", charges=("盗窃罪",), term=Term(months=36), court_level="high")
    other = CaseNode(pk=3, ext_id="C", charges=("诈骗罪",), term=Term(months=12), court_level="high")
    ranked = rank_for_sentencing([(basic, 0.80), (high, 0.75), (other, 0.95)], ["盗窃罪"])
    # 0.75 × 1.1 = 0.825 > 0.80 × 1.0; the fraud case: 0.95 × 1.1 × 0.5 = 0.5225
    assert [r.pk for r in ranked] == [2, 1, 3]
    assert [r.score for r in ranked] == [0.825, 0.8, 0.5225]
    assert [r.psi for r in ranked] == [1080.0, 180.0, 360.0]
    reference = sentencing_reference(ranked)
    # weighted by score, only precedents sharing the charge: (1080 × 0.825 + 180 × 0.8) / 1.625
    assert reference["psi"] == pytest.approx((1080 * 0.825 + 180 * 0.8) / 1.625, abs=1e-3)
    assert reference["precedents"] == [2, 1]
    assert sentencing_reference([]) == {}
