"""The CAIL2018 converter (lexlib/parsing/cail.py), on lines we write here."""

import json

from lexlib.parsing.cail import cail_convert
from lexlib.parsing.formats import detect_format, normalise_charge
from lexlib.parsing.records import validate_records

FACT = "公诉机关指控：某日晚，被告人张某在某超市内趁无人注意，将货架上的洗发水六瓶藏入背包，未付款即离开，价值人民币三百元。"


def cail(fact=FACT, **meta) -> dict:
    base = {"relevant_articles": [264], "accusation": ["盗窃"], "punish_of_money": 1000, "criminals": ["张某"],
            "term_of_imprisonment": {"death_penalty": False, "imprisonment": 6, "life_imprisonment": False}}
    return {"fact": fact, "meta": {**base, **meta}}


def lines(*records) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


def test_a_cail_line_becomes_a_valid_case_record():
    converted = cail_convert(lines(cail()), filename="data_test.json")
    assert converted.errors == []
    [(line, row)] = converted.rows
    assert line == 1
    assert row["charges"] == ["盗窃罪"] and row["articles"] == [264] and row["defendants"] == ["张某"]
    assert row["term"] == {"months": 6, "life": False, "death": False} and row["fine"] == 1000
    assert row["label_source"] == "gold" and row["source"] == "cail2018" and row["id"].startswith("cail2018-")
    [record] = validate_records("case", converted.rows)
    assert record.charges == ("盗窃罪",)


def test_the_cail_bracket_notation_is_normalised_to_corpus_charge_names():
    assert normalise_charge("[掩饰、隐瞒][犯罪所得、犯罪所得收益]") == "掩饰、隐瞒犯罪所得、犯罪所得收益罪"
    assert normalise_charge("非法[持有、私藏][枪支、弹药]") == "非法持有、私藏枪支、弹药罪"
    assert normalise_charge("盗窃罪") == "盗窃罪"
    row = cail_convert(lines(cail(accusation=["[走私、贩卖、运输、制造]毒品", "盗窃"]))).rows[0][1]
    assert row["charges"] == ["走私、贩卖、运输、制造毒品罪", "盗窃罪"]


def test_life_and_death_sentences_follow_the_cail_convention():
    life = cail(term_of_imprisonment={"death_penalty": False, "imprisonment": 0, "life_imprisonment": True})
    death = cail(fact=FACT + "另查明被告人曾持刀伤人。", term_of_imprisonment={"death_penalty": True, "imprisonment": 0, "life_imprisonment": False})
    rows = [row for _, row in cail_convert(lines(life, death)).rows]
    assert [(r["term"]["life"], r["term"]["death"], r["term"]["months"]) for r in rows] == [(True, False, 0), (False, True, 0)]


def test_malformed_and_wrong_lines_are_refused_with_their_line_and_field():
    bad = [
        cail(accusation=[]),
        cail(relevant_articles=["二六四"]),
        cail(term_of_imprisonment={"death_penalty": "no", "imprisonment": -1, "life_imprisonment": False}),
        {"fact": FACT, "meta": cail()["meta"], "extra": 1},
        cail(fact="经审理查明："),
        cail(punish_of_money=12.5),
    ]
    data = lines(*bad) + b'{"fact": "x", "meta": NaN}\n' + lines(cail())
    converted = cail_convert(data)
    reasons = {}
    for error in converted.errors:
        reasons.setdefault(error.line, []).append(error.reason)
    assert sorted(reasons) == [1, 2, 3, 4, 5, 6, 7]
    assert "meta.accusation" in reasons[1][0]
    assert "meta.relevant_articles[0]" in reasons[2][0]
    assert any("death_penalty" in r for r in reasons[3]) and any("imprisonment" in r for r in reasons[3])
    assert "extra: unknown field" in reasons[4][0]
    assert "at least 20" in reasons[5][0]
    assert "punish_of_money" in reasons[6][0]
    assert "NaN" in reasons[7][0]
    assert [line for line, _ in converted.rows] == [8], "the good line is still converted (and reported with the rest)"


def test_the_same_fact_twice_gets_distinct_ids_so_it_is_merged_not_refused():
    rows = cail_convert(lines(cail(), cail(criminals=["张某某"]))).rows
    assert rows[0][1]["id"] != rows[1][1]["id"] and rows[1][1]["id"].endswith("-2")


def test_a_cail_file_is_detected_from_its_records():
    assert detect_format("data_train.json", lines(cail(), cail())) == "cail2018"


def test_a_gbk_encoded_cail_file_is_read_and_the_report_says_so():
    data = lines(cail(), cail(fact=FACT + "另查明，被告人张某系初犯。"))
    gbk = data.decode("utf-8").encode("gb18030")
    converted = cail_convert(gbk, filename="data_train.json")
    assert converted.errors == [] and len(converted.rows) == 2
    assert converted.rows[0][1]["fact"] == FACT
    assert converted.hints == ["data_train.json: the file is not UTF-8; it was read as GB18030 (GBK)"]
    assert detect_format("data_train.json", gbk) == "cail2018"
    assert cail_convert(b"\xef\xbb\xbf" + data).errors == [], "a byte-order mark is dropped"
