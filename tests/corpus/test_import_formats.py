"""Importing each format into the real database: good files, malformed files, mixed good and bad
files with nothing written, duplicates merged, and the dry run that writes nothing."""

import datetime as dt
import json

import pytest

from apps.corpus.models import Article, ArticleVersion, ImportBatch, Precedent, PrecedentOutcome
from apps.corpus.selectors import corpus_counts
from apps.corpus.services.importing import ImportOptions, corpus_check, corpus_import
from tests.corpus.conftest import case, jsonl, statute
from tests.corpus.judgments import docx, judgment, pdf, single
from tests.corpus.test_cail import FACT, cail, lines

pytestmark = pytest.mark.django_db

LAW = "中华人民共和国刑法"


def run(data: bytes, name: str, **options) -> ImportBatch:
    return corpus_import(data=data, filename=name, options=ImportOptions(**options))


def facts(n: int) -> list[str]:
    places = ["超市", "商场", "车站", "小区", "医院", "学校", "工地", "仓库"]
    return [f"公诉机关指控：某年{i + 1}月{i + 3}日，被告人张{i}号在示范市{places[i % 8]}第{i}层，趁人不备窃取财物{i + 7}件，"
            f"价值人民币{(i + 1) * 137}元，后被当场抓获。" for i in range(n)]


# --- CAIL2018 -----------------------------------------------------------------------------------


def test_a_cail2018_file_imports_its_precedents_with_outcomes_and_article_links():
    run(jsonl(statute(264)), "statutes.jsonl")
    data = lines(*(cail(fact=f, criminals=[f"张{i}号"]) for i, f in enumerate(facts(3))))
    batch = run(data, "data_test.json", format="cail2018")
    assert batch.status == "published", batch.errors
    assert batch.format == "cail2018" and batch.kind == "case" and batch.counts["added"] == 3
    outcome = PrecedentOutcome.objects.get(precedent__defendants=["张1号"])
    assert outcome.term_months == 6 and [c.name for c in outcome.charges.all()] == ["盗窃罪"]
    assert [a.number for a in outcome.articles.all()] == [264]
    assert Precedent.objects.get(defendants=["张1号"]).fine == 1000


def test_a_malformed_cail2018_file_is_refused_by_line_and_writes_nothing():
    before = corpus_counts()
    batch = run(lines(cail(accusation=[])) + b"not json\n", "data.json", format="cail2018")
    assert batch.status == "failed"
    assert [e["line"] for e in batch.errors] == [1, 2]
    assert corpus_counts() == before


def test_a_mixed_cail2018_file_writes_nothing_unless_the_admin_publishes_without_the_refused_records():
    good = [cail(fact=f) for f in facts(4)]
    data = lines(good[0], good[1], cail(fact=facts(6)[5], term_of_imprisonment={"imprisonment": "六个月"}), good[2], good[3])
    batch = run(data, "mixed.json", format="cail2018")
    assert batch.status == "failed" and [e["line"] for e in batch.errors] == [3]
    assert Precedent.objects.count() == 0
    assert batch.report["counts"] == {"added": 4, "unchanged": 0, "merged": 0, "refused": 1}, "the report says what would have happened"

    kept = run(data, "mixed.json", format="cail2018", skip_refused=True)
    assert kept.status == "published" and kept.counts["added"] == 4 and kept.counts["refused"] == 1
    assert Precedent.objects.count() == 4
    assert kept.report["refused"][0]["line"] == 3


def test_cail2018_duplicates_are_merged_exactly_and_nearly_inside_the_file_and_against_the_corpus():
    stored_fact = ("公诉机关指控：2018年5月3日晚，被告人张某在示范市东城区一商场三楼的服装店内，趁店员整理货架之机，将柜台上"
                   "一部价值人民币四千二百元的手机揣入口袋后离开。次日，张某在其暂住处被民警抓获，手机已追回并发还被害人。"
                   "到案后，张某如实供述了上述事实，并表示认罪认罚。")
    other = facts(1)[0]
    run(jsonl(case("native-1", fact=stored_fact)), "cases.jsonl")
    near = stored_fact.replace("张某", "张某某").replace("四千二百元", "四千二百余元")  # another anonymisation of the case
    data = lines(cail(fact=stored_fact.replace("，", ",  ")),  # the stored fact with other punctuation and spaces
                 cail(fact=other), cail(fact=other + "。"),  # the same fact twice in the file
                 cail(fact=near))
    check = corpus_check(files=[("dups.json", data)], options=ImportOptions(format="cail2018"))
    assert check["counts"] == {"added": 1, "unchanged": 0, "merged": 3, "refused": 0}
    merged = {m["line"]: (m["how"], m["into"]) for m in check["merged"]}
    assert merged[1] == ("exact", "native-1") and merged[4][0] == "near" and merged[4][1] == "native-1"
    assert merged[3][0] == "exact" and merged[3][1].startswith("cail2018-")
    assert Precedent.objects.count() == 1, "the dry run wrote nothing"

    batch = run(data, "dups.json", format="cail2018")
    assert batch.status == "published" and batch.counts["added"] == 1 and batch.counts["merged"] == 3
    assert Precedent.objects.count() == 2
    stored = Precedent.objects.get(ext_id="native-1")
    assert [(d["how"], d["batch"]) for d in stored.extra["duplicates"]] == [("exact", batch.pk), ("near", batch.pk)]
    kept = Precedent.objects.exclude(ext_id="native-1").get()
    assert [d["how"] for d in kept.extra["duplicates"]] == ["exact"]

    again = run(data + lines(cail(fact=facts(3)[2])), "dups2.json", format="cail2018")
    assert (again.counts["added"], again.counts["unchanged"], again.counts["merged"]) == (1, 1, 3), \
        "a re-import finds them all again (the kept one by its id)"


def test_a_merged_record_with_other_charges_is_flagged_for_the_admin():
    run(jsonl(case("native-1", fact=facts(1)[0])), "cases.jsonl")
    report = corpus_check(files=[("x.json", lines(cail(fact=facts(1)[0], accusation=["抢劫"])))], options=ImportOptions(format="cail2018"))
    assert report["merged"][0]["labels_differ"] is True


# --- LeCaRD -------------------------------------------------------------------------------------


def test_a_folder_of_lecard_candidate_files_is_one_all_or_nothing_import():
    files = [(f"7/w{i}.json", json.dumps({"ajId": f"a{i}", "ajName": "…", "ajjbqk": fact, "writId": f"w{i}", "writName": "…",
                                          "pjjg": f"被告人张{i}号犯盗窃罪，判处拘役{i + 1}个月。", "qw": ""}, ensure_ascii=False).encode())
             for i, fact in enumerate(facts(3))]
    bad = ("7/w9.json", b'{"ajId": "a9", "ajjbqk": "x", "writId": "w9", "pjjg": ""}')
    failed = corpus_import(files=files + [bad], filename="candidates", options=ImportOptions(format="lecard"))
    assert failed.status == "failed" and failed.filename == "candidates/"
    assert [e["line"] for e in failed.errors] == [4] and failed.errors[0]["reason"].startswith("7/w9.json: ")
    assert Precedent.objects.count() == 0
    batch = corpus_import(files=files, filename="candidates", options=ImportOptions(format="lecard"))
    assert batch.status == "published" and batch.counts["added"] == 3
    assert sorted(Precedent.objects.values_list("ext_id", flat=True)) == ["lecard-w0", "lecard-w1", "lecard-w2"]
    assert PrecedentOutcome.objects.get(precedent__ext_id="lecard-w2").term_months == 3


def test_a_lecard_query_of_a_case_already_imported_from_cail_is_merged():
    fact = facts(1)[0]
    run(lines(cail(fact=fact)), "data.json", format="cail2018")
    batch = run(lines({"path": "p", "ridx": 12, "q": fact.replace("，", ","), "crime": ["盗窃罪"]}), "query.json")
    assert batch.format == "lecard" and batch.counts["merged"] == 1 and Precedent.objects.count() == 1


# --- judgments ------------------------------------------------------------------------------------


def test_a_judgment_is_published_only_once_its_parsed_outcome_is_confirmed():
    run(jsonl(statute(264)), "statutes.jsonl")
    unconfirmed = run(judgment().encode(), "j.txt", format="judgment")
    assert unconfirmed.status == "failed" and "confirmed" in unconfirmed.errors[0]["reason"]
    assert Precedent.objects.count() == 0
    batch = run(judgment().encode(), "j.txt", format="judgment", confirmed=True)
    assert batch.status == "published", batch.errors
    precedent = Precedent.objects.get()
    assert precedent.ext_id == "judgment-(2019)示0101刑初123号" and precedent.court_level == "basic"
    outcomes = list(precedent.outcomes.order_by("position"))
    assert [(o.defendant, o.term_kind, o.term_months, o.suspended) for o in outcomes] == [
        ("甲某", "有期徒刑", 18, False), ("乙某某", "拘役", 5, True)]
    assert [a.number for a in outcomes[0].articles.all()] == [264]
    assert sorted(outcomes[0].unresolved_articles) == [25, 52, 67, 72], "articles not in the corpus are kept as numbers"


def test_a_folder_of_judgments_in_txt_docx_and_pdf_is_checked_and_refuses_what_it_cannot_read():
    theft = single("被告人丁某犯盗窃罪，判处有期徒刑八个月，并处罚金人民币二千元。")
    fraud = single("被告人丁某犯诈骗罪，判处有期徒刑二年，缓刑三年。", number="（2020）示0102刑初8号",
                   facts="经审理查明：2020年4月，被告人丁某冒充银行职员，以调整信用卡额度为名骗取被害人人民币三万元，后被抓获归案。")
    acquittal = single("被告人丁某无罪。", number="（2020）示0102刑初9号",
                       facts="经审理查明：公诉机关指控被告人丁某盗窃他人财物，但现有证据不能证明丁某实施了该行为，指控的犯罪不能成立。")
    files = [("a.txt", theft.encode()), ("b.docx", docx(fraud)), ("c.pdf", pdf(acquittal)), ("d.pdf", b"%PDF-1.7 broken")]
    report = corpus_check(files=files, options=ImportOptions(format="judgment"))
    assert report["counts"]["added"] == 2 and report["needs_confirmation"] and not report["publishable"]
    refused = {r["line"]: r["reason"] for r in report["refused"]}
    assert sorted(refused) == [3, 4] and "acquits 丁某" in refused[3] and refused[4].startswith("d.pdf: unparseable")
    assert [n["outcomes"][0]["months"] for n in report["notes"]] == [8, 24]
    batch = corpus_import(files=files[:2], filename="judgments", options=ImportOptions(format="judgment", confirmed=True))
    assert batch.status == "published" and batch.counts["added"] == 2
    assert Precedent.objects.get(ext_id="judgment-(2020)示0102刑初8号").outcomes.get().suspended is True


def test_the_same_judgment_uploaded_again_as_another_file_type_is_merged():
    text = single("被告人丁某犯盗窃罪，判处有期徒刑八个月。")
    run(text.encode(), "a.txt", format="judgment", confirmed=True)
    again = run(docx(text), "a.docx", format="judgment", confirmed=True)
    assert again.status == "published" and again.counts == {"added": 0, "unchanged": 1, "merged": 0, "outcomes": 0,
                                                            "new_charge_names": 0}


# --- statute texts -----------------------------------------------------------------------------------

STATUTE = ("中华人民共和国刑法\n第二编 分则\n第五章 侵犯财产罪\n"
           "第二百六十四条　盗窃公私财物，数额较大的，处三年以下有期徒刑。\n"
           "第二百六十六条　诈骗公私财物，数额较大的，处三年以下有期徒刑。\n")
AMENDED = ("中华人民共和国刑法\n第二编 分则\n第五章 侵犯财产罪\n"
           "第二百六十四条　盗窃公私财物，数额较大的，或者多次盗窃、入户盗窃的，处三年以下有期徒刑。\n"
           "第二百六十四条之一　示例：新增的条文，自修正案施行之日起适用。\n"
           "第二百六十六条　诈骗公私财物，数额较大的，处三年以下有期徒刑。\n"
           "第二百六十七条　（删去）\n")


def test_an_amended_statute_text_adds_versions_that_supersede_the_ones_in_force():
    first = run(STATUTE.encode(), "刑法.txt", format="statute-txt", law_title=LAW)
    assert first.status == "published" and first.counts["added"] == 2
    check = corpus_check(files=[("刑法.txt", AMENDED.encode())],
                         options=ImportOptions(format="statute-txt", law_title=LAW, effective_date=dt.date(2021, 3, 1),
                                               version_label="刑法修正案（示例）"))
    assert check["counts"] == {"added": 2, "amended": 1, "unchanged": 1, "refused": 0}
    [amended] = check["amended"]
    assert amended["id"] == "第二百六十四条" and amended["valid_from"] == "2021-03-01"
    assert amended["supersedes"] == {"valid_from": None, "batch": first.pk}
    assert "+盗窃公私财物，数额较大的，或者多次盗窃、入户盗窃的" in amended["diff"]
    assert ArticleVersion.objects.count() == 2, "the dry run wrote nothing"

    batch = run(AMENDED.encode(), "刑法.txt", format="statute-txt", law_title=LAW, effective_date=dt.date(2021, 3, 1),
                version_label="刑法修正案（示例）")
    assert batch.status == "published" and batch.counts["amended"] == 1 and batch.counts["added"] == 2
    old, new = ArticleVersion.objects.filter(article__number=264, article__sub=0).order_by("pk")
    assert old.valid_to == dt.date(2021, 2, 28) and old.text.endswith("处三年以下有期徒刑。"), "never overwritten"
    assert new.supersedes == old and new.valid_from == dt.date(2021, 3, 1) and new.text_source == "刑法修正案（示例）"
    assert ArticleVersion.objects.get(article__number=264, article__sub=1).valid_from == dt.date(2021, 3, 1)
    assert ArticleVersion.objects.get(article__number=267).repealed is True
    assert ArticleVersion.objects.filter(article__number=266).count() == 1


def test_a_changed_statute_text_without_an_effective_date_is_refused_and_the_text_date_is_suggested():
    run(STATUTE.encode(), "刑法.txt", format="statute-txt", law_title=LAW)
    text = AMENDED + "本修正案自二〇二一年三月一日起施行。\n"
    batch = run(text.encode(), "刑法.txt", format="statute-txt", law_title=LAW)
    assert batch.status == "failed" and "effective date" in batch.errors[0]["reason"]
    assert any("2021-03-01" in hint for hint in batch.report["hints"])
    assert ArticleVersion.objects.count() == 2


def test_an_amendment_never_overwrites_a_version_from_the_same_or_a_later_day():
    run(STATUTE.encode(), "刑法.txt", format="statute-txt", law_title=LAW)
    run(AMENDED.encode(), "刑法.txt", format="statute-txt", law_title=LAW, effective_date=dt.date(2021, 3, 1))
    later = AMENDED.replace("入户盗窃的", "入户盗窃、扒窃的")
    refused = run(later.encode(), "刑法2.txt", format="statute-txt", law_title=LAW, effective_date=dt.date(2021, 3, 1))
    assert refused.status == "failed" and "never overwritten" in refused.errors[0]["reason"]
    accepted = run(later.encode(), "刑法2.txt", format="statute-txt", law_title=LAW, effective_date=dt.date(2023, 1, 1))
    assert accepted.status == "published" and accepted.counts["amended"] == 1
    chain = ArticleVersion.objects.filter(article__number=264, article__sub=0).order_by("pk")
    assert [v.supersedes_id for v in chain] == [None, chain[0].pk, chain[1].pk]


def test_a_malformed_statute_text_is_refused_by_line():
    batch = run("第二百六十六条　诈骗……\n第二百六十四条　盗窃……\n".encode(), "刑法.txt", format="statute-txt", law_title=LAW)
    assert batch.status == "failed" and batch.errors[0]["line"] == 2 and "must increase" in batch.errors[0]["reason"]
    assert run(b"no articles here", "x.txt", format="statute-txt", law_title=LAW).errors[0]["reason"] == "no article (第…条) found"
    assert Article.objects.count() == 0


# --- our own schema, detection ------------------------------------------------------------------------------


def test_a_well_formed_wrong_record_beside_a_json_error_is_reported_too():
    batch = run(jsonl(statute(264)) + b'{"number": NaN}\n' + jsonl(statute(266, text="")), "statutes.jsonl")
    assert batch.status == "failed" and sorted(e["line"] for e in batch.errors) == [2, 3]
    assert "text" in next(e["reason"] for e in batch.errors if e["line"] == 3)


def test_the_format_is_detected_and_an_ambiguous_document_is_refused_with_how_to_choose():
    assert run(lines(cail(fact=FACT)), "data.json").format == "cail2018"
    ambiguous = "示范市人民法院刑事判决书（附条文）\n第一条　示例条文。\n".encode()
    batch = run(ambiguous, "doc.txt")
    assert batch.status == "failed" and "could be a judgment or a statute" in batch.errors[0]["reason"]
    assert "choose it with --format" in batch.errors[0]["reason"]
    assert "neither a judgment" in run("一段普通的文字。".encode(), "note.txt").errors[0]["reason"]
