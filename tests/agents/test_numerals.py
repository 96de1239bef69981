"""Chinese numerals and article labels: the one place article numbers are read."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.agents.numerals import (
    article_key,
    article_label,
    chinese_to_int,
    find_article_refs,
    int_to_chinese,
    parse_article_label,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("二百六十六", 266),
        ("一百零二", 102),
        ("十", 10),
        ("十三", 13),
        ("二十", 20),
        ("一百一十", 110),
        ("一千零一", 1001),
        ("一千零一十", 1010),
        ("四百五十二", 452),
        ("两百", 200),
        ("零", 0),
        ("〇", 0),
        ("二〇二〇", 2020),
        ("一万零一十", 10010),
        ("十万", 100_000),
        ("一亿零五百万", 105_000_000),
        ("贰佰陆拾陆", 266),
        ("266", 266),
        ("２６６", 266),
        (" 五 ", 5),
    ],
)
def test_it_reads_chinese_and_arabic_numerals(text, expected):
    assert chinese_to_int(text) == expected


@pytest.mark.parametrize(
    "junk",
    ["", "   ", "abc", "二百x", "2百", "百", "千五", "十十", "一百十", "二百五", "一万五", "一百零", "百二", "十百",
     "两两", "-5", "5.0", "一万万", "万", "一百零零一", "二百两", "一百零二十", "十零五", "一千零二百", "一万零一千"],
)
def test_it_refuses_junk_and_ambiguous_shorthand(junk):
    with pytest.raises(ValueError):
        chinese_to_int(junk)


def test_it_refuses_non_strings():
    with pytest.raises(ValueError):
        chinese_to_int(266)  # type: ignore[arg-type]


@settings(max_examples=300, database=None, deadline=None)
@given(st.integers(min_value=0, max_value=10**12 - 1))
def test_it_reads_back_every_number_it_writes(n):
    assert chinese_to_int(int_to_chinese(n)) == n


@pytest.mark.parametrize(
    ("number", "written"),
    [(10, "十"), (13, "十三"), (110, "一百一十"), (1001, "一千零一"), (10010, "一万零一十"), (266, "二百六十六")],
)
def test_it_writes_canonical_statute_numerals(number, written):
    assert int_to_chinese(number) == written


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("第一百三十三条之一", (133, 1)),
        ("第266条", (266, 0)),
        ("第二百六十六条", (266, 0)),
        ("第一条", (1, 0)),
        ("第十七条之一", (17, 1)),
        ("第一百二十条之六", (120, 6)),
    ],
)
def test_it_parses_article_labels(label, expected):
    assert parse_article_label(label) == expected


@pytest.mark.parametrize(
    "label", ["第零条", "第一百三十三条之零", "第三款", "二百六十六条", "第二百六十六条第一款", "第条", "第x条"]
)
def test_it_refuses_things_that_are_not_article_labels(label):
    with pytest.raises(ValueError):
        parse_article_label(label)


def test_it_keys_articles_and_sub_articles():
    assert article_key(133, 1) == "133-1"
    assert article_key(266, 0) == "266"
    assert article_key(266) == "266"
    assert article_label(133, 1) == "第一百三十三条之一"


@pytest.mark.parametrize(("number", "sub"), [(0, 0), (-1, 0), (5, -1), (True, 0), ("5", 0)])
def test_it_refuses_impossible_article_keys(number, sub):
    with pytest.raises(ValueError):
        article_key(number, sub)


def test_it_finds_article_references_in_order_without_paragraphs_or_items():
    text = "依照刑法第二百六十四条、第六十七条第三款之规定"
    assert find_article_refs(text) == [(264, 0), (67, 0)]


def test_it_finds_sub_articles_arabic_forms_and_repeats():
    text = "构成第一百三十三条之一规定之罪，同时触犯第266条和第一百三十三条之一的，依照第七十二条第一款第（三）项"
    assert find_article_refs(text) == [(133, 1), (266, 0), (133, 1), (72, 0)]


def test_it_skips_malformed_mentions_instead_of_guessing():
    assert find_article_refs("第十十条与第二百条") == [(200, 0)]
    assert find_article_refs("本条第二款及前款") == []
