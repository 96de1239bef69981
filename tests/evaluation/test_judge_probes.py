"""scripts/judge_probes.py: what a change of the judge would score, read from stored evaluation runs."""

import pytest

from apps.evaluation.models import EvaluationCase, EvaluationRun
from scripts.judge_probes import refusals, term, union

pytestmark = pytest.mark.django_db


def _run(*cases):
    run = EvaluationRun.objects.create(label="probe", dataset="x.jsonl", dataset_sha256="0" * 64, dataset_path="/tmp/x",
                                       status=EvaluationRun.Status.DONE, total=len(cases), done=len(cases), metrics={})
    for position, (gold, defendants, bundles) in enumerate(cases):
        EvaluationCase.objects.create(run=run, position=position, case_id=f"c{position}", fact="…", gold=gold,
                                      prediction={"defendants": defendants}, bundles=bundles, status="judged")
    return run.pk


def judged(charges, months=None):
    return {"status": "judged", "charges": charges, "term": {"months": months} if months is not None else None}


REFUSED = {"status": "insufficient_evidence", "charges": [], "term": None}


def test_the_union_probe_gives_each_defendant_the_charges_of_every_co_defendant():
    run = _run(({"charges": ["盗窃罪", "诈骗罪"]}, [judged(["盗窃罪"]), judged(["诈骗罪"]), REFUSED], []),
               ({"charges": ["盗窃罪"]}, [judged(["盗窃罪"]), judged(["诈骗罪"])], []),
               ({"charges": ["抢劫罪"]}, [judged(["抢劫罪"])], []))  # one defendant: not counted
    found = union(run)
    assert found["judgments"] == 5 and found["right"] == 1 and found["shared right"] == 2
    assert found["gained"] == 2 and found["lost"] == 1


def test_the_term_probe_puts_each_kind_of_first_judgment_beside_the_baseline():
    gold = {"charges": ["盗窃罪"], "term": {"months": 12}}
    run = _run((gold, [judged(["盗窃罪"], 10), judged(["盗窃罪"], 30)], []), (gold, [REFUSED], []),
               ({"charges": ["盗窃罪"], "term": None}, [judged(["盗窃罪"], 5)], []))  # no gold term: left out
    baseline = _run((gold, [judged(["盗窃罪"], 12), judged(["盗窃罪"], 12)], []), (gold, [judged(["盗窃罪"], 9)], []),
                    ({"charges": ["盗窃罪"]}, [judged(["盗窃罪"], 5)], []))
    assert term(run, baseline) == {("judged", "several defendants"): [1, 2.0, 0.0],
                                   ("insufficient_evidence", "one defendant"): [1, 12.0, 3.0]}


def test_the_refusal_probe_asks_what_the_best_candidate_with_a_shown_element_would_have_named():
    def article(charge, score, chg_p, supported):
        return {"article_pk": len(charge), "key": charge, "charges": [charge], "in_force": True, "score": score,
                "signals": {"chg_p": chg_p, "items_supported": supported}}

    gold = {"charges": ["诈骗罪"]}
    shown = {"audit": {"articles": [article("盗窃罪", 0.2, 0.9, 1), article("诈骗罪", 0.3, 0.1, 2), article("抢劫罪", 0.9, 0.9, 0)]}}
    run = _run((gold, [REFUSED], [shown]), (gold, [REFUSED], [{"audit": {"articles": []}}]), (gold, [judged(["诈骗罪"])], [{}]))
    baseline = _run((gold, [judged(["诈骗罪"])], []), (gold, [judged(["盗窃罪"])], []), (gold, [judged(["诈骗罪"])], []))
    found = refusals(run, baseline)
    assert found["refused"] == 2 and found["baseline right"] == 1 and found["no candidate with a shown element"] == 1
    assert found["best by the Auditor's P right"] == 1 and found["best by the charge classifier's P right"] == 0
