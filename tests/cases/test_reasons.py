"""Structured reasons rendered in the page language (apps/cases/reasons.py): every code the
pipeline writes has a sentence; an unknown code or unusable values fall back to the free text."""

import pytest
from django.utils import translation

from apps.cases.reasons import SENTENCES, judgment_render, reason_render, signals_render
from worker.agents import reasons


def test_every_code_has_a_sentence():
    missing = set(reasons.CODES) - set(SENTENCES)
    assert not missing, f"add a row to apps/cases/reasons.SENTENCES for {sorted(missing)}"


@pytest.mark.parametrize("why, words", [
    (reasons.why(reasons.ITEM_VERIFIER, p=0.3712, threshold=0.5, share=0.0, satisfied=False), "未表述该要件"),
    (reasons.why(reasons.ITEM_VERIFIER, p=0.71, threshold=0.5, share=0.4, satisfied=True), "表述了该要件"),
    (reasons.why(reasons.ITEM_FEATURE_MATCH, features=["秘密窃取", "入户"]), "秘密窃取、入户"),
    (reasons.why(reasons.ARTICLE_REJECTED, p=0.0132, threshold=0.35, supported=0, total=5,
                 signals={"chg_p": -1.2, "fact_share": 0.4}, learned=True), "不适用"),
    (reasons.why(reasons.ITEM_ANCHOR, word="扒窃"), "扒窃；要件的其余部分未经核对"),
    # all of an element's words in one sentence state it; two thirds of them are the reviewer's to check
    (reasons.why(reasons.ITEM_TERMS_IN_SENTENCE, share=1.0), "案件事实中有语句表述了该要件"),
    (reasons.why(reasons.ITEM_TERMS_IN_SENTENCE, share=0.6667), "用到了该要件 67 % 的词语；是否确实表述了该要件，由审核人核对"),
    (reasons.why(reasons.ITEM_QUANTITY_NOT_STATED, substances="鸦片", range="二百克以上不满一千克"), "未载明鸦片的数量"),
    (reasons.why(reasons.ITEM_PAST_CONVICTION), "曾因该项所列之罪被判刑"),
    (reasons.why(reasons.ITEM_REPEAT_NAMED, name="毒品再犯"), "案件事实称被告人系“毒品再犯”"),
    (reasons.why(reasons.ARTICLE_REPEAT, applies=True, shown=True, quote="曾因贩卖毒品罪被判处有期徒刑一年",
                 covered="第三百四十七条"), "从重处罚所针对的第三百四十七条适用"),
    (reasons.why(reasons.ARTICLE_REPEAT, applies=False, shown=False, quote="", covered=""), "未载明被告人曾因本条所列之罪被判刑"),
    (reasons.why(reasons.ARTICLE_REPEAT, applies=False, shown=True, quote="曾因贩卖毒品罪被判处", covered=""),
     "从重处罚所针对之罪的法条均不适用"),
    (reasons.why(reasons.ARTICLE_BEST_SUPPORTED, p=0.21, threshold=0.3, supported=1, total=4), "把握较低"),
    (reasons.why(reasons.ARTICLE_NOT_IN_FORCE, label="第一百三十三条之一", date="2010-01-01"), "第一百三十三条之一"),
    (reasons.why(reasons.PRUNED_BY_REVIEWER, reason="与本案无关"), "与本案无关"),
    (reasons.why(reasons.PRUNED_CASE, cause="charges"), "该判例的罪名均不由经核验的法条规定"),
    (reasons.why(reasons.PRUNED_CASE, cause="articles"), "该判例引用的法条均未通过核验"),
    (reasons.why(reasons.PRUNED_CASE), "该判例的法条和罪名均未通过核验"),
    (reasons.why(reasons.ARTICLE_UNIT, applies=True, shown=True, quote="被告单位某公司", covered="第一百四十条"),
     "本单位犯罪条款涵盖第一百四十条"),
    (reasons.why(reasons.ARTICLE_UNIT, applies=False, shown=False, quote="", covered="第一百四十条"), "未显示犯罪由单位实施"),
    (reasons.why(reasons.ARTICLE_UNIT, applies=False, shown=True, quote="被告单位", covered=""), "范围内没有适用的法条"),
    (reasons.why(reasons.ARTICLE_DEFINITION, applies=True, shown=True, term="毒品", quote="海洛因",
                 covered="第三百四十七条"), "适用的第三百四十七条使用了该术语"),
    (reasons.why(reasons.ARTICLE_DEFINITION, applies=False, shown=True, term="毒品", quote="海洛因", covered=""),
     "没有适用的法条使用“毒品”"),
    (reasons.why(reasons.ARTICLE_DEFINITION, applies=False, shown=False, term="毒品", quote="", covered="第三百四十七条"),
     "未显示本条所称的“毒品”"),
])
def test_sentences_are_in_the_page_language_with_scores_kept_for_the_details(compiled_catalogs, why, words):
    with translation.override("zh-hans"):
        out = reason_render(why, "verifier p = 0.37 < threshold 0.50")
    assert out["known"] and words in out["text"]
    assert "verifier p" not in out["text"] and "threshold" not in out["text"], "no formula in the legal reading"
    if "p" in why:
        assert out["detail"], "the score goes to the analysis details"
    if why.get("signals"):
        assert "罪名分类器 -1.20" in out["detail"] and "同罪名判例 +0.40" in out["detail"]
        assert "chg_p" not in out["detail"] and "fact_share" not in out["detail"], "readable labels, not feature names"


def test_signals_read_as_the_kinds_of_evidence_strongest_first(compiled_catalogs):
    signals = {"vote_sem": 0.3, "legal texts (Rule graph)": -0.9, "chg_p": 0.5, "chg_rank": 0.25, "new_signal": 0.1}
    with translation.override("en"):
        assert signals_render(signals) == ("statute text similarity -0.90、charge classifier +0.75、"
                                           "precedents (semantic path) +0.30、new_signal +0.10")
    with translation.override("zh-hans"):
        assert signals_render({"R_sem": 0.3, "art_path": -0.2}) == "判例（语义检索路径） +0.30、法条检索路径 -0.20"
    assert signals_render({}) == signals_render(None) == "—"


def test_an_article_decision_without_weights_or_scores_keeps_its_sentence(compiled_catalogs):
    with translation.override("en"):
        unweighted = reason_render(reasons.why(reasons.ARTICLE_APPLIES, p=0.8, threshold=0.5, supported=2, total=3,
                                               signals={}, learned=False), "free")
        old = reason_render(reasons.why(reasons.ARTICLE_NO_ELEMENT, total=4), "free")
    assert unweighted["known"] and "carried by" not in unweighted["detail"] and "0.80" in unweighted["detail"]
    assert old["known"] and old["text"] == "Does not apply: none of its 4 elements is shown by the facts."


def test_english_and_the_models_own_words():
    with translation.override("en"):
        out = reason_render(reasons.why(reasons.ITEM_MODEL, verdict=True), "事实载明被告人秘密窃取")
    assert out["text"] == "The language model finds this element in the facts." and out["quote"] == "事实载明被告人秘密窃取"


def test_an_unknown_code_or_broken_values_fall_back_to_the_free_text():
    assert reason_render({"code": "verifier.learned_signal", "x": 1}, "free text")["text"] == "free text"
    assert reason_render(None, "free text") == {"text": "free text", "detail": "", "quote": "", "known": False}
    broken = reason_render({"code": reasons.ARTICLE_NOT_IN_FORCE}, "fallback")  # no label, no date
    assert broken["text"] == "fallback" and not broken["known"]


@pytest.mark.parametrize("why, words", [
    ([reasons.why(reasons.JUDGMENT_NOTHING_VERIFIED, label="第二百六十七条", shown=2, total=4, p=0.27)],
     "可能性最大的第二百六十七条，4 项要件中有 2 项有表述，但其得分低于核验智能体的阈值"),
    ([reasons.why(reasons.JUDGMENT_NOTHING_VERIFIED, label="第二百六十三条", shown=0, total=3, p=0.05)],
     "其 3 项要件在案件事实中均无表述"),
    ([reasons.why(reasons.JUDGMENT_NOTHING_VERIFIED)], "核验智能体未核验通过任何候选法条。"),
    ([reasons.why(reasons.JUDGMENT_NO_CANDIDATE)], "检索智能体未找到候选法条"),
    ([reasons.why(reasons.JUDGMENT_REVIEWER_LEFT_NONE)], "按审核人的修改，没有适用的法条。"),
    ([reasons.why(reasons.JUDGMENT_TERM_CAPPED, months=6, predicted=12, basis="maximum")],
     "刑期以经核验法条的法定最高刑 6 个月为限；此前估计的刑期为 12 个月"),
    ([reasons.why(reasons.JUDGMENT_TERM_CAPPED, months=240, predicted=310, basis="combined")], "数罪并罚（第六十九条）"),
    ([reasons.why(reasons.JUDGMENT_TERM_CAPPED, months=300, predicted=400, basis="remaining")], "与余刑并罚"),
    ([reasons.why(reasons.JUDGMENT_TERM_RAISED, months=36, predicted=20)], "刑期提高至经核验法条规定的最低刑 36 个月"),
    ([reasons.why(reasons.JUDGMENT_TERM_RAISED, months=178, predicted=40, basis="remaining")],
     "刑期提高至 178 个月，即案件事实载明的余刑"),
    ([reasons.why(reasons.JUDGMENT_DEATH_NOT_PROVIDED, life=True)], "改为无期徒刑"),
    ([reasons.why(reasons.JUDGMENT_SEPARATE_ACT, charge="危险驾驶罪", article="第一百三十三条之一", p=0.93,
                  quote="另查明，2020年2月3日晚，被告人李某饮酒后驾驶")],
     "另一部分事实（“另查明，2020年2月3日晚，被告人李某饮酒后驾驶…”）最可能构成危险驾驶罪，且第一百三十三条之一已经核验智能体核验通过"),
    ([reasons.why(reasons.JUDGMENT_NOT_CITED, key="140", article="第一百四十条", kind="concurrence",
                  instead="第一百四十一条")], "引用处罚较重的第一百四十一条"),
    ([reasons.why(reasons.JUDGMENT_NOT_CITED, key="262", article="第二百六十二条", kind="same_charge",
                  charge="盗窃罪", instead="第二百六十四条")], "其罪名盗窃罪已依第二百六十四条引用"),
    ([reasons.why(reasons.JUDGMENT_NOT_CITED, key="345-2", article="第三百四十五条第三款", kind="sibling",
                  instead="第三百四十五条第二款")], "已引用同一法条的另一部分第三百四十五条第二款"),
    ([reasons.why(reasons.JUDGMENT_NOT_CITED, key="119", article="第一百一十九条", kind="no_result",
                  instead="第一百一十八条")], "引用未造成该后果的同一犯罪的第一百一十八条"),
    ([reasons.why(reasons.JUDGMENT_NOT_CITED, key="357", article="第三百五十七条", kind="no_companion", share=0.2)],
     "所定罪名的先例中引用该条的占20 %，需达到一半"),
    ([reasons.why(reasons.JUDGMENT_UNRESOLVED, citations=[4, 7])], "[4] [7]"),
    ([reasons.why(reasons.JUDGMENT_UNRESOLVED, citations=[])], "未引用任何证据"),
    ([reasons.why(reasons.JUDGMENT_STRAY_CHARGES, charges=["抢劫罪", "盗窃罪"])], "抢劫罪、盗窃罪"),
    ([reasons.why(reasons.JUDGMENT_NOT_IN_FORCE, articles=["第一百三十三条之一"], date="2010-01-01")], "2010-01-01"),
    # two reasons: one line, in order
    ([reasons.why(reasons.JUDGMENT_CLASSIFIER_ONLY), reasons.why(reasons.JUDGMENT_TERM_CAPPED, months=6, predicted=9,
                                                                  basis="maximum")], "评测基线"),
])
def test_a_judgments_reasons_read_in_the_page_language(compiled_catalogs, why, words):
    english = "the Auditor verified no candidate article; the most probable, 267, was not verified: P = 0.27"
    with translation.override("zh-hans"):
        text = judgment_render(why, english)
    assert words in text and "Auditor" not in text and "P =" not in text


def test_a_judgment_without_codes_or_with_an_unknown_one_keeps_the_pipelines_message():
    assert judgment_render([], "classifier_only baseline") == "classifier_only baseline"
    assert judgment_render(None, "") == ""
    known_and_unknown = [reasons.why(reasons.JUDGMENT_NO_CHARGE), {"code": "judgment.future", "x": 1}]
    assert judgment_render(known_and_unknown, "free text") == "free text"
