"""Terms written as a judgment writes them (worker/agents/wording.py)."""

import pytest

from worker.agents.wording import duration_en, duration_zh, interpretation_line, kind_named, term_of, term_wording


@pytest.mark.parametrize("months, text", [
    (17, "有期徒刑一年五个月"), (12, "有期徒刑一年"), (6, "有期徒刑六个月"), (24, "有期徒刑二年"),
    (126, "有期徒刑十年六个月"), (180, "有期徒刑十五年"), (3, "拘役三个月"), (1, "拘役一个月"), (5, "拘役五个月"),
])
def test_a_fixed_term_reads_like_a_judgment(months, text):
    assert term_wording(months) == text


def test_the_kind_probation_life_death_and_none():
    assert term_wording(12, kind="control") == "管制一年"
    assert term_wording(36, probation_months=48) == "有期徒刑三年，缓刑四年"
    assert term_wording(3, kind="detention", probation_months=4) == "拘役三个月，缓刑四个月"
    assert term_wording(30, life=True) == "无期徒刑"
    assert term_wording(None, death=True, life=True) == "死刑"
    assert term_wording(None) == ""
    assert term_wording(0) == "不判处监禁刑"
    with pytest.raises(ValueError):
        term_wording(12, kind="house arrest")


def test_a_court_word_for_the_kind_names_it():
    """Precedents store the court's word (拘役): a six-month 拘役 is not written as 有期徒刑六个月."""
    assert [kind_named(w) for w in ("拘役", "管制", "有期徒刑", " 拘役 ", "免予刑事处罚", "", None)] == \
        ["detention", "control", "fixed", "detention", None, None, None]
    assert term_wording(6, kind=kind_named("拘役")) == "拘役六个月"
    assert term_of({"months": 6, "life": False, "death": False, "kind": "detention"}) == "拘役六个月"


def test_english():
    assert term_wording(17, lang="en") == "1 year and 5 months of fixed-term imprisonment"
    assert term_wording(3, lang="en") == "3 months of criminal detention"
    assert term_wording(36, probation_months=60, lang="en") == \
        "3 years of fixed-term imprisonment, suspended for 5 years"
    assert term_wording(0, life=True, lang="en") == "life imprisonment"
    assert duration_en(1) == "1 month" and duration_en(25) == "2 years and 1 month"


def test_durations_and_stored_terms():
    assert duration_zh(0) == "零个月" and duration_zh(13) == "一年一个月"
    with pytest.raises(ValueError):
        duration_zh(-1)
    assert term_of({"months": 17, "life": False, "death": False}) == "有期徒刑一年五个月"
    assert term_of({"months": 0, "life": True, "death": False}, lang="en") == "life imprisonment"
    assert term_of(None) == ""


def test_an_interpretation_line_says_its_paragraph_number_once():
    source = "关于办理盗窃刑事案件适用法律若干问题的解释"
    assert interpretation_line(source, "第一条", "第一条　盗窃公私财物价值一千元至三千元以上") == \
        f"{source}第一条　盗窃公私财物价值一千元至三千元以上"
    assert interpretation_line(source, "第二条", "第二条 多次盗窃") == f"{source}第二条　多次盗窃"
    # a text that does not open with its number, or a paragraph without one, is kept whole
    assert interpretation_line(source, "第三条", "入户盗窃") == f"{source}第三条　入户盗窃"
    assert interpretation_line(source, "", "第三条　入户盗窃") == f"{source}　第三条　入户盗窃"
