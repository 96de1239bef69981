"""SFT export of reviewer-approved runs: overrides applied, evaluation overlap dropped."""

import json

import pytest
from django.core.management import call_command

from apps.review.services.export import approved_sft_export
from apps.review.services.reviews import decision_make, review_for_run, review_item_set
from tests.review.conftest import first_item, review_complete

pytestmark = pytest.mark.django_db


def test_only_approved_runs_are_exported_with_the_reviewers_verdicts(judged_run, personas, tmp_path):
    out = tmp_path / "sft.jsonl"
    assert approved_sft_export(out=out)["examples"] == 0, "nothing is approved yet"
    result, article, item = first_item(judged_run)
    review_item_set(review=review_for_run(judged_run), result=result, target="item",
                    ref=f"{article['article_pk']}:{item['item_pk']}", action="override",
                    value=not item["satisfied"], reason="reviewer's reading of the record", user=personas.reviewer)
    review_complete(judged_run, personas.reviewer)
    decision_make(review=review_for_run(judged_run), kind="approve", reason="ok", user=personas.reviewer)
    call_command("export_approved_sft", "--out", str(out))
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {r["stage"] for r in rows} >= {"checklist_article"} and all(r["source"] == "reviewer-approved" for r in rows)
    assert all(r["messages"][-1]["role"] == "assistant" for r in rows)
    mine = [r for r in rows if r["stage"] == "checklist_article" and r["defendant"] == result.position
            and f"\"id\": {item['item_pk']}" in r["messages"][-1]["content"]]
    answer = json.loads(mine[0]["messages"][-1]["content"])
    verdict = next(i for i in answer["items"] if i["id"] == item["item_pk"])
    assert verdict["met"] is (not item["satisfied"]), "the override, not the Auditor's verdict, is the label"
    assert verdict["why"].startswith("reviewer: reviewer's reading")
    assert set(verdict) == {"id", "met", "why", "span"} and len(verdict["span"]) <= 15


def test_a_run_overlapping_an_evaluation_set_is_dropped(judged_run, personas, tmp_path):
    review_complete(judged_run, personas.reviewer)
    decision_make(review=review_for_run(judged_run), kind="approve", reason="ok", user=personas.reviewer)
    evaluation = tmp_path / "eval.jsonl"
    evaluation.write_text(json.dumps({"fact": judged_run.facts[10:80]}, ensure_ascii=False) + "\n", encoding="utf-8")
    report = approved_sft_export(out=tmp_path / "sft.jsonl", exclude=[evaluation])
    assert report["examples"] == 0 and report["results_dropped_contaminated"] == judged_run.results.count()
