"""The demo answers plain cases right: apps/corpus/demo/plain_cases.jsonl (written for Lextrace: at least
one unambiguous case per charge-defining demo article, and the two of issue #17) judged by the demo
pipeline (demo corpus, its indexes and graph, models trained on the 65 demo cases as `make demo` does)."""

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


# Known failures, kept visible (strict: a change that fixes one must remove it here). plain-26, a snatched phone: the
# demo's Auditor (a logistic regression fitted on 47 demo cases) gives 267 P = 0.27 against its threshold of 0.3, with
# two of 267's items shown; the clerk gets insufficient_evidence (docs/RESULTS.md, ninth round).
KNOWN_FAILURES = {"plain-26"}


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
