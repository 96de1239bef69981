"""The paper's per-defendant protocol beside the per-record union, the rare slice, and cited articles
without a supported item."""

import pytest

from apps.evaluation.metrics import Entry, evaluate_protocols, rare_ids
from apps.evaluation.services.evaluating import _entry, _verdict, defendant_entries


def bundle(defendant, charges, keys, supported=(), status="judged", term=None):
    """A stored bundle (Bundle.to_dict) with one checklist item per passed article."""
    from worker.agents.graph_types import Term
    from worker.agents.types import ArticleAudit, Audit, Bundle, CaseInput, ItemVerdict, Judgment, StageCost, Status

    articles = [ArticleAudit(article_pk=n, key=k, label=k, charges=[], version_pk=None, text="", in_force=True, passed=True,
                             items=[ItemVerdict(item_pk=n, order=1, question="?", satisfied=k in supported, score=1.0,
                                                reasoning="")])
                for n, k in enumerate(keys, start=1)]
    judgment = Judgment(status=Status(status), charges=list(charges), article_keys=list(keys),
                        term=Term(**term) if term else None)
    return Bundle(case=CaseInput(facts="事实"), defendant=defendant, strategy="statistical", params={}, versions={},
                  audit=Audit(articles=articles), judgment=judgment, costs=[StageCost(stage="auditor", seconds=1.0)]).to_dict()


def prediction(bundles):
    from apps.evaluation.services.evaluating import prediction_of

    return prediction_of({"bundles": bundles, "error": "", "seconds": 2.0})


GOLD = {"charges": ["盗窃罪", "诈骗罪"], "articles": [264, 266], "term": {"months": 12}, "defendants": ["甲", "乙"]}


def test_each_defendant_is_an_entry_against_the_records_gold_and_the_union_is_the_second_view():
    pred = prediction([bundle("甲", ["盗窃罪"], ["264"], supported={"264"}, term={"months": 10}),
                       bundle("乙", ["诈骗罪"], ["266"], supported=set(), term={"months": 30})])
    per_defendant = defendant_entries("r1", GOLD, pred)
    assert [e.id for e in per_defendant] == ["r1#0", "r1#1"]
    assert [e.pred_charges for e in per_defendant] == [["盗窃罪"], ["诈骗罪"]]
    assert per_defendant[0].gold_term == {"months": 12} and per_defendant[1].gold_term is None  # first judgment only
    assert per_defendant[1].cited == 1 and per_defendant[1].cited_unsupported == 1
    result = evaluate_protocols([{"record_entry": _entry("r1", GOLD, pred), "defendant_entries": per_defendant}])
    assert result["protocol"] == "per_defendant" and result["n"] == 2 and result["records"] == 1
    assert result["charges"]["accuracy"] == 0.0  # neither defendant has the record's whole gold set
    assert result["per_record"]["charges"]["accuracy"] == 1.0  # their union has
    assert result["term"]["n"] == 1 and result["term"]["mae"] == 2
    assert result["citations"] == {"articles": 2, "without_supported_item": 1}


def test_a_record_without_any_judgment_counts_each_named_defendant_as_wrong():
    pred = prediction([])
    entries = defendant_entries("r2", GOLD, pred)
    assert len(entries) == 2 and all(e.status == "failed" and not e.pred_charges for e in entries)


def test_the_rare_slice_is_the_records_whose_rarest_gold_charge_has_few_training_cases():
    counts = {"盗窃罪": 500, "诈骗罪": 12, "赌博罪": 13}
    golds = {"a": ["盗窃罪"], "b": ["盗窃罪", "诈骗罪"], "c": ["赌博罪"], "d": ["伪证罪"]}
    assert rare_ids(golds, counts) == {"b", "d"}
    entries = [{"record_entry": Entry(id=i, gold_charges=g, gold_articles=[], gold_term=None, pred_charges=g[:1],
                                      pred_articles=[], pred_term=None),
                "defendant_entries": [Entry(id=f"{i}#0", gold_charges=g, gold_articles=[], gold_term=None,
                                            pred_charges=g[:1], pred_articles=[], pred_term=None)]}
               for i, g in golds.items()]
    rare = evaluate_protocols(entries, training_counts=counts)["slices"]["rare"]
    assert rare["records"] == 2 and rare["per_defendant"]["charge_accuracy"] == pytest.approx(0.5)


def test_a_verdict_counts_the_cited_articles_without_a_shown_element():
    v = _verdict(bundle("甲", ["盗窃罪"], ["264", "383"], supported={"264"}))
    assert v["cited"] == 2 and v["cited_unsupported"] == 1
    failed = _verdict(bundle("甲", [], ["264"], status="insufficient_evidence"))
    assert failed["cited"] == 0
