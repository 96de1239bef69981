"""F5: the term stays within what the verified articles provide (statutory ranges read from the texts)."""

import datetime as dt
import json
from pathlib import Path

import pytest

from worker.agents import reasons
from worker.agents.graph_types import Term
from worker.agents.models.sentencing import (COMBINED, MAXIMUM, Ceiling, StatutoryRange, cap_term, ceiling_for,
                                              statutory_range)
from worker.agents.stages.verification import verify_judgment
from worker.agents.testing.fixtures import tiny_legal_graph
from worker.agents.types import Judgment, Status
from worker.agents.wording import term_wording

DEMO_STATUTES = Path(__file__).resolve().parents[2] / "apps" / "corpus" / "demo" / "statutes.jsonl"

# Read off the texts of our demo statutes by hand: (min months, max months, life, death).
EXPECTED = {
    "133": (1, 180, False, False),  # 三年以下或者拘役 … 七年以上有期徒刑
    "133-1": (1, 6, False, False),  # 处拘役
    "232": (36, 180, True, True),
    "234": (1, 180, True, True),
    "263": (36, 180, True, True),
    "266": (0, 180, True, False),  # 单处罚金
    "267": (0, 120, False, False),
    "274": (0, 180, False, False),
    "275": (0, 84, False, False),  # 拘役或者罚金: a fine alone
    "293": (1, 120, False, False),
    "303": (1, 36, False, False),
    "347": (1, 180, True, True),  # 处十五年有期徒刑、无期徒刑或者死刑
    "348": (1, 180, True, False),
    "354": (1, 36, False, False),
}


def _demo_articles():
    latest = {}
    for line in DEMO_STATUTES.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("charges"):
            latest[record["key"]] = record["text"]  # later versions follow earlier ones
    return latest


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_the_range_of_every_demo_statute_matches_its_text(key):
    found = statutory_range(_demo_articles()[key])
    assert (found.min_months, found.max_months, found.life, found.death) == EXPECTED[key]


@pytest.mark.parametrize(("text", "expected"), [
    ("处五年以下有期徒刑或者拘役。", (1, 60, False, False)),
    ("处六个月以下有期徒刑。", (6, 6, False, False)),
    ("处十年以上有期徒刑或者无期徒刑。", (120, 180, True, False)),
    ("情节严重的，处二年以上七年以下有期徒刑，并处罚金。", (24, 84, False, False)),
    ("处三年以下有期徒刑、拘役或者管制，并处或者单处罚金。", (0, 36, False, False)),
    ("携带管制刀具进入公共场所，情节严重的，处一年以下有期徒刑。", (6, 12, False, False)),  # 管制刀具 is no penalty
    ("处死刑、无期徒刑或者十年以上有期徒刑。", (120, 180, True, True)),
])
def test_written_penalty_phrases(text, expected):
    found = statutory_range(text)
    assert (found.min_months, found.max_months, found.life, found.death) == expected


@pytest.mark.parametrize("text", ["依照前款的规定处罚。", "依照本法第二百六十四条的规定定罪处罚。", "为了惩罚犯罪，保护人民，制定本法。"])
def test_an_article_without_a_penalty_of_its_own_has_no_range(text):
    assert statutory_range(text) is None


def test_the_ceiling_of_one_charge_is_its_maximum_and_several_charges_follow_article_69():
    theft, fraud, gambling = StatutoryRange(0, 120), StatutoryRange(0, 180, life=True), StatutoryRange(1, 36)
    assert ceiling_for({"盗窃罪": [theft]}) == Ceiling(120, False, False, "statutory maximum")
    assert ceiling_for({"盗窃罪": [theft], "赌博罪": [gambling]}).months == 156  # the sum, below 20 years
    assert ceiling_for({"盗窃罪": [theft], "诈骗罪": [fraud]}).months == 240  # 300 months: capped at 20 years
    three = ceiling_for({"盗窃罪": [fraud], "诈骗罪": [fraud], "赌博罪": [theft]})
    assert three.months == 300 and three.life  # a sum of 40 years: capped at 25
    assert ceiling_for({"盗窃罪": [theft], "赌博罪": [None]}) is None  # one charge's range unknown: no check
    assert ceiling_for({}) is None


@pytest.mark.parametrize(("term", "ceiling", "expected"), [
    (Term(months=30), Ceiling(120, False, False, "x"), Term(months=30)),
    (Term(months=0), Ceiling(6, False, False, "x"), Term(months=0)),
    (Term(months=121), Ceiling(120, False, False, "x"), Term(months=120)),
    (Term(life=True), Ceiling(120, False, False, "x"), Term(months=120)),
    (Term(life=True), Ceiling(180, True, False, "x"), Term(life=True)),
    (Term(death=True), Ceiling(180, True, False, "x"), Term(life=True)),
    (Term(death=True), Ceiling(120, False, False, "x"), Term(months=120)),
    (Term(death=True), Ceiling(180, True, True, "x"), Term(death=True)),
])
def test_a_term_is_brought_within_the_ceiling_and_says_so(term, ceiling, expected):
    capped, note, why = cap_term(term, ceiling)
    assert capped == expected
    assert bool(note) == (capped != term) == bool(why)


def test_a_capped_term_gives_its_reason_as_a_code_with_its_values():
    _term, _note, why = cap_term(Term(months=12), Ceiling(6, False, False, MAXIMUM))
    assert why == {"code": reasons.JUDGMENT_TERM_CAPPED, "months": 6, "predicted": 12, "basis": "maximum"}
    _term, _note, why = cap_term(Term(life=True), Ceiling(240, False, False, COMBINED))
    assert why == {"code": reasons.JUDGMENT_LIFE_NOT_PROVIDED, "months": 240, "basis": "combined"}


def _theft_bundle():
    from tests.agents.test_pipeline import THEFT, run
    from worker.agents.types import CaseInput

    return run(tiny_legal_graph(), CaseInput(facts=THEFT, defendants=("张某",), offence_date=dt.date(2018, 3, 1)))


@pytest.mark.parametrize("term", [Term(months=200), Term(life=True), Term(death=True)])
def test_the_verifier_caps_a_term_beyond_the_verified_article_and_records_it(term):
    bundle = _theft_bundle()
    assert bundle.judgment.status == Status.JUDGED and bundle.judgment.article_keys == ["264"]
    beyond = Judgment(**{**bundle.judgment.__dict__, "term": term, "message": ""})
    checked = verify_judgment(beyond, bundle.audit, bundle.case)
    # Article 264 as in force in 2018 (tiny graph): at most ten years, no life, no death.
    assert checked.status == Status.JUDGED
    assert checked.term == Term(months=120)
    assert "120 months" in checked.message
    assert checked.why[-1]["code"] in {reasons.JUDGMENT_TERM_CAPPED, reasons.JUDGMENT_LIFE_NOT_PROVIDED,
                                       reasons.JUDGMENT_DEATH_NOT_PROVIDED} and checked.why[-1]["months"] == 120
    # the term basis keeps how the term was made and says where it was capped
    assert checked.term_basis["capped"] == {"months": 120, "life": False, "death": False}
    assert checked.term_basis["term"] == bundle.judgment.term_basis["term"]


ESCAPE = ("被告人刘某因犯盗窃罪被判处有期徒刑五年，在某监狱服刑期间，趁管教民警不备翻越围墙脱逃，"
          "后被抓获。")


def test_an_offence_committed_while_serving_a_sentence_is_a_sentencing_fact_with_its_sentence():
    from worker.agents.models.sentencing import SERVING_LABEL, circumstances_shown, sentencing_features

    assert sentencing_features(ESCAPE, charges=1, ranges=[], standards={})["serving"] == 1.0
    assert sentencing_features("被告人刘某盗窃手机一部。", charges=1, ranges=[], standards={})["serving"] == 0.0
    shown = {c["label"]: c["quote"] for c in circumstances_shown(ESCAPE)}
    assert shown[SERVING_LABEL].startswith("被告人刘某因犯盗窃罪") and "服刑期间" in shown[SERVING_LABEL]


def test_a_term_combined_with_the_remaining_sentence_is_capped_by_article_69_not_by_the_article():
    """Article 71: a new crime while serving a sentence is punished together with what remained of the old one, so the
    record's term may pass the new article's maximum; Article 69's cap (25 years at most) still holds."""
    from worker.agents.models.sentencing import circumstances_shown

    bundle = _theft_bundle()
    basis = dict(bundle.judgment.term_basis, circumstances=circumstances_shown(ESCAPE))
    long = Judgment(**{**bundle.judgment.__dict__, "term": Term(months=200), "message": "", "term_basis": basis})
    checked = verify_judgment(long, bundle.audit, bundle.case)
    assert checked.term == Term(months=200) and checked.why == [], "above 264's ten years, within Article 69"
    beyond = Judgment(**{**long.__dict__, "term": Term(months=400)})
    checked = verify_judgment(beyond, bundle.audit, bundle.case)
    assert checked.term == Term(months=300)
    assert checked.why == [{"code": reasons.JUDGMENT_TERM_CAPPED, "months": 300, "predicted": 400,
                            "basis": "remaining"}]
    # without the circumstance, the article's maximum holds
    plain = Judgment(**{**bundle.judgment.__dict__, "term": Term(months=200), "message": ""})
    assert verify_judgment(plain, bundle.audit, bundle.case).term == Term(months=120)


def test_the_floor_of_several_charges_is_the_highest_of_their_minimums_and_a_ground_to_go_below_is_named():
    from worker.agents.models.sentencing import floor_for, raise_term, reduction_shown

    robbery, theft = StatutoryRange(36, 120), StatutoryRange(0, 120)
    assert floor_for({"抢劫罪": [robbery], "盗窃罪": [theft]}) == 36
    assert floor_for({"抢劫罪": [robbery, StatutoryRange(60, 180)]}) == 36, "the lowest clause of the charge's articles"
    assert floor_for({"抢劫罪": [None]}) is None and floor_for({}) is None
    assert raise_term(Term(months=20), 36)[0] == Term(months=36)
    assert raise_term(Term(months=40), 36) == (Term(months=40), "", {})
    assert raise_term(Term(life=True), 36)[0] == Term(life=True)
    assert raise_term(Term(months=3), None)[0] == Term(months=3)
    assert reduction_shown({"circumstances": [{"label": "自首", "quote": ""}]})
    assert not reduction_shown({"circumstances": [{"label": "如实供述", "quote": ""}, {"label": "取得谅解", "quote": ""}]})


def test_the_grounds_the_lexicon_does_not_name_are_shown_in_the_basis_and_keep_a_term_below_the_range():
    from worker.agents.models.sentencing import circumstances_shown, reduction_shown

    facts = "被告人张某持刀闯入被害人家中欲实施抢劫，见被害人年迈，自动放弃犯罪离开。案发后被告人如实供述。"
    shown = circumstances_shown(facts)
    assert {"label": "犯罪中止", "quote": "被告人张某持刀闯入被害人家中欲实施抢劫，见被害人年迈，自动放弃犯罪离开。",
            "ground_only": True, "article": "第二十四条"} in shown
    assert not any(c.get("ground_only") for c in shown if c["label"] != "犯罪中止"), "the model reads the others"
    assert reduction_shown({"circumstances": shown})
    assert reduction_shown({"circumstances": circumstances_shown("经鉴定，被告人李某的行为属防卫过当。")})
    assert not reduction_shown({"circumstances": circumstances_shown("被告人王某持刀抢劫被害人现金500元，到案后如实供述。")})


def test_each_circumstance_names_the_article_that_provides_for_it_where_there_is_one():
    from worker.agents.models.sentencing import circumstances_shown

    facts = "被告人张某系累犯。案发后张某主动投案自首，并赔偿被害人损失，取得谅解。"
    articles = {c["label"]: c.get("article") for c in circumstances_shown(facts)}
    assert articles["累犯"] == "第六十五条" and articles["自首"] == "第六十七条"
    assert articles["赔偿"] is None and articles["取得谅解"] is None, "an interpretation's matter names no article"
    stopped = circumstances_shown("被告人李某在犯罪过程中自动放弃犯罪。")
    assert {"label": "犯罪中止", "quote": "被告人李某在犯罪过程中自动放弃犯罪。", "ground_only": True,
            "article": "第二十四条"} in stopped


def test_a_term_below_the_articles_minimum_is_raised_unless_the_facts_show_a_ground_to_go_below_it():
    """Article 63: a sentence below the statutory range needs a ground the law gives (attempt, accessory, surrender,
    meritorious service, a minor); confession and compensation lighten a sentence within it."""
    bundle = _theft_bundle()
    for a in bundle.audit.verified:  # 264 as a robbery article would read: at least three years
        a.text = "以暴力、胁迫或者其他方法抢劫公私财物的，处三年以上十年以下有期徒刑，并处罚金。"
    basis = dict(bundle.judgment.term_basis, circumstances=[{"label": "如实供述", "quote": "到案后如实供述。"}])
    proposed = term_wording(bundle.judgment.term.months)
    assert f"建议刑期：{proposed}" in bundle.judgment.reasoning
    low = Judgment(**{**bundle.judgment.__dict__, "term": Term(months=20), "message": "", "term_basis": basis,
                      "reasoning": bundle.judgment.reasoning.replace(proposed, "有期徒刑一年八个月")})
    checked = verify_judgment(low, bundle.audit, bundle.case)
    assert checked.term == Term(months=36)
    assert checked.term_basis["raised"] == {"months": 36, "life": False, "death": False}
    assert checked.why == [{"code": reasons.JUDGMENT_TERM_RAISED, "months": 36, "predicted": 20}]
    assert "raised to 36 months" in checked.message
    assert "建议刑期：有期徒刑三年。" in checked.reasoning and "一年八个月" not in checked.reasoning, \
        "the reasoning proposes the term the judgment states"
    surrendered = dict(basis, circumstances=[*basis["circumstances"], {"label": "自首", "quote": "主动投案。"}])
    kept = verify_judgment(Judgment(**{**low.__dict__, "term_basis": surrendered}), bundle.audit, bundle.case)
    assert kept.term == Term(months=20) and kept.why == [] and "raised" not in kept.term_basis


# Our wording of an amount-graded article, in the statutes' phrasing.
GRADED = ("盗窃公私财物，数额较大的，处三年以下有期徒刑、拘役或者管制，并处或者单处罚金；数额巨大或者有其他严重情节的，"
          "处三年以上十年以下有期徒刑，并处罚金；数额特别巨大或者有其他特别严重情节的，处十年以上有期徒刑或者无期徒刑，"
          "并处罚金或者没收财产。")


def test_the_clause_of_an_amount_tier_gives_the_least_term_for_that_tier():
    from worker.agents.models.sentencing import tier_floor

    assert [tier_floor([GRADED], t) for t in ("数额较大", "数额巨大", "数额特别巨大")] == [0, 36, 120]
    # a tier bound to a further condition is not the amount alone; two tiers in a clause are not read
    assert tier_floor(["逃避缴纳税款数额巨大并且占应纳税额百分之三十以上的，处三年以上七年以下有期徒刑。"], "数额巨大") is None
    assert tier_floor(["数额巨大或者数额特别巨大的，处五年以上有期徒刑。"], "数额巨大") is None
    # the tier of another quantity than the value taken: the facts' largest sum is often the invoices' total
    assert tier_floor(["虚开的税款数额较大或者有其他严重情节的，处三年以上十年以下有期徒刑。"], "数额较大") is None
    # of several clauses naming the tier, the lowest: a paragraph for special offenders raises no ordinary one
    special = "数额巨大的，处三年以上十年以下有期徒刑；工作人员犯前款罪，数额巨大或者有其他严重情节的，处十年以上有期徒刑。"
    assert tier_floor([special], "数额巨大") == 36
    assert tier_floor(["以暴力、胁迫或者其他方法抢劫公私财物的，处三年以上十年以下有期徒刑。"], "数额巨大") is None


LISTED = ("以暴力、胁迫或者其他方法抢劫公私财物的，处三年以上十年以下有期徒刑，并处罚金；有下列情形之一的，处十年以上有期徒刑、"
          "无期徒刑或者死刑，并处罚金或者没收财产：（一）入户抢劫的；（二）多次抢劫或者抢劫数额巨大的；（三）抢劫致人重伤、死亡的。"
          "犯前款罪数额较大的，另处罚金。")


def test_a_tier_named_in_a_list_of_circumstances_takes_the_penalty_of_the_lists_head():
    """Articles 170 and 263 name the tier in an item of a list ("有下列情形之一的，处十年以上有期徒刑…：…（二）…抢劫数额巨大的"):
    the item has no penalty of its own, the list's head gives it. A clause after the list is not one of its items."""
    from worker.agents.models.sentencing import tier_floor

    assert tier_floor([LISTED], "数额巨大") == 120
    assert tier_floor([LISTED], "数额较大") is None, "after the list: the clause's own words, which give no term"
    unlisted = LISTED.replace("（二）", "")
    assert tier_floor([unlisted], "数额巨大") is None, "not an item of the list"


def _judged_under(text: str, *, months: int):
    """facts -> the verified judgment of the tiny graph's theft with its article's text replaced by ``text`` and a
    proposed term of ``months``, its basis read from the facts."""
    from worker.agents.models.sentencing import term_basis

    bundle = _theft_bundle()
    for a in bundle.audit.verified:
        a.text = text

    def judged(facts: str):
        basis = term_basis(facts, [("264", "第二百六十四条", text)], {}, model=Term(months=months), precedent_months=[],
                           share=0.4, term=Term(months=months))
        low = Judgment(**{**bundle.judgment.__dict__, "term": Term(months=months), "message": "", "term_basis": basis})
        return verify_judgment(low, bundle.audit, bundle.case)

    return judged


# The statutes' phrasing of an assault graded by its harm, and of a negligent killing with a lighter case.
ASSAULT = ("故意伤害他人身体的，处三年以下有期徒刑、拘役或者管制。犯前款罪，致人重伤的，处三年以上十年以下有期徒刑；致人死亡或者以"
           "特别残忍手段致人重伤造成严重残疾的，处十年以上有期徒刑、无期徒刑或者死刑。")


def test_the_clause_of_a_harm_gives_the_least_term_for_it_unless_the_article_has_a_lighter_case():
    from worker.agents.models.sentencing import harm_floor

    # of the clauses naming serious injury (the second names it only with a cruel means), the lowest
    assert harm_floor([ASSAULT], ["致人重伤"]) == (36, "致人重伤")
    assert harm_floor([ASSAULT], ["自首", "致人重伤"]) == (36, "致人重伤")
    assert harm_floor([LISTED], ["致人重伤"]) == (120, "致人重伤"), "an item of a list takes the list's head"
    # a clause naming the harm in the article's base penalty, or a lighter case of the article, sets no floor above it
    traffic = ("违反交通运输管理法规，因而发生重大事故，致人重伤、死亡或者使公私财产遭受重大损失的，处三年以下有期徒刑或者拘役；"
               "因逃逸致人重伤的，处七年以上有期徒刑。")
    assert harm_floor([traffic], ["致人重伤"])[0] < 6
    assert harm_floor(["过失致人重伤的，处三年以上七年以下有期徒刑；情节较轻的，处三年以下有期徒刑。"], ["致人重伤"])[0] < 36
    assert harm_floor([GRADED], ["致人重伤"]) is None, "no clause names it"
    assert harm_floor([ASSAULT], ["多次", "自首"]) is None, "not a harm"
    # a death sets none: the lexicon's "死亡" is any death the facts tell (out of fold, 20 of 36 raised terms held)
    assert harm_floor([ASSAULT], ["致人死亡"]) is None


def test_a_harm_its_article_grades_raises_a_single_charges_term_to_that_clauses_minimum():
    """Corpus out of fold (docs/RESULTS.md, twenty-seventh round): an assault whose facts show a serious injury is
    punished from three years (Article 234), unless a ground for going below the range is shown."""
    judged = _judged_under(ASSAULT, months=20)
    injured = judged("被告人张某持木棍击打被害人李某头部，致李某重伤二级。")
    assert injured.term == Term(months=36) and injured.term_basis["raised_harm"] == "致人重伤"
    assert injured.why == [{"code": reasons.JUDGMENT_TERM_RAISED, "months": 36, "predicted": 20, "harm": "致人重伤"}]
    assert "minimum for the harm 致人重伤" in injured.message
    assert judged("被告人张某持木棍击打被害人李某头部，致李某轻伤二级。").term == Term(months=20)
    surrendered = judged("被告人张某持木棍击打被害人李某头部，致李某重伤二级。案发后张某主动投案。")
    assert surrendered.term == Term(months=20) and "raised" not in surrendered.term_basis


# Our wording of the weights of Article 347 (the demo's), and of the statutes' list form with opium beside.
TRAFFICKING = ("走私、贩卖、运输、制造毒品的，不论数量多少，均应追究刑事责任。涉及海洛因或者甲基苯丙胺五十克以上的，处十五年有期徒刑、"
               "无期徒刑或者死刑，并处没收财产；十克以上不满五十克的，处七年以上有期徒刑，并处罚金；不满十克的，处三年以下有期徒刑、"
               "拘役或者管制，并处罚金。")
TRAFFICKING_LISTED = ("贩卖毒品，有下列情形之一的，处十五年有期徒刑、无期徒刑或者死刑：（一）贩卖鸦片一千克以上、海洛因或者甲基苯丙胺"
                      "五十克以上的；（二）武装掩护贩卖毒品的。贩卖鸦片二百克以上不满一千克、海洛因或者甲基苯丙胺十克以上不满五十克的，"
                      "处七年以上有期徒刑，并处罚金。")


def test_the_clause_for_a_weight_of_heroin_or_methamphetamine_gives_the_least_term_for_it():
    from worker.agents.models.sentencing import weight_floor

    for text in (TRAFFICKING, TRAFFICKING_LISTED):
        assert [weight_floor([text], g) for g in (3, 10, 30, 50, 1200)] == [None, 84, 84, 180, 180], text
    assert weight_floor([GRADED], 60) is None, "no clause grades these drugs"
    # opium's weights are not heroin's: 300 grams of heroin are not "鸦片二百克以上不满一千克"
    assert weight_floor(["非法持有鸦片二百克以上不满一千克的，处三年以下有期徒刑。"], 300) is None


def test_the_drug_weight_is_the_one_a_seizure_or_a_test_states():
    """Article 357: the quantity verified. A purchase the facts narrate is not a weight established (found on the
    development split: "购买了冰毒10克" where 1.23 grams were seized and tested)."""
    from worker.agents.models.sentencing import drug_weight

    bought = "被告人宋某从他人处购买了冰毒10克后分装贩卖。民警从其住处查获白色晶体，经鉴定检出甲基苯丙胺成分。"
    assert drug_weight(bought) is None
    seized = "民警从其住处查获甲基苯丙胺52.5克、海洛因3克。经鉴定，上述毒品均检出毒品成分。另查获冰毒1.2千克。"
    assert drug_weight(seized) == {"grams": 1200, "text": "冰毒1.2千克"}
    assert drug_weight("民警当场查获冰毒3.5克。") == {"grams": 3.5, "text": "冰毒3.5克"}


def test_a_weight_its_article_grades_raises_a_single_charges_term_to_that_clauses_minimum():
    judged = _judged_under(TRAFFICKING, months=40)
    sold = judged("被告人张某贩卖毒品，民警当场查获甲基苯丙胺52.5克。")
    assert sold.term_basis["drug"] == {"grams": 52.5, "text": "甲基苯丙胺52.5克"}
    assert sold.term == Term(months=180) and sold.term_basis["raised_drug"] is True
    assert sold.why == [{"code": reasons.JUDGMENT_TERM_RAISED, "months": 180, "predicted": 40, "grams": 52.5}]
    assert "minimum for 52.5 grams of heroin or methamphetamine" in sold.message
    assert judged("被告人张某贩卖毒品，民警当场查获甲基苯丙胺5克。").term == Term(months=40)
    helped = judged("被告人张某贩卖毒品，民警当场查获甲基苯丙胺52.5克。张某系从犯。")
    assert helped.term == Term(months=40) and "raised" not in helped.term_basis


def test_an_amount_that_reaches_a_tier_everywhere_raises_a_single_charges_term_to_that_tiers_minimum():
    from worker.agents.models.sentencing import term_basis
    from worker.agents.stages.auditor.amounts import Standard

    bundle = _theft_bundle()
    for a in bundle.audit.verified:
        a.text = GRADED
    standards = {"数额较大": Standard("数额较大", 1000, "a", everywhere=3000),
                 "数额巨大": Standard("数额巨大", 30000, "b", everywhere=100000)}
    article = ("264", "第二百六十四条", GRADED)

    def judged(facts: str, circumstances=None):
        basis = term_basis(facts, [article], standards, model=Term(months=20), precedent_months=[], share=0.4,
                           term=Term(months=20))
        if circumstances is not None:
            basis["circumstances"] = circumstances
        low = Judgment(**{**bundle.judgment.__dict__, "term": Term(months=20), "message": "", "term_basis": basis})
        return verify_judgment(low, bundle.audit, bundle.case)

    everywhere = judged("被告人张某窃得现金人民币12万元。")
    assert everywhere.term_basis["amount"]["everywhere"] == "数额巨大"
    assert everywhere.term_basis["amount"]["everywhere_standard"] == "10万元"
    assert everywhere.term == Term(months=36) and everywhere.term_basis["raised"]["months"] == 36
    assert everywhere.term_basis["raised_tier"] == "数额巨大"
    assert everywhere.why == [{"code": reasons.JUDGMENT_TERM_RAISED, "months": 36, "predicted": 20, "tier": "数额巨大"}]
    assert "minimum for an amount of 数额巨大" in everywhere.message
    # 5万元 reaches 数额巨大 in some regions only: the articles' own minimum (none here) binds
    somewhere = judged("被告人张某窃得现金人民币5万元。")
    assert somewhere.term_basis["amount"]["tier"] == "数额巨大"
    assert somewhere.term_basis["amount"]["everywhere"] == "数额较大"
    assert somewhere.term == Term(months=20) and "raised" not in somewhere.term_basis
    # a ground for a sentence below the range keeps the term
    surrendered = judged("被告人张某窃得现金人民币12万元。", [{"label": "自首", "quote": "主动投案。"}])
    assert surrendered.term == Term(months=20) and "raised" not in surrendered.term_basis


def test_a_term_within_the_range_passes_unchanged():
    bundle = _theft_bundle()
    within = Judgment(**{**bundle.judgment.__dict__, "term": Term(months=8), "message": ""})
    checked = verify_judgment(within, bundle.audit, bundle.case)
    assert checked.term == Term(months=8) and checked.message == "" and "capped" not in checked.term_basis
    assert checked.why == []


def test_the_term_is_pulled_towards_the_median_term_of_the_verified_precedents_of_the_charge():
    import math

    from worker.agents.graph_types import CaseNode
    from worker.agents.strategies.statistical import PRECEDENT_TERM_SHARE, _with_precedents

    def case(pk, charge, **term):
        return CaseNode(pk=pk, ext_id=str(pk), charges=(charge,), term=Term(**term))

    precedents = [case(1, "盗窃罪", months=12), case(2, "盗窃罪", months=24), case(3, "诈骗罪", months=120),
                  case(4, "盗窃罪", months=36), None]
    pulled = _with_precedents(Term(months=6), precedents, ["盗窃罪"])
    expected = math.expm1((1 - PRECEDENT_TERM_SHARE) * math.log1p(6) + PRECEDENT_TERM_SHARE * math.log1p(24))
    assert pulled == Term(months=round(expected)) and 6 < pulled.months < 24
    assert _with_precedents(Term(months=6), precedents, ["抢劫罪"]) == Term(months=6)  # none of that charge
    assert _with_precedents(Term(life=True), precedents, ["盗窃罪"]) == Term(life=True)
    # an even count: the mean of the two middle terms; life counts as 300 months
    lifers = [case(5, "故意杀人罪", months=180), case(6, "故意杀人罪", life=True)]
    assert _with_precedents(Term(months=240), lifers, ["故意杀人罪"]).months == round(
        math.expm1((1 - PRECEDENT_TERM_SHARE) * math.log1p(240) + PRECEDENT_TERM_SHARE * math.log1p(240)))


def test_the_term_basis_puts_the_amount_against_its_standard_and_the_model_beside_the_precedents():
    from worker.agents.models.sentencing import circumstances_shown, term_basis
    from worker.agents.stages.auditor.amounts import Standard

    facts = ("被告人赵某窃取笔记本电脑一台，经鉴定价值4800元。案发后，被告人赵某主动到公安机关投案，如实供述了自己的罪行。"
             "赵某曾因盗窃罪被判处有期徒刑，系累犯。")
    article = ("264", "第二百六十四条", "盗窃公私财物，数额较大的，处三年以下有期徒刑、拘役或者管制，并处或者单处罚金；"
               "数额特别巨大或者有其他特别严重情节的，处十年以上有期徒刑或者无期徒刑，并处罚金或者没收财产。")
    standards = {"数额较大": Standard("数额较大", 1000, "a"), "数额巨大": Standard("数额巨大", 30000, "b")}
    basis = term_basis(facts, [article], standards, model=Term(months=14), precedent_months=[24, 7, 10, 9],
                       share=0.4, term=Term(months=11))
    assert basis["ranges"] == [{"key": "264", "label": "第二百六十四条", "min_months": 0, "max_months": 180,
                                "life": True, "death": False}]
    assert basis["amount"] == {"text": "4800元", "yuan": 4800.0, "tier": "数额较大", "reached": True, "standard": "1000元",
                               "everywhere": "数额较大", "everywhere_standard": "1000元"}
    assert [c["label"] for c in basis["circumstances"]] == ["累犯", "前科", "自首", "如实供述"]
    assert basis["circumstances"][0]["quote"] == "赵某曾因盗窃罪被判处有期徒刑，系累犯。"
    assert basis["model"]["months"] == 14 and basis["precedents"] == {"n": 4, "median": 9.5, "share": 0.4}
    # below the first standard; a model's life term is not pulled, so no precedents' share; no term, no basis
    low = term_basis("窃取现金500元。", [article], standards, model=Term(life=True), precedent_months=[12], share=0.4,
                     term=Term(life=True))
    assert low["amount"]["reached"] is False and low["amount"]["tier"] == "数额较大" and low["precedents"] is None
    assert low["circumstances"] == [] and circumstances_shown("") == []
    assert term_basis(facts, [article], standards, model=None, precedent_months=[], share=0.4, term=None) == {}


DRUNK = "公诉机关指控：被告人王某于2018年5月1日夜间饮酒后在道路上醉酒驾驶机动车，经检验其血液酒精含量为180mg/100ml。"


def _drunk_bundle():
    from tests.agents.test_pipeline import FakeChargeModel, run
    from worker.agents.strategies.statistical import StatisticalStrategy
    from worker.agents.types import CaseInput

    strategy = StatisticalStrategy(charge_model=FakeChargeModel({"危险驾驶罪": 0.95, "交通肇事罪": 0.1}))
    return run(tiny_legal_graph(), CaseInput(facts=DRUNK, defendants=("王某",), offence_date=dt.date(2018, 6, 1)),
               strategy=strategy)


def test_a_range_that_provides_criminal_detention_at_most_fixes_the_kind_of_its_terms():
    from worker.agents.models.sentencing import DETENTION_KIND, detention_only, range_kind

    dangerous_driving = statutory_range("在道路上醉酒驾驶机动车的，处拘役，并处罚金。")
    assert range_kind(dangerous_driving.max_months) == DETENTION_KIND
    assert range_kind(36) is None and range_kind(6, life=True) is None and range_kind(0) is None
    assert detention_only({"危险驾驶罪": [dangerous_driving]})
    assert not detention_only({"危险驾驶罪": [dangerous_driving], "盗窃罪": [StatutoryRange(0, 120)]})
    assert not detention_only({"危险驾驶罪": [None]}) and not detention_only({})


def test_a_term_for_an_offence_punished_by_criminal_detention_alone_is_written_as_detention():
    """危险驾驶 (133之一) provides 拘役 and nothing heavier: six months are 拘役六个月, never 有期徒刑六个月; a term
    capped at that maximum says so in the judgment, its reasoning and its basis."""
    from worker.agents.models.sentencing import DETENTION_KIND

    bundle = _drunk_bundle()
    j = bundle.judgment
    assert j.status == Status.JUDGED and j.article_keys == ["133-1"], j.message
    assert j.term is not None and j.term.kind == DETENTION_KIND
    written = term_wording(j.term.months, kind=j.term.kind)
    assert written.startswith("拘役") and f"建议刑期：{written}。" in j.reasoning
    long = Judgment(**{**j.__dict__, "term": Term(months=12), "message": "",
                       "reasoning": j.reasoning.replace(written, term_wording(12))})
    checked = verify_judgment(long, bundle.audit, bundle.case)
    assert checked.term == Term(months=6, kind=DETENTION_KIND)
    assert term_wording(checked.term.months, kind=checked.term.kind) == "拘役六个月"
    assert "建议刑期：拘役六个月。" in checked.reasoning, "the reasoning proposes the term the judgment carries"
    assert checked.term_basis["capped"] == {"months": 6, "life": False, "death": False, "kind": DETENTION_KIND}
    # a term within the range, below six months, keeps its length and says the kind all the same
    short = verify_judgment(Judgment(**{**j.__dict__, "term": Term(months=3), "message": ""}),
                            bundle.audit, bundle.case)
    assert short.term == Term(months=3, kind=DETENTION_KIND) and short.why == j.why


def test_a_theft_term_of_six_months_stays_fixed_term_imprisonment():
    bundle = _theft_bundle()
    checked = verify_judgment(Judgment(**{**bundle.judgment.__dict__, "term": Term(months=6), "message": ""}),
                              bundle.audit, bundle.case)
    assert checked.term.kind is None and term_wording(checked.term.months) == "有期徒刑六个月"


@pytest.mark.parametrize(("facts", "months"), [
    ("被告人周某于1995年从监狱脱逃，历时在逃二十年，在逃时余刑尚有十四年十个月十九天。", 178),
    ("被告人在服刑期间脱逃，余刑9年2个月5日。", 110),
    ("被告人王某因犯盗窃罪被判处有期徒刑三年，未执行刑期为二年。", 24),
    ("被告人在监狱服刑期间脱逃，后被抓获。", None),
    ("被告人王某盗窃手机一部。", None),
])
def test_the_remaining_sentence_the_facts_state_is_read(facts, months):
    from worker.agents.models.sentencing import remaining_sentence

    assert remaining_sentence(facts) == months


def test_a_term_is_at_least_the_remaining_sentence_the_facts_state_whatever_the_grounds_for_a_lighter_one():
    """Article 71: a new offence while serving a sentence is punished together with what remained of the old one
    (Article 69): the term is at least the remainder the facts state, a surrender notwithstanding (it lightens the new
    term, not the old one). Without a stated remainder the term stays where the model put it."""
    from worker.agents.models.sentencing import circumstances_shown

    bundle = _theft_bundle()
    facts = ESCAPE + "在逃时余刑尚有十四年十个月十九天。后被告人刘某主动投案，如实供述。"
    basis = dict(bundle.judgment.term_basis, circumstances=circumstances_shown(facts), remaining=178)
    assert {c["label"] for c in basis["circumstances"]} >= {"服刑期间犯罪", "自首"}
    short = Judgment(**{**bundle.judgment.__dict__, "term": Term(months=40), "message": "", "term_basis": basis})
    checked = verify_judgment(short, bundle.audit, bundle.case)
    assert checked.term == Term(months=178)
    assert checked.why[-1] == {"code": reasons.JUDGMENT_TERM_RAISED, "months": 178, "predicted": 40,
                               "basis": "remaining"}
    assert checked.term_basis["raised"] == {"months": 178, "life": False, "death": False}
    assert checked.term_basis["raised_remaining"] is True
    unstated = dict(basis, remaining=None)
    plain = verify_judgment(Judgment(**{**short.__dict__, "term_basis": unstated}), bundle.audit, bundle.case)
    assert plain.term == Term(months=40), "a surrender: no raise to the article's minimum either"


def test_the_term_basis_keeps_the_remaining_sentence_the_facts_state():
    from worker.agents.models.sentencing import term_basis

    facts = ESCAPE + "余刑9年2个月5日。"
    basis = term_basis(facts, [], {}, model=Term(months=30), precedent_months=[], share=0.4, term=Term(months=30))
    assert basis["remaining"] == 110
    assert "remaining" not in term_basis(ESCAPE, [], {}, model=None, precedent_months=[], share=0.4, term=None)


def test_the_precedents_the_term_weighed_are_numbered_and_cited_beside_it():
    # A homicide whose audit also verified 234: the first three verified precedents were all 故意伤害罪, so the
    # reasoning's "参照类似案例" cited injury cases while the term weighed the 故意杀人罪 precedents, which were not
    # numbered at all. Now up to three of each verified charge are numbered, and the term cites its own.
    from worker.agents.stages.verification import number_evidence
    from worker.agents.strategies.statistical import _reasoning
    from worker.agents.testing.memory_store import InMemoryGraphStore
    from worker.agents.types import ArticleAudit, Audit

    graph = InMemoryGraphStore()
    graph.add_article(1, 232, charges=["故意杀人罪"])
    graph.add_article(2, 234, charges=["故意伤害罪"])
    for pk in (10, 11, 12, 13):
        graph.add_case(pk, f"injury-{pk}", charges=["故意伤害罪"], article_pks=[2], term=Term(months=pk))
    for pk in (14, 15):
        graph.add_case(pk, f"homicide-{pk}", charges=["故意杀人罪"], article_pks=[1], term=Term(life=True))
    homicide = ArticleAudit(1, "232", "第二百三十二条", ["故意杀人罪"], 1, "", True, passed=True)
    injury = ArticleAudit(2, "234", "第二百三十四条", ["故意伤害罪"], 2, "", True, passed=True)
    audit = Audit(articles=[homicide, injury], verified_cases=[10, 11, 12, 13, 14, 15])

    evidence = number_evidence(audit, graph)

    n = {e.pk: e.n for e in evidence if e.kind == "precedent"}
    assert list(n) == [10, 11, 12, 14, 15]  # three of each verified charge, in the Auditor's order
    text = _reasoning([homicide], ["故意杀人罪"], Term(months=150), evidence, weighed={14, 15})
    assert f"参照类似案例[{n[14]}][{n[15]}]，" in text and f"[{n[10]}]" not in text
    assert "参照类似案例" not in _reasoning([homicide], ["故意杀人罪"], Term(life=True), evidence, weighed=set())
    lone = Audit(articles=[ArticleAudit(3, "999", "第九百九十九条", [], 3, "", True, passed=True)],
                 verified_cases=[10, 11, 12, 13])
    assert [e.pk for e in number_evidence(lone, graph) if e.kind == "precedent"] == [10, 11, 12]  # no charge: first 3
