"""Evaluation pages a web user can act on (issue 21, points 7 and 8): an empty state without shell
commands, a warning when the evaluated cases are in the training corpus, a reload when a run ends."""

import pytest

from apps.evaluation.models import EvaluationCase, EvaluationRun

pytestmark = pytest.mark.django_db


def test_the_empty_state_speaks_to_a_web_user(personas):
    for who, words in (("admin", "Upload a labelled set below"), ("staff_a", "An administrator can start one")):
        page = personas.client(getattr(personas, who), HTTP_ACCEPT_LANGUAGE="en").get("/evaluation/").content.decode()
        assert words in page and "manage.py" not in page


def _run_with(cases):
    run = EvaluationRun.objects.create(label="smoke", dataset="smoke.jsonl", dataset_sha256="0" * 64,
                                       dataset_path="/tmp/x", status=EvaluationRun.Status.DONE, total=len(cases),
                                       done=len(cases), metrics={"n": len(cases)})
    for i, (case_id, fact) in enumerate(cases):
        EvaluationCase.objects.create(run=run, position=i, case_id=case_id, fact=fact, gold={"charges": []},
                                      prediction={"charges": []}, bundles=[], status="judged")
    return run


def test_cases_from_the_training_corpus_are_warned_about(personas, demo_corpus):
    from apps.corpus.models import Precedent

    same_facts = Precedent.objects.get(ext_id="demo-case-004")
    run = _run_with([("demo-case-003", "不同的文字"), ("renamed", same_facts.fact), ("new-1", "全新的案件事实")])
    page = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="en").get(f"/evaluation/{run.pk}/").content.decode()
    assert 'id="training-overlap"' in page and "2 of the 3 cases" in page
    fresh = _run_with([("new-2", "全新的案件事实二")])
    page = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="en").get(f"/evaluation/{fresh.pk}/").content.decode()
    assert 'id="training-overlap"' not in page


def test_a_finished_run_reloads_the_page_instead_of_a_stale_no_case_yet(personas):
    run = _run_with([])
    response = personas.client(personas.admin).get(f"/evaluation/{run.pk}/", HTTP_HX_REQUEST="true")
    assert response["HX-Refresh"] == "true"
    EvaluationRun.objects.filter(pk=run.pk).update(status=EvaluationRun.Status.RUNNING)
    assert "HX-Refresh" not in personas.client(personas.admin).get(f"/evaluation/{run.pk}/", HTTP_HX_REQUEST="true")


def test_the_outcome_statuses_are_in_the_page_language(personas):
    run = _run_with([("c-1", "某甲盗窃手机一部。")])
    EvaluationRun.objects.filter(pk=run.pk).update(metrics={"n": 1, "status": {"judged": 1}})
    zh = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="zh-hans").get(f"/evaluation/{run.pk}/").content.decode()
    en = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="en").get(f"/evaluation/{run.pk}/").content.decode()
    assert "已裁判 1" in zh and 'status-judged">已裁判<' in zh and "judged 1" not in zh
    assert "judged 1" in en and 'status-judged">judged<' in en
