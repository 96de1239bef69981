"""The reasoning pipeline on the in-memory graph: stages, failure states, ablations."""

import datetime as dt
import subprocess
import sys

import pytest

from worker.agents.testing.fixtures import FixedProbabilities, tiny_legal_graph
from worker.agents.testing.memory_retriever import InMemoryRetriever
from worker.agents.pipeline import ABLATIONS, Params, adjudicate, adjudicate_case
from worker.agents.stages.verification import verify_judgment
from worker.agents.strategies.statistical import StatisticalStrategy
from worker.agents.types import CaseInput, Judgment, Status
from worker.agents.wording import term_wording

THEFT = ("公诉机关指控：被告人张某于夜间翻墙进入被害人李某家中，秘密窃取现金人民币五千元及手机一部，"
         "以非法占有为目的，盗窃公私财物数额较大。案发后张某主动投案，如实供述。")


def FakeChargeModel(probs):  # noqa: N802 (a stand-in class)
    return FixedProbabilities(probs, model_id="fake-charges/1")


@pytest.fixture
def graph():
    return tiny_legal_graph()


def run(graph, case, strategy=None, **params):
    strategy = strategy or StatisticalStrategy(charge_model=FakeChargeModel({"盗窃罪": 0.92, "诈骗罪": 0.1}))
    return adjudicate(case, case.defendants[0] if case.defendants else "", strategy=strategy, graph=graph,
                      retriever=InMemoryRetriever(graph), params=Params(**params))


def test_a_theft_case_is_judged_with_verified_cited_evidence(graph):
    bundle = run(graph, CaseInput(facts=THEFT, defendants=("张某",), offence_date=dt.date(2018, 3, 1)))
    j = bundle.judgment
    assert j.status == Status.JUDGED, j.message
    assert j.charges == ["盗窃罪"] and j.article_keys == ["264"]
    assert j.citations and all(n in {e.n for e in j.evidence} for n in j.citations)
    assert {h.path for h in bundle.research.hits} >= {"sem", "com", "chg", "art"}
    theft = next(a for a in bundle.audit.articles if a.key == "264")
    assert theft.passed and theft.version_pk == 52, "the 2011 amendment is in force in 2018"
    assert any(i.satisfied and i.span_text for i in theft.items)
    assert j.term is not None and j.term.months > 0
    assert f"建议刑期：{term_wording(j.term.months, life=j.term.life, death=j.term.death)}。" in j.reasoning, \
        "the reasoning writes the term as a judgment does"
    cited = [e.text for e in j.evidence if e.kind == "interpretation"]
    assert cited and "第三条　非法进入" in cited[0] and cited[0].count("第三条") == 1, "the paragraph's number said once"
    assert [c.stage for c in bundle.costs] == ["focus", "features", "prejudge", "researcher", "auditor", "adjudicator"]
    assert bundle.to_dict()["judgment"]["status"] == "judged"


def test_the_judgment_says_what_its_term_stands_on(graph):
    """The term basis: the cited article's statutory range, the circumstances the facts show with the sentence
    that shows each, and how the term was made (here, without a term model, the verified precedents' median)."""
    from worker.agents.types import Bundle

    bundle = run(graph, CaseInput(facts=THEFT, defendants=("张某",), offence_date=dt.date(2018, 3, 1)))
    j = bundle.judgment
    basis = j.term_basis
    assert [r["key"] for r in basis["ranges"]] == ["264"] and basis["ranges"][0]["max_months"] == 120
    shown = {c["label"]: c["quote"] for c in basis["circumstances"]}
    assert shown["自首"] == "案发后张某主动投案，如实供述。" and "如实供述" in shown
    assert basis["model"] is None and basis["precedents"]["share"] == 1.0
    assert basis["term"] == {"months": j.term.months, "life": j.term.life, "death": j.term.death}
    assert Bundle.from_dict(bundle.to_dict()).judgment.term_basis == basis


def test_an_offence_before_the_amendment_is_judged_under_the_old_version(graph):
    bundle = run(graph, CaseInput(facts=THEFT, defendants=("张某",), offence_date=dt.date(2009, 6, 1)))
    theft = next(a for a in bundle.audit.articles if a.key == "264")
    assert theft.version_pk == 51


def test_an_offence_before_any_version_is_not_in_force(graph):
    bundle = run(graph, CaseInput(facts=THEFT, defendants=("张某",), offence_date=dt.date(1950, 1, 1)))
    assert bundle.judgment.status in (Status.NOT_IN_FORCE, Status.INSUFFICIENT_EVIDENCE, Status.JUDGED)
    theft = next(a for a in bundle.audit.articles if a.key == "264")
    if not theft.in_force:
        assert "no version" in theft.reason and not theft.passed


def test_facts_with_nothing_to_retrieve_end_in_no_evidence(graph):
    strategy = StatisticalStrategy(charge_model=FakeChargeModel({}))
    bundle = run(graph, CaseInput(facts="。", defendants=("甲",)), strategy=strategy)
    assert bundle.judgment.status == Status.NO_EVIDENCE
    assert not bundle.judgment.charges


def test_when_the_auditor_verifies_nothing_there_is_no_judgment(graph):
    strategy = StatisticalStrategy(charge_model=FakeChargeModel({"诈骗罪": 0.06}))
    bundle = run(graph, CaseInput(facts="被告人甲某与他人发生口角。", defendants=("甲某",)), strategy=strategy, paths=("chg",))
    assert bundle.judgment.status == Status.INSUFFICIENT_EVIDENCE
    assert bundle.audit.pruned and not bundle.judgment.charges
    best = max(bundle.audit.articles, key=lambda a: a.score)
    assert best.label in bundle.judgment.message, "the message names the most probable candidate and what it lacked"


def test_every_defendant_gets_a_judgment(graph):
    case = CaseInput(facts="被告人王某负责望风。被告人赵某翻墙入户窃取现金人民币五千元。" + THEFT, defendants=("王某", "赵某"))
    bundles = adjudicate_case(case, strategy=StatisticalStrategy(charge_model=FakeChargeModel({"盗窃罪": 0.9})),
                              graph=graph, retriever=InMemoryRetriever(graph))
    assert [b.defendant for b in bundles] == ["王某", "赵某"]
    assert all(b.judgment is not None for b in bundles)


@pytest.mark.parametrize("name", ABLATIONS)
def test_every_ablation_runs_through_the_same_entry_point(graph, name):
    retriever = InMemoryRetriever(graph, facts={101: THEFT})
    bundle = adjudicate(CaseInput(facts=THEFT, defendants=("张某",)), "张某",
                        strategy=StatisticalStrategy(charge_model=FakeChargeModel({"盗窃罪": 0.9})),
                        graph=graph, retriever=retriever, params=Params.for_ablation(name))
    assert bundle.judgment is not None
    if name == "classifier_only":  # the baseline: the classifier's answer, no retrieval, no audit, no evidence
        assert bundle.research is None and bundle.audit is None
        assert bundle.judgment.charges == ["盗窃罪"] and not bundle.judgment.evidence
        return
    paths = {h.path for h in bundle.research.hits}
    if name == "no_graph":
        assert "com" not in paths
    if name.startswith("no_") and name[3:] in ("sem", "com", "chg", "art"):
        assert name[3:] not in paths
    if name == "naive_rag":
        assert paths <= {"flat"}
    if name == "no_auditor":
        assert all(a.passed for a in bundle.audit.articles if a.in_force)


def _judged(graph):
    return run(graph, CaseInput(facts=THEFT, defendants=("张某",), offence_date=dt.date(2018, 3, 1)))


def test_a_citation_that_does_not_resolve_is_rejected(graph):
    bundle = _judged(graph)
    bad = Judgment(**{**bundle.judgment.__dict__, "reasoning": bundle.judgment.reasoning + "另见[99]。"})
    assert verify_judgment(bad, bundle.audit, bundle.case).status == Status.UNRESOLVED_CITATION


def test_an_article_that_was_not_verified_is_rejected(graph):
    bundle = _judged(graph)
    bad = Judgment(**{**bundle.judgment.__dict__, "article_keys": ["264", "999"]})
    checked = verify_judgment(bad, bundle.audit, bundle.case)
    assert checked.status == Status.UNRESOLVED_CITATION and "999" in checked.message


def test_a_charge_no_verified_article_defines_is_rejected(graph):
    bundle = _judged(graph)
    bad = Judgment(**{**bundle.judgment.__dict__, "charges": ["盗窃罪", "故意杀人罪"]})
    assert verify_judgment(bad, bundle.audit, bundle.case).status == Status.UNRESOLVED_CITATION


def test_a_reasoning_without_citations_is_rejected(graph):
    bundle = _judged(graph)
    bad = Judgment(**{**bundle.judgment.__dict__, "reasoning": "构成盗窃罪。"})
    assert verify_judgment(bad, bundle.audit, bundle.case).status == Status.UNRESOLVED_CITATION


def test_the_statistical_pipeline_is_deterministic(graph):
    case = CaseInput(facts=THEFT, defendants=("张某",), offence_date=dt.date(2018, 3, 1))
    first, second = _judged(graph).to_dict(), _judged(graph).to_dict()
    for bundle in (first, second):
        for cost in bundle["costs"]:
            cost["seconds"] = 0
    assert first == second and case


def test_importing_the_reasoning_core_loads_no_django_celery_or_torch():
    code = ("import sys, worker.agents.pipeline, worker.agents.strategies.statistical, worker.agents.llm, "
            "worker.agents.prompts, worker.agents.testing.memory_store, worker.agents.testing.memory_retriever, worker.agents.stages.features; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('django', 'celery', 'torch', 'apps')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_leave_one_out_never_retrieves_the_case_itself(graph):
    case = CaseInput(facts=THEFT, defendants=("张某",), offence_date=dt.date(2018, 3, 1), ref="TINY-101")
    normal = run(graph, case)
    assert 101 in normal.research.candidate_cases  # the stored copy of these facts is found…
    held_out = run(graph, case, exclude_self=True)
    assert 101 not in held_out.research.candidate_cases  # …unless the evaluation leaves it out
    assert not any(h.kind == "case" and h.pk == 101 for h in held_out.research.hits)
    assert held_out.params["exclude_self"] is True


class Certain:
    """An Auditor that is sure every candidate applies: only the element requirement can stop an article."""

    model_id = "certain"
    threshold = 0.5
    multi_threshold = 0.99

    def probabilities(self, rows):
        import numpy as np

        return np.full(len(rows), 0.999)

    def contributions(self, row):
        return {}


def test_an_article_with_no_element_shown_never_passes_whatever_the_auditor_believes(graph):
    strategy = StatisticalStrategy(charge_model=FakeChargeModel({"盗窃罪": 0.92, "诈骗罪": 0.9}), auditor=Certain())
    bundle = run(graph, CaseInput(facts=THEFT, defendants=("张某",), offence_date=dt.date(2018, 3, 1)), strategy=strategy)
    decided = [a for a in bundle.audit.articles if a.in_force]
    assert decided and all(a.score == pytest.approx(0.999) for a in decided)
    for a in decided:
        shown = any(i.satisfied for i in a.items)
        assert a.passed == shown, a.key
        if not shown:
            assert a.why["code"] == "article.no_element"
    assert all(any(i.satisfied for i in a.items) for a in bundle.audit.verified)
    cited = {a.key: a for a in bundle.audit.verified}
    assert bundle.judgment.article_keys and all(k in cited for k in bundle.judgment.article_keys)


def test_an_article_whose_shown_items_every_offence_of_its_kind_shares_does_not_pass(graph):
    """Found in `make demo`: a fraud's facts showed theft's "以非法占有为目的" and its amount, and theft was verified
    beside fraud with none of its own conduct (秘密窃取) shown."""
    strategy = StatisticalStrategy(charge_model=FakeChargeModel({"盗窃罪": 0.92, "诈骗罪": 0.9}), auditor=Certain())
    fraud = "被告人张某以帮助他人办理贷款为由，骗取被害人李某现金人民币五万元，以非法占有为目的，后挥霍一空。"
    bundle = run(graph, CaseInput(facts=fraud, defendants=("张某",), offence_date=dt.date(2018, 3, 1)), strategy=strategy)
    by_key = {a.key: a for a in bundle.audit.articles if a.in_force}
    theft = by_key["264"]
    assert [i.question for i in theft.items if i.satisfied] == ["是否以非法占有为目的"]
    assert not theft.passed and theft.why["code"] == "article.no_conduct" and theft.why["supported"] == 1
    assert by_key["266"].passed and bundle.judgment.charges == ["诈骗罪"]


def test_an_item_asking_only_for_an_amount_tier_is_never_the_offences_own_conduct():
    """Found in an evaluation run: "是否数额巨大" of theft was shown by the words "数额巨大" in the prosecution's view of a
    snatching, by the terms rule, and counted as theft's own conduct; shown by an amount it already did not."""
    from worker.agents.reasons import ITEM_AMOUNT_REACHED, ITEM_TERMS_IN_SENTENCE as ITEM_TERMS
    from worker.agents.stages.auditor.elements import amount_item
    from worker.agents.strategies.statistical import shows_conduct
    from worker.agents.types import ItemVerdict

    def shown(question, code=ITEM_TERMS, satisfied=True):
        return ItemVerdict(item_pk=1, order=0, question=question, satisfied=satisfied, score=1.0, reasoning="",
                           why={"code": code})

    assert all(amount_item(q) for q in ("是否数额较大", "是否数额巨大", "是否数额特别巨大"))
    assert not any(amount_item(q) for q in ("是否盗窃公私财物数额较大", "是否数额较大或者有其他严重情节", "是否情节严重"))
    assert not shows_conduct(shown("是否数额巨大")) and not shows_conduct(shown("是否数额较大", ITEM_AMOUNT_REACHED))
    assert shows_conduct(shown("是否盗窃公私财物数额较大")) and shows_conduct(shown("是否多次抢夺"))
    assert not shows_conduct(shown("是否多次抢夺", satisfied=False))


def test_an_item_asking_what_the_offender_did_after_the_offence_is_never_its_conduct():
    """A surrender, a repayment, forgiveness, meritorious service: grounds of the sentence the facts may show, not
    elements of an offence (found in `make demo`: a fraud's repayment verified 275, criminal damage, on its own)."""
    from worker.agents.reasons import ITEM_TERMS_IN_SENTENCE as ITEM_TERMS
    from worker.agents.stages.auditor.elements import circumstance_item
    from worker.agents.strategies.statistical import shows_conduct
    from worker.agents.types import ItemVerdict

    after = ("是否已赔偿被害人损失", "是否具有重大立功表现", "是否具有自首、被害人亲属谅解等从宽情节",
             "是否在提起公诉前如实供述自己罪行、真诚悔罪、积极退赃并避免或减少损害结果的发生")
    conduct = ("是否故意毁坏或者损坏公私财物", "是否多次盗窃", "是否以暴力、胁迫方法强行劫取财物", "是否贪污数额较大或者有其他较重情节")
    assert all(circumstance_item(q) for q in after) and not any(circumstance_item(q) for q in conduct)
    for q in after:
        item = ItemVerdict(item_pk=1, order=0, question=q, satisfied=True, score=1.0, reasoning="",
                           why={"code": ITEM_TERMS})
        assert not shows_conduct(item), q
