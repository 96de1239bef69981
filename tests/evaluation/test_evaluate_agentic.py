"""`evaluate --mode agentic`: the planner loop over the real graph and indexes, on a few labelled cases."""

import json

import pytest
from django.core.management import call_command

from apps.evaluation.models import EvaluationRun
from tests.evaluation.test_evaluate import world  # noqa: F401 - the fixture (demo corpus, indexes, graph, models)

pytestmark = pytest.mark.django_db


def test_evaluate_in_agentic_mode_records_steps_and_calls_per_defendant(world, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "out"
    call_command("evaluate", "--cases", str(world), "--mode", "agentic", "--out", str(out), "--no-progress")
    run = EvaluationRun.objects.get()
    assert run.status == EvaluationRun.Status.DONE and run.mode == "agentic" and run.done == 3
    assert run.label.endswith("/agentic")
    cases = {c.case_id: c for c in run.cases.all()}
    for case in cases.values():
        for bundle in case.bundles:
            steps = bundle["research"]["steps"]
            assert steps and steps[-1]["status"] in ("stop", "cap_steps")
            assert bundle["params"]["mode"] == "agentic" and bundle["versions"]["planner"] == "statistical/1"
            assert all(s["results"] for s in steps if s["status"] == "ok" and s["action"] != "search_interpretations")
    theft = cases["t-theft"]
    assert theft.status == "judged" and "盗窃罪" in theft.prediction["charges"], theft.prediction
    m = run.metrics["agentic"]
    assert m["defendants"] == 4  # the two-defendant record counts twice
    assert 1 <= m["searches_per_defendant"] <= m["steps_per_defendant"] <= 7 and m["planner_calls_per_defendant"] == 0
    summary = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert summary["mode"] == "agentic" and summary["metrics"]["agentic"] == m
    assert "agentic: {" in capsys.readouterr().out


def test_an_unknown_mode_is_refused(world):  # noqa: F811
    from django.core.management import CommandError

    with pytest.raises(CommandError):
        call_command("evaluate", "--cases", str(world), "--mode", "wandering", "--no-progress")
