"""A reviewer's what-if on the in-memory graph: overrides change the evidence, only the Adjudicator runs again."""

import datetime as dt
import json

import pytest

from tests.agents.test_pipeline import THEFT, run
from worker.agents import reasons
from worker.agents.testing.fixtures import tiny_legal_graph
from worker.agents.types import CaseInput, Status
from worker.agents.tools.whatif import Override, OverrideInvalid, readjudicate


@pytest.fixture
def graph():
    return tiny_legal_graph()


@pytest.fixture
def judged(graph):
    bundle = run(graph, CaseInput(facts=THEFT, defendants=("张某",), offence_date=dt.date(2018, 3, 1)))
    assert bundle.judgment.status == Status.JUDGED
    # Through JSON, as the bundle is stored.
    return json.loads(json.dumps(bundle.to_dict(), ensure_ascii=False))


def _strategy():
    from tests.agents.test_pipeline import FakeChargeModel
    from worker.agents.strategies.statistical import StatisticalStrategy

    return StatisticalStrategy(charge_model=FakeChargeModel({"盗窃罪": 0.92, "诈骗罪": 0.1}))


def _theft(bundle):
    return next(a for a in bundle["audit"]["articles"] if a["key"] == "264")


def test_no_override_reproduces_the_judgment_with_only_the_adjudicator(graph, judged):
    again = readjudicate(judged, [], strategy=_strategy(), graph=graph).to_dict()
    assert again["judgment"]["charges"] == judged["judgment"]["charges"]
    assert again["judgment"]["article_keys"] == judged["judgment"]["article_keys"]
    assert [c["stage"] for c in again["costs"]] == ["adjudicator"]
    assert again["versions"]["whatif"] == "1"


def test_a_verdict_set_to_not_shown_makes_the_article_fail_and_the_judgment_change(graph, judged):
    theft = _theft(judged)
    item = theft["items"][0]
    o = Override("item", f"{theft['article_pk']}:{item['item_pk']}", False, "the facts do not show this element")
    again = readjudicate(judged, [o], strategy=_strategy(), graph=graph).to_dict()
    changed = _theft(again)
    assert not changed["passed"] and "reviewer changed checklist item" in changed["reason"]
    assert not changed["items"][0]["satisfied"] and changed["items"][0]["reasoning"].startswith("reviewer: the facts")
    assert "264" not in again["judgment"].get("article_keys", [])
    assert {"kind": "article", "pk": theft["article_pk"], "reason": changed["reason"], "why": {"code": "pruned.article"}} \
        in again["audit"]["pruned"]
    # The stored bundle is not touched.
    assert _theft(judged)["passed"] and judged["audit"]["articles"][0]["items"][0]["satisfied"] in (True, False)


def test_setting_an_element_to_satisfied_never_makes_an_article_fail(graph, judged):
    theft = _theft(judged)
    for item in theft["items"]:
        o = Override("item", f"{theft['article_pk']}:{item['item_pk']}", True, "shown by the confession")
        again = readjudicate(judged, [o], strategy=_strategy(), graph=graph).to_dict()
        assert _theft(again)["passed"], item
        assert again["judgment"]["status"] == Status.JUDGED


def test_an_article_whose_elements_are_all_set_satisfied_applies(graph, judged):
    failed = [a for a in judged["audit"]["articles"] if not a["passed"] and a["in_force"] and a["items"]]
    if not failed:
        pytest.skip("the fixture run pruned no in-force article with a checklist")
    target = failed[0]
    overrides = [Override("item", f"{target['article_pk']}:{i['item_pk']}", True, "shown") for i in target["items"]]
    again = readjudicate(judged, overrides, strategy=_strategy(), graph=graph).to_dict()
    assert next(a for a in again["audit"]["articles"] if a["article_pk"] == target["article_pk"])["passed"]


def test_excluding_the_only_verified_article_leaves_insufficient_evidence(graph, judged):
    verified = [a for a in judged["audit"]["articles"] if a["passed"]]
    overrides = [Override("article", str(a["article_pk"]), False, "not applicable") for a in verified]
    again = readjudicate(judged, overrides, strategy=_strategy(), graph=graph).to_dict()
    assert again["judgment"]["status"] == Status.INSUFFICIENT_EVIDENCE
    assert again["judgment"]["charges"] == []
    assert again["judgment"]["why"] == [{"code": reasons.JUDGMENT_REVIEWER_LEFT_NONE}], "said in the page's language"


def test_a_pruned_article_forced_to_apply_becomes_citable(graph, judged):
    failed = [a for a in judged["audit"]["articles"] if not a["passed"] and a["in_force"]]
    if not failed:
        pytest.skip("the fixture run pruned no in-force article")
    target = failed[0]
    again = readjudicate(judged, [Override("article", str(target["article_pk"]), True, "applies: see record")],
                         strategy=_strategy(), graph=graph).to_dict()
    assert _theft(again)["passed"]
    assert any(e["kind"] == "article" and e["pk"] == target["article_pk"] for e in again["judgment"]["evidence"])


def test_an_excluded_precedent_is_no_longer_evidence(graph, judged):
    cases = judged["audit"]["verified_cases"]
    assert cases, "the fixture run verified precedents"
    pk = cases[0]
    again = readjudicate(judged, [Override("precedent", str(pk), False, "distinguishable")],
                         strategy=_strategy(), graph=graph).to_dict()
    assert pk not in again["audit"]["verified_cases"]
    assert not any(e["kind"] == "precedent" and e["pk"] == pk for e in again["judgment"]["evidence"])
    assert any(p["kind"] == "case" and p["pk"] == pk and "reviewer" in p["reason"] for p in again["audit"]["pruned"])


def test_an_excluded_interpretation_is_not_numbered(graph, judged):
    interps = [e for e in judged["judgment"]["evidence"] if e["kind"] == "interpretation"]
    if not interps:
        pytest.skip("the fixture run cites no interpretation")
    pk = interps[0]["pk"]
    again = readjudicate(judged, [Override("interpretation", str(pk), False, "superseded")],
                         strategy=_strategy(), graph=graph).to_dict()
    assert not any(e["kind"] == "interpretation" and e["pk"] == pk for e in again["judgment"]["evidence"])
    assert again["judgment"]["status"] == Status.JUDGED
    assert all(n in {e["n"] for e in again["judgment"]["evidence"]} for n in again["judgment"]["citations"])


@pytest.mark.parametrize("override", [
    Override("item", "999999:1", False, "x"),
    Override("article", "999999", False, "x"),
    Override("precedent", "999999", False, "x"),
    Override("verdict", "1", False, "x"),
])
def test_an_override_of_something_not_in_the_bundle_is_refused(graph, judged, override):
    with pytest.raises(OverrideInvalid):
        readjudicate(judged, [override], strategy=_strategy(), graph=graph)
