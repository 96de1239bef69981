"""The demo answers plain cases right: apps/corpus/demo/plain_cases.jsonl (written for Lextrace: at least
one unambiguous case per charge-defining demo article, and the two of issue #17) judged by the demo
pipeline (demo corpus, its indexes and graph, models trained on the 69 demo cases as `make demo` does)."""

import datetime as dt
import json
from pathlib import Path

import pytest

from apps.judging.services import judgment_compute, statistical_strategy
from worker.agents.types import CaseInput, Status

PLAIN = Path(__file__).resolve().parents[2] / "apps" / "corpus" / "demo" / "plain_cases.jsonl"
CASES = [json.loads(line) for line in PLAIN.read_text(encoding="utf-8").splitlines() if line.strip()]

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def test_the_file_covers_every_charge_defining_demo_article():
    statutes = [json.loads(line) for line in (PLAIN.parent / "statutes.jsonl").read_text(encoding="utf-8").splitlines()]
    wanted = {c for s in statutes for c in s["charges"]}
    covered = {c for case in CASES for charges in case["expected"].values() for c in charges}
    assert len(CASES) >= 20 and wanted <= covered


# Known failures, kept visible (strict: a change that fixes one must remove it here). From the ninth round
# to the twelfth: plain-26, a snatched phone, was insufficient_evidence (the demo's Auditor gave 267 P = 0.27
# against its threshold of 0.3) until generic concepts stopped showing items they are a small part of, and the demo's
# Auditor, trained on those honest items, verified 267 (docs/RESULTS.md, twelfth round).
# plain-29, a pickpocket's take of 800 yuan (below the amount standard: 扒窃 makes it a theft), was refused from the
# twenty-first round, when it was written, to the twenty-third (the demo's Auditor, fitted on 65 cases: 264 P = 0.09).
# Fitted on 69 cases (312 and its four cases added, 2026-12-07) it takes the pass threshold 0.1 and gives 264 P = 0.105:
# judged right, narrowly (docs/RESULTS.md, twenty-fourth round).
KNOWN_FAILURES: set[str] = set()


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason="known failure"))
                                  if c["id"] in KNOWN_FAILURES else c for c in CASES],
                         ids=[c["id"] for c in CASES])
def test_a_plain_case_gets_its_charges_with_a_shown_element(judging_corpus, case):
    bundles = judgment_compute(case=CaseInput(facts=case["fact"], defendants=tuple(case["expected"]),
                                              offence_date=dt.date.fromisoformat(case["offence_date"])),
                               strategy=statistical_strategy())
    for bundle in bundles:
        judgment = bundle.judgment
        assert judgment.status == Status.JUDGED, (bundle.defendant, judgment.message)
        assert judgment.charges == case["expected"][bundle.defendant], bundle.defendant
        cited = {a.key: a for a in bundle.audit.verified}
        # every cited article is verified, and verified only with an element shown by the facts
        assert all(any(i.satisfied and i.span_text for i in cited[key].items) for key in judgment.article_keys)


def test_the_mall_thief_is_not_convicted_of_robbery(judging_corpus):
    bundle = judgment_compute(case=CaseInput(facts=CASES[1]["fact"], defendants=("张某", "李某"),
                                             offence_date=dt.date(2018, 5, 1)), strategy=statistical_strategy())[0]
    robbery = next((a for a in bundle.audit.articles if a.key == "263"), None)
    assert robbery is None or not robbery.passed
    if robbery is not None:  # no element of robbery is shown for 张某, so it cannot pass whatever else speaks for it
        assert not any(i.satisfied for i in robbery.items) or robbery.score < 0.5


def test_a_collision_without_drink_racing_or_chemicals_is_not_dangerous_driving(judging_corpus):
    """Driving is every traffic case's context, not an element of 133之一, and a collision alone is not 133's accident
    with a serious injury or a death: a red light run that slightly injured a cyclist is judged neither 危险驾驶罪 nor
    交通肇事罪, and no item of 133, 133之一 or 267 is shown by the driving or the collision."""
    facts = "2019年11月2日，被告人廖某驾驶轿车闯红灯，与孙某驾驶的电动车相撞，致孙某轻伤，电动车损坏，车上财物散落。"
    bundle = judgment_compute(case=CaseInput(facts=facts, defendants=("廖某",), offence_date=dt.date(2019, 11, 2)),
                              strategy=statistical_strategy())[0]
    assert "危险驾驶罪" not in bundle.judgment.charges and "交通肇事罪" not in bundle.judgment.charges
    for a in bundle.audit.articles:
        if a.key in ("133", "133-1", "267"):
            shown = [(i.question, i.why, i.span_text) for i in a.items if i.satisfied]
            assert not shown, (a.key, shown)


def test_a_fraud_whose_sum_and_intent_a_theft_shares_is_not_verified_as_a_theft(judging_corpus):
    """Found in `make demo` as a clerk: 陈某's fraud showed theft's "以非法占有为目的" and its amount items, and theft was
    verified beside fraud with none of its own conduct (秘密窃取) shown; the reviewer had to strike it by hand."""
    facts = ("2019年3月间，被告人陈某以帮助他人办理贷款为由，先后骗取被害人刘某人民币5万元，后挥霍一空。"
             "2019年6月8日晚，被告人周某因琐事与邻居吴某发生争执，持木棍击打吴某头部，致其轻伤二级。")
    bundle = judgment_compute(case=CaseInput(facts=facts, defendants=("陈某", "周某"), offence_date=dt.date(2019, 6, 8)),
                              strategy=statistical_strategy())[0]
    assert bundle.judgment.charges == ["诈骗罪"]
    theft = next((a for a in bundle.audit.articles if a.key == "264"), None)
    assert theft is None or not theft.passed
    if theft is not None and any(i.satisfied for i in theft.items):
        assert theft.why["code"] == "article.no_conduct", theft.why
    fraud = next(a for a in bundle.audit.articles if a.key == "266")
    deceived = next(i for i in fraud.items if i.question == "是否使被害人陷入错误认识并自愿交付财物")
    assert not (deceived.satisfied and deceived.why.get("features") == ["人身"]), "naming the victim shows no deception"


def test_a_repaid_fraud_does_not_verify_criminal_damage_by_its_repayment(judging_corpus):
    """Found in `make demo` as a clerk: a fraud whose defendant surrendered and repaid the victims showed 275's "是否已赔偿
    被害人损失", and 故意毁坏财物罪 was verified beside fraud ("适用：4 项要件中有 1 项") on the repayment alone. What the
    offender did after the offence is shown, and weighs in the sentence, but makes no offence."""
    facts = ("2020年3月至6月，被告人孙某以投资理财为名，先后骗取被害人周某、吴某人民币共计12万元，所得款项用于归还个人债务。"
             "2020年7月2日，孙某到公安机关投案，如实供述了自己的罪行，并退赔被害人全部损失，取得二被害人谅解。")
    bundle = judgment_compute(case=CaseInput(facts=facts, defendants=("孙某",), offence_date=dt.date(2020, 3, 1)),
                              strategy=statistical_strategy())[0]
    assert bundle.judgment.charges == ["诈骗罪"]
    damage = next((a for a in bundle.audit.articles if a.key == "275"), None)
    assert damage is not None and not damage.passed
    shown = [i.question for i in damage.items if i.satisfied]
    assert shown == ["是否已赔偿被害人损失"], shown  # the repayment is still read: it is in the facts
    assert damage.why["code"] == "article.no_conduct", damage.why


def test_a_burglary_told_apart_from_a_drunk_drive_is_a_further_act(judging_corpus):
    """plain-28: the Auditor's rows never saw a second offence told apart, so it rejects the burglary's 264 beside the
    drunk drive; a separate part ("另查明") most likely theft with the entry shown inside it passes it as a further act,
    and 133之一's concurrence clause (one act under two articles) does not take the place of a separate act."""
    case = next(c for c in CASES if c["id"] == "plain-28")
    bundle = judgment_compute(case=CaseInput(facts=case["fact"], defendants=("周某",), offence_date=dt.date(2019, 4, 12)),
                              strategy=statistical_strategy())[0]
    theft = next(a for a in bundle.audit.verified if a.key == "264")
    assert theft.why["code"] == "article.separate_act" and theft.score < theft.why["threshold"]
    part = case["fact"].split("另查明")[0]
    assert any(i.satisfied and i.span_text and i.span_text in part for i in theft.items)
    assert bundle.judgment.article_keys == ["133-1", "264"]


def test_a_single_act_gets_no_further_charge_from_its_parts(judging_corpus):
    """Without a part of its own most likely the other offence, a rejected article stays rejected: the drunk drive alone
    (plain-05) is judged 危险驾驶罪 alone and no article passes as a further act."""
    case = next(c for c in CASES if c["id"] == "plain-05")
    bundle = judgment_compute(case=CaseInput(facts=case["fact"], defendants=("孙某",),
                                             offence_date=dt.date(2018, 12, 20)), strategy=statistical_strategy())[0]
    assert not any(a.why.get("code") == "article.separate_act" for a in bundle.audit.articles)
