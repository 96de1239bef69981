"""The LeCaRD / LeCaRDv2 converter (lexlib/parsing/lecard.py), on records we write here."""

import json

from lexlib.parsing.formats import detect_format
from lexlib.parsing.lecard import lecard_convert, title_charges

KNOWN = ["盗窃罪", "诈骗罪", "合同诈骗罪", "故意毁坏财物罪", "走私、贩卖、运输、制造毒品罪", "抢劫罪"]
FACT = "公诉机关指控，某年某月某日，被告人戊某在示范市某小区内，以借用为名骗取邻居手机一部后变卖，得款人民币一千五百元，用于个人挥霍。"


def lines(*records) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


def test_a_lecard_query_keeps_its_given_charges():
    converted = lecard_convert(lines({"path": "a/b.json", "ridx": 77, "q": FACT, "crime": ["诈骗罪"]}))
    [(line, row)] = converted.rows
    assert row["id"] == "lecard-q-77" and row["charges"] == ["诈骗罪"] and row["label_source"] == "gold"
    assert row["source"] == "lecard" and row["fact"] == FACT


def test_a_lecard_candidate_takes_charges_term_and_fine_from_its_verdict():
    candidate = {"ajId": "x-1", "ajName": "戊某诈骗一案", "ajjbqk": FACT,
                 "pjjg": "一、被告人戊某犯诈骗罪，判处有期徒刑八个月，并处罚金人民币三千元。", "qw": "（全文）",
                 "writId": "w001", "writName": "戊某诈骗一审刑事判决书"}
    # Candidate files hold one object, often pretty-printed over several lines.
    converted = lecard_convert(json.dumps(candidate, ensure_ascii=False, indent=2).encode(), filename="77/w001.json")
    [(_, row)] = converted.rows
    assert row["id"] == "lecard-w001" and row["charges"] == ["诈骗罪"] and row["defendants"] == ["戊某"]
    assert row["term"]["months"] == 8 and row["fine"] == 3000 and row["label_source"] == "parsed_judgment"
    assert converted.notes[1]["outcomes"][0]["kind"] == "有期徒刑"


def test_a_candidate_without_pjjg_reads_the_verdict_from_the_full_text():
    candidate = {"ajId": "x-2", "ajName": "…", "ajjbqk": FACT, "pjjg": "", "writId": "w002", "writName": "…",
                 "qw": "……本院认为……判决如下：被告人戊某犯诈骗罪，判处拘役四个月。如不服本判决……"}
    [(_, row)] = lecard_convert(lines(candidate)).rows
    assert row["term"]["kind"] == "拘役" and row["term"]["months"] == 4


def test_a_lecardv2_query_takes_defendants_and_charges_from_its_title():
    query = {"id": 5, "query": "戊某、己某盗窃、诈骗一审刑事判决书示范市某区人民法院刑事判决书（2020）示0102刑初5号：" + FACT}
    [(_, row)] = lecard_convert(lines(query), known_charges=KNOWN).rows
    assert row["id"] == "lecardv2-q-5" and row["charges"] == ["盗窃罪", "诈骗罪"] and row["defendants"] == ["戊某", "己某"]
    assert row["label_source"] == "title"
    assert title_charges("庚某合同诈骗一审刑事判决书", sorted(KNOWN, key=len, reverse=True)) == (["庚某"], ["合同诈骗罪"])
    assert title_charges("辛某走私、贩卖、运输、制造毒品一审刑事判决书", sorted(KNOWN, key=len, reverse=True))[1] == ["走私、贩卖、运输、制造毒品罪"]


def test_a_lecardv2_candidate_keeps_its_charges_and_articles_and_reads_a_term_when_the_text_has_one():
    candidate = {"pid": 901, "qw": "……判决如下：被告人戊某犯盗窃罪，判处有期徒刑六个月。", "fact": FACT, "reason": "本院认为……",
                 "charge": ["盗窃"], "article": [264, "67"]}
    [(_, row)] = lecard_convert(lines(candidate)).rows
    assert row["id"] == "lecardv2-901" and row["charges"] == ["盗窃罪"] and row["articles"] == [264, 67]
    assert row["term"]["months"] == 6


def test_records_that_cannot_be_converted_are_refused_by_line():
    data = lines(
        {"ridx": 1, "q": FACT, "crime": "诈骗罪"},  # crime must be a list
        {"id": 2, "query": "某某民事判决书……"},  # no criminal judgment title
        {"id": 3, "query": "壬某妨害公务一审刑事判决书……" + FACT},  # a charge the corpus does not know
        {"ajjbqk": FACT, "writId": "w3", "pjjg": "驳回上诉，维持原判。"},
        {"foo": 1},
    ) + b"{broken\n"
    converted = lecard_convert(data, known_charges=KNOWN)
    by_line = {e.line: e.reason for e in converted.errors}
    assert sorted(by_line) == [1, 2, 3, 4, 5, 6] and converted.rows == []
    assert "crime" in by_line[1] and "title" in by_line[2] and "no known charge" in by_line[3]
    assert "维持原判" in by_line[4] and "not a LeCaRD record" in by_line[5] and "invalid JSON" in by_line[6]


def test_lecard_files_are_detected():
    assert detect_format("query.json", lines({"path": "p", "ridx": 1, "q": FACT, "crime": ["诈骗罪"]})) == "lecard"
    assert detect_format("w1.json", json.dumps({"ajId": "a", "ajjbqk": FACT}, indent=1).encode()) == "lecard"
