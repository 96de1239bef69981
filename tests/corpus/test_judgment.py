"""The judgment parser (lexlib/parsing/judgment.py) on judgments we write here."""

import pytest

from lexlib.parsing.documents import extract_text
from lexlib.parsing.formats import detect_document_format
from lexlib.parsing.judgment import JudgmentError, court_level, judgment_record, parse_judgment, parse_verdict
from tests.corpus.judgments import docx, judgment, pdf, single


def outcome(verdict: str) -> tuple:
    [o] = parse_verdict(verdict)
    return o.name, o.charges, o.kind, o.months, o.life, o.death, o.suspended, o.fine


def test_a_two_defendant_judgment_gives_each_defendant_their_outcome_facts_articles_and_case_number():
    parsed = parse_judgment(judgment())
    assert [(o.name, o.charges, o.kind, o.months, o.suspended, o.fine) for o in parsed.outcomes] == [
        ("甲某", ["盗窃罪"], "有期徒刑", 18, False, 5000),
        ("乙某某", ["盗窃罪"], "拘役", 5, True, 2000),
    ]
    assert parsed.fact.startswith("经审理查明：2019年1月5日晚") and "本院认为" not in parsed.fact
    assert parsed.articles == [264, 25, 67, 72, 52], "only the Criminal Law's articles, not the procedure law's 第十五条"
    assert parsed.case_number == "(2019)示0101刑初123号"
    assert (parsed.court, parsed.court_level) == ("示范市东城区人民法院", "basic")


@pytest.mark.parametrize("verdict, expected", [
    ("被告人丁某犯盗窃罪，判处有期徒刑三年，缓刑四年，并处罚金人民币一万元。", ("丁某", ["盗窃罪"], "有期徒刑", 36, False, False, True, 10000)),
    ("被告人丁某犯盗窃罪，判处有期徒刑十个月，并处罚金1.5万元。", ("丁某", ["盗窃罪"], "有期徒刑", 10, False, False, False, 15000)),
    ("被告人丁某犯抢劫罪，判处有期徒刑五年，并处罚金人民币一万元；犯盗窃罪，判处有期徒刑一年，并处罚金人民币三千元；"
     "决定执行有期徒刑五年六个月，并处罚金人民币一万三千元。", ("丁某", ["抢劫罪", "盗窃罪"], "有期徒刑", 66, False, False, False, 13000)),
    ("被告人丁某犯故意杀人罪，判处死刑，缓期二年执行，剥夺政治权利终身。", ("丁某", ["故意杀人罪"], "死刑缓期二年执行", 0, False, True, False, None)),
    ("被告人丁某犯故意杀人罪，判处死刑，剥夺政治权利终身。", ("丁某", ["故意杀人罪"], "死刑", 0, False, True, False, None)),
    ("被告人丁某犯抢劫罪，判处无期徒刑，剥夺政治权利终身，并处没收个人全部财产。", ("丁某", ["抢劫罪"], "无期徒刑", 0, True, False, False, None)),
    ("被告人丁某犯掩饰、隐瞒犯罪所得罪，判处管制一年。", ("丁某", ["掩饰、隐瞒犯罪所得罪"], "管制", 12, False, False, False, None)),
    ("被告人丁某犯故意伤害罪，免予刑事处罚。", ("丁某", ["故意伤害罪"], "免予刑事处罚", 0, False, False, False, None)),
    ("被告人丁某犯盗窃罪，单处罚金人民币两万元。", ("丁某", ["盗窃罪"], "单处罚金", 0, False, False, False, 20000)),
    ("被告单位示范某某有限公司犯污染环境罪，判处罚金人民币二十万元。", ("示范某某有限公司", ["污染环境罪"], "单处罚金", 0, False, False, False, 200000)),
    ("被告人丁某某（曾用名丁三）犯非法持有、私藏枪支、弹药罪、寻衅滋事罪，决定执行有期徒刑三年。",
     ("丁某某", ["非法持有、私藏枪支、弹药罪", "寻衅滋事罪"], "有期徒刑", 36, False, False, False, None)),
    ("被告人丁某犯危险驾驶罪，判处拘役二个月，并处罚金人民币4000元。", ("丁某", ["危险驾驶罪"], "拘役", 2, False, False, False, 4000)),
])
def test_each_kind_of_sentence_is_read_with_chinese_or_arabic_numerals(verdict, expected):
    assert outcome(verdict) == expected


def test_days_of_detention_are_counted_in_months_with_a_note():
    [o] = parse_verdict("被告人丁某犯盗窃罪，判处拘役二十日。")
    assert (o.kind, o.months) == ("拘役", 1) and "20 days counted as 1 month(s)" in o.notes


def test_several_defendants_with_one_sentence_each_get_it():
    result = parse_verdict("被告人甲某、乙某犯盗窃罪，均判处有期徒刑一年。")
    assert [(o.name, o.months) for o in result] == [("甲某", 12), ("乙某", 12)]


@pytest.mark.parametrize("verdict, reason", [
    ("被告人丁某无罪。", "acquits 丁某"),
    ("驳回上诉，维持原判。", "维持原判"),
    ("被告人甲某、乙某犯盗窃罪，分别判处有期徒刑一年、十个月。", "分别"),
    ("被告人丁某犯盗窃罪，判处有期徒刑一年；犯诈骗罪，判处有期徒刑二年。", "no combined one"),
    ("被告人丁某犯盗窃罪，依法从轻处罚。", "cannot read the term of 丁某"),
    ("本判决为终审判决。", "no defendant convicted"),
])
def test_what_the_parser_cannot_read_with_confidence_is_refused_with_the_reason(verdict, reason):
    with pytest.raises(JudgmentError, match=reason):
        parse_verdict(verdict)


def test_a_document_without_a_verdict_or_facts_is_refused():
    with pytest.raises(JudgmentError, match="判决如下"):
        parse_judgment("示范市人民法院\n刑事裁定书\n准许撤回上诉。")
    with pytest.raises(JudgmentError, match="no facts"):
        parse_judgment("刑事判决书\n本院认为，应予惩处。判决如下：\n被告人丁某犯盗窃罪，判处拘役三个月。")


def test_an_appellate_judgment_uses_its_own_last_verdict():
    text = judgment(number="（2020）示01刑终9号", court="示范市中级人民法院",
                    verdict="一、撤销示范市东城区人民法院（2019）示0101刑初123号刑事判决；\n二、被告人甲某犯盗窃罪，判处有期徒刑一年。")
    parsed = parse_judgment(text)
    assert [(o.name, o.months) for o in parsed.outcomes] == [("甲某", 12)]
    assert parsed.court_level == "intermediate"


def test_court_levels():
    assert [court_level(c) for c in ("最高人民法院", "示范省高级人民法院", "示范市中级人民法院", "示范县人民法院", "")] == [
        "supreme", "high", "intermediate", "basic", ""]


def test_the_record_carries_per_defendant_outcomes_and_what_the_admin_confirms():
    record, note = judgment_record(judgment(), filename="j.txt", sha256="0" * 64)
    assert record["id"] == "judgment-(2019)示0101刑初123号" and record["label_source"] == "parsed_judgment"
    assert record["term"] is None and [d["name"] for d in record["per_defendant"]] == ["甲某", "乙某某"]
    assert record["origin"]["fines"] == {"甲某": 5000, "乙某某": 2000}
    assert [o["clause"][:12] for o in note["outcomes"]] == ["被告人甲某犯盗窃罪，判处", "被告人乙某某犯盗窃罪，判"]
    assert "二、" not in note["outcomes"][0]["clause"] and "扣押" not in note["outcomes"][1]["clause"], \
        "the next numbered item is not part of a defendant's outcome"
    single_record, _ = judgment_record(single("被告人丁某犯盗窃罪，判处有期徒刑八个月，并处罚金人民币二千元。"), filename="d.txt", sha256="1" * 64)
    assert single_record["term"]["months"] == 8 and single_record["fine"] == 2000 and "per_defendant" not in single_record


@pytest.mark.parametrize("make, name", [(lambda t: t.encode("utf-8"), "j.txt"), (lambda t: t.encode("gb18030"), "j.txt"),
                                        (docx, "j.docx"), (pdf, "j.pdf")])
def test_txt_docx_and_pdf_judgments_read_the_same(make, name):
    text = extract_text(make(judgment()), name).text
    assert detect_document_format(text) == "judgment"
    parsed = parse_judgment(text)
    assert [(o.name, o.months, o.fine) for o in parsed.outcomes] == [("甲某", 18, 5000), ("乙某某", 5, 2000)]
