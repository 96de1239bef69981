"""Splitting a statute's plain text into articles under their 编/章/节 headings."""

import json

import pytest

from lexlib.parsing.errors import ImportValidationError
from lexlib.parsing.records import validate_records
from lexlib.parsing.statute_text import split_statute_text, statute_rows

# An illustrative statute written for this test (not an official text).
SAMPLE = """示例刑事法

第一编　总　　则
第一章　目的

第一条　为了说明文本切分，制定本示例。
第二条 本示例适用于测试。
第三条本条没有空格也是条文。
第四条中华人民共和国境内的示例适用本条。

第二编 分则
第二章 危害公共安全罪
第一百三十三条　违反交通规则，造成事故的，
处三年以下有期徒刑。
第一百三十三条之一　在道路上驾驶机动车，有下列情形之一的，处拘役：
（一）追逐竞驶，情节恶劣的
（二）醉酒驾驶机动车的。
有前款行为，同时构成其他犯罪的，依照处罚较重的规定定罪处罚。

第五章　侵犯财产罪
第一节 示例节
第二百六十四条　盗窃财物，数额较大的，依照
第二百六十六条的规定处罚；情节严重的，另行处理。
第二百六十六条　诈骗财物的，比照第二百六十四条处罚。
附　则
第四百五十二条　本示例自发布之日起施行。
"""


def test_it_splits_articles_with_full_width_normal_or_no_space():
    articles = split_statute_text(SAMPLE)
    assert [a["key"] for a in articles] == ["1", "2", "3", "4", "133", "133-1", "264", "266", "452"]
    assert articles[0]["text"] == "为了说明文本切分，制定本示例。"
    assert articles[1]["text"] == "本示例适用于测试。"
    assert articles[2]["text"] == "本条没有空格也是条文。"
    assert articles[3]["text"] == "中华人民共和国境内的示例适用本条。"


def test_it_gives_each_article_its_number_sub_and_canonical_label():
    article = split_statute_text(SAMPLE)[5]
    assert (article["number"], article["sub"], article["label"]) == (133, 1, "第一百三十三条之一")


def test_it_tracks_part_chapter_and_section_headings():
    by_key = {a["key"]: a for a in split_statute_text(SAMPLE)}
    assert (by_key["1"]["part"], by_key["1"]["chapter"], by_key["1"]["section"]) == ("第一编 总则", "第一章 目的", None)
    assert (by_key["133"]["part"], by_key["133"]["chapter"]) == ("第二编 分则", "第二章 危害公共安全罪")
    assert by_key["264"]["section"] == "第一节 示例节"
    assert (by_key["452"]["part"], by_key["452"]["chapter"], by_key["452"]["section"]) == ("附则", None, None)


def test_it_joins_wrapped_lines_and_keeps_paragraphs_and_items_apart():
    by_key = {a["key"]: a for a in split_statute_text(SAMPLE)}
    assert by_key["133"]["text"] == "违反交通规则，造成事故的，处三年以下有期徒刑。"
    assert by_key["133-1"]["text"].split("\n") == [
        "在道路上驾驶机动车，有下列情形之一的，处拘役：",
        "（一）追逐竞驶，情节恶劣的",
        "（二）醉酒驾驶机动车的。",
        "有前款行为，同时构成其他犯罪的，依照处罚较重的规定定罪处罚。",
    ]


def test_it_does_not_start_an_article_at_a_reference_inside_the_text():
    by_key = {a["key"]: a for a in split_statute_text(SAMPLE)}
    # "第二百六十六条的规定" begins a wrapped line of 第二百六十四条; 266 is still its own article once.
    assert by_key["264"]["text"] == "盗窃财物，数额较大的，依照第二百六十六条的规定处罚；情节严重的，另行处理。"
    assert by_key["266"]["text"] == "诈骗财物的，比照第二百六十四条处罚。"


def test_it_accepts_arabic_article_numbers_and_crlf():
    articles = split_statute_text("第一章 总则\r\n第1条　第一条内容。\r\n第2条之1　插入的条文。\r\n")
    assert [(a["key"], a["label"], a["text"]) for a in articles] == [
        ("1", "第一条", "第一条内容。"),
        ("2-1", "第二条之一", "插入的条文。"),
    ]


def test_it_produces_rows_that_validate_as_statute_records():
    records = validate_records("statute", statute_rows(SAMPLE))
    assert [r.key for r in records] == ["1", "2", "3", "4", "133", "133-1", "264", "266", "452"]
    assert statute_rows(SAMPLE)[0][0] == 6  # the line number of 第一条


def errors_of(text: str) -> list[tuple[int, str]]:
    with pytest.raises(ImportValidationError) as info:
        split_statute_text(text)
    return [(e.line, e.reason) for e in info.value.errors]


def test_it_rejects_text_without_any_article():
    assert errors_of("第一章 总则\n这里只有说明文字。\n") == [(0, "no article (第…条) found")]


def test_it_rejects_a_repeated_article_number_with_both_lines():
    text = "第一条 甲。\n第二条 乙。\n第二条 丙。\n"
    assert errors_of(text) == [(3, "duplicate article 第二条 (first on line 2)")]


def test_it_rejects_article_numbers_going_backwards():
    text = "第一条 甲。\n第三条 乙。\n第二条 丙。\n第四条 丁。\n"
    assert errors_of(text) == [(3, "article 第二条 comes after 第三条: article numbers must increase")]


def test_it_rejects_an_article_without_text_and_an_unreadable_number():
    text = "第一条\n第二条 乙。\n第十十条 丙。\n"
    assert errors_of(text) == [(1, "article 第一条 has no text"), (3, "cannot read the article number in '第十十条'")]


def test_it_reports_every_problem_in_one_go():
    text = "第二条 甲。\n第一条 乙。\n第三条 丙。\n第三条 丁。\n"
    assert [line for line, _ in errors_of(text)] == [2, 4]


def test_it_recovers_every_shared_statute_from_its_printed_form(shared_data):
    """Print statutes.jsonl as a statute text (headings + "label　text" lines) and split it back."""
    statutes = [json.loads(line) for line in (shared_data / "statutes.jsonl").read_text("utf-8").splitlines()]
    lines: list[str] = []
    current: dict = {"part": None, "chapter": None, "section": None}
    for statute in statutes:
        for level in ("part", "chapter", "section"):
            if statute[level] and statute[level] != current[level]:
                lines.append(statute[level].replace(" ", "\u3000"))
        current = {level: statute[level] for level in current}
        lines.append(f"{statute['label']}\u3000{statute['text']}")
    fields = ("number", "sub", "key", "label", "text", "part", "chapter", "section")
    expected = [{k: statute[k] for k in fields} for statute in statutes]
    assert split_statute_text("\n".join(lines)) == expected
