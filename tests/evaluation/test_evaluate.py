"""`manage.py evaluate` end to end on the demo corpus: the real pipeline, stored predictions,
metrics files, resuming, comparison, and the dashboard pages."""

import csv
import json
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from apps.corpus.services.indexing import search_indexes_build
from apps.evaluation.models import EvaluationCase, EvaluationRun
from apps.evaluation.services import evaluating
from apps.graph.services.building import graph_build

pytestmark = pytest.mark.django_db
DEMO = Path(__file__).resolve().parents[2] / "apps" / "corpus" / "demo"

RECORDS = [
    {"id": "t-theft", "fact": "公诉机关指控：2018年5月，被告人张某趁夜翻墙进入被害人家中，窃取现金人民币五千元及手机一部。案发后张某主动投案。",
     "defendants": ["张某"], "charges": ["盗窃罪"], "articles": [264], "term": {"months": 8, "life": False, "death": False}},
    {"id": "t-injury", "fact": "公诉机关指控：被告人李某因琐事与被害人王某发生争执，持木棍击打王某头部，致王某轻伤二级。",
     "defendants": ["李某"], "charges": ["故意伤害罪"], "articles": [234], "term": {"months": 10, "life": False, "death": False}},
    {"id": "t-two", "fact": "公诉机关指控：被告人赵某、钱某醉酒后驾驶机动车在道路上行驶，血液酒精含量分别为每百毫升一百八十毫克和二百毫克。",
     "defendants": ["赵某", "钱某"], "charges": ["危险驾驶罪"], "articles": [133], "term": {"months": 2, "life": False, "death": False}},
]


@pytest.fixture
def world(db, tmp_path):
    call_command("import_corpus", str(DEMO), "--no-progress")
    search_indexes_build()
    graph_build()
    call_command("train_statistical", "--cases", str(DEMO / "cases.jsonl"), "--no-dev-split")
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in RECORDS) + "\n", encoding="utf-8")
    return path


def _predictions(run):
    return {c.case_id: (c.prediction["charges"], c.prediction["articles"], c.prediction["term"], c.status)
            for c in run.cases.all()}


def test_evaluate_stores_every_prediction_and_writes_the_metrics(world, tmp_path, capsys):
    out = tmp_path / "out"
    call_command("evaluate", "--cases", str(world), "--label", "demo", "--out", str(out), "--no-progress")
    run = EvaluationRun.objects.get()
    assert run.status == EvaluationRun.Status.DONE and run.done == run.total == 3
    cases = {c.case_id: c for c in run.cases.all()}
    assert set(cases) == {"t-theft", "t-injury", "t-two"}
    # The two-defendant record ran the pipeline once per defendant.
    assert [b["defendant"] for b in cases["t-two"].bundles] == ["赵某", "钱某"]
    theft = cases["t-theft"]
    assert theft.status == "judged" and "盗窃罪" in theft.prediction["charges"] and theft.charges_correct
    assert "264" in theft.prediction["verified_articles"]
    m = run.metrics
    # The paper's protocol scores one entry per defendant judgment (4); the union per record is the second view.
    assert m["n"] == 4 and m["protocol"] == "per_defendant" and m["records"] == 3
    assert m["per_record"]["n"] == 3
    assert m["per_record"]["charges"]["accuracy"] == sum(c.charges_correct for c in cases.values()) / 3
    assert m["cost"]["defendants"] == 4 and m["cost"]["llm_calls"]["mean"] == 0
    assert run.versions.get("strategy") == "statistical/2"
    summary = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert summary["metrics"]["charges"] == m["charges"] and summary["cases"] == 3
    rows = list(csv.DictReader((out / "metrics.csv").open(encoding="utf-8")))
    assert rows[0]["scope"] == "overall" and rows[0]["run"] == "demo" and float(rows[0]["charge_acc"]) == pytest.approx(m["charges"]["accuracy"])
    assert "charges: accuracy" in capsys.readouterr().out


def test_an_interrupted_run_resumes_to_the_same_predictions(world):
    whole = evaluating.evaluation_create(path=world, label="whole")
    evaluating.evaluation_execute(whole)

    def interrupt(done, total):
        if done == 1:
            raise KeyboardInterrupt

    broken = evaluating.evaluation_create(path=world, label="broken")
    with pytest.raises(KeyboardInterrupt):
        evaluating.evaluation_execute(broken, progress=interrupt)
    broken.refresh_from_db()
    assert broken.status == EvaluationRun.Status.FAILED and "interrupted after 1 of 3" in broken.message
    assert broken.cases.count() == 1
    call_command("evaluate", "--resume", str(broken.pk), "--no-progress")
    broken.refresh_from_db()
    assert broken.status == EvaluationRun.Status.DONE and broken.cases.count() == 3
    # Deterministic: the resumed run equals the uninterrupted one, case by case and in its metrics.
    assert _predictions(broken) == _predictions(whole)
    assert _without_timing(broken.metrics) == _without_timing(whole.metrics)


def _without_timing(metrics: dict) -> dict:
    """The metrics of both views without what a clock measures."""
    out = {k: v for k, v in metrics.items() if k not in ("cost", "wall_seconds")}
    out["per_record"] = {k: v for k, v in out["per_record"].items() if k not in ("cost", "wall_seconds")}
    return out


def test_a_time_slice_stops_early_and_the_next_one_finishes(world):
    run = evaluating.evaluation_create(path=world)
    run = evaluating.evaluation_execute(run, max_seconds=0)
    assert run.status == EvaluationRun.Status.RUNNING and run.cases.count() == 1
    run = evaluating.evaluation_execute(run)
    assert run.status == EvaluationRun.Status.DONE and run.cases.count() == 3


def test_a_changed_set_is_not_resumed(world):
    run = evaluating.evaluation_create(path=world, limit=1)
    world.write_text(world.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    with pytest.raises(CommandError, match="changed since run"):
        call_command("evaluate", "--resume", str(run.pk), "--no-progress")


@pytest.mark.parametrize(("content", "message"), [
    (b"{not json}\n", "line 1: not JSON"),
    (b'{"id": "a", "fact": "x", "charges": ["c"]}\n{"id": "a", "fact": "y", "charges": []}\n', "line 2: duplicate id"),
    (b'{"id": "a", "charges": ["c"]}\n', "line 1: field 'fact'"),
    (b"\xff\xfe", "not UTF-8"),
    (b"\n\n", "no records"),
])
def test_a_bad_set_is_refused_with_the_line(db, tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(CommandError, match=message):
        call_command("evaluate", "--cases", str(path), "--no-progress")
    assert not EvaluationRun.objects.exists()


def test_compare_prints_runs_side_by_side(world, capsys):
    call_command("evaluate", "--cases", str(world), "--no-progress", "--label", "full")
    call_command("evaluate", "--cases", str(world), "--no-progress", "--label", "naive", "--ablation", "naive_rag")
    first, second = EvaluationRun.objects.order_by("pk")
    capsys.readouterr()
    call_command("evaluation_compare", str(first.pk), str(second.pk))
    out = capsys.readouterr().out
    assert "charges.accuracy" in out and f"#{second.pk} naive" in out
    assert second.ablation == "naive_rag" and second.cases.count() == 3
    # naive RAG has no Auditor: every candidate article is "verified".
    for case in second.cases.all():
        for bundle in case.bundles:
            if bundle["audit"]:
                assert all(a["passed"] for a in bundle["audit"]["articles"])
    with pytest.raises(CommandError, match="no evaluation run 999"):
        call_command("evaluation_compare", str(first.pk), "999")


def test_static_plots_are_written(world, tmp_path):
    call_command("evaluate", "--cases", str(world), "--no-progress", "--limit", "1")
    call_command("evaluate", "--cases", str(world), "--no-progress", "--limit", "1", "--ablation", "naive_rag",
                 "--exclude-self")
    leave_one_out = EvaluationRun.objects.order_by("pk").last()
    assert leave_one_out.exclude_self and leave_one_out.cases.get().bundles[0]["params"]["exclude_self"] is True
    runs = [str(pk) for pk in EvaluationRun.objects.order_by("pk").values_list("pk", flat=True)]
    call_command("evaluation_plots", *runs, "--out", str(tmp_path / "img"))
    written = sorted(p.name for p in (tmp_path / "img").iterdir())
    assert written == ["accuracy_per_category.png", "accuracy_per_run.png", "cost_per_run.png"]
    assert all((tmp_path / "img" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for name in written)


def test_dashboard_pages(world, personas):
    call_command("evaluate", "--cases", str(world), "--no-progress", "--label", "base")
    call_command("evaluate", "--cases", str(world), "--no-progress", "--label", "other", "--ablation", "no_auditor")
    base, other = EvaluationRun.objects.order_by("pk")
    clerk, admin = personas.client(personas.staff_a), personas.client(personas.admin)
    page = clerk.get("/evaluation/")
    assert page.status_code == 200 and b"base" in page.content and b"Upload and evaluate" not in page.content
    detail = clerk.get(f"/evaluation/{base.pk}/")
    assert detail.status_code == 200 and "t-theft".encode() in detail.content and b'id="categories"' in detail.content
    assert clerk.get(f"/evaluation/{base.pk}/?outcome=correct").status_code == 200
    case = clerk.get(f"/evaluation/{base.pk}/cases/t-theft/")
    assert case.status_code == 200 and "盗窃罪".encode() in case.content
    en = clerk.get(f"/evaluation/{base.pk}/cases/t-theft/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    status = re.search(r'<td class="status-(\w+)">([^<]*)</td>', en)
    assert status.group(1) == "judged" and status.group(2) == "judged", "the status's label, not its code and a message"
    zh = clerk.get(f"/evaluation/{base.pk}/cases/t-theft/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert re.search(r'<td class="status-judged">([^<]*)</td>', zh).group(1) == "已裁判"
    assert clerk.get(f"/evaluation/{base.pk}/cases/nope/").status_code == 404
    csv_response = clerk.get(f"/evaluation/{base.pk}/metrics.csv")
    assert csv_response.status_code == 200 and b"charge_acc" in b"".join(csv_response.streaming_content)
    # Only an admin marks the reference; the other run is then compared against it.
    assert clerk.post(f"/evaluation/{base.pk}/reference/").status_code == 403
    assert admin.post(f"/evaluation/{base.pk}/reference/").status_code == 302
    base.refresh_from_db()
    assert base.is_reference
    against = clerk.get(f"/evaluation/{other.pk}/")
    assert b'id="against-reference"' in against.content
    compared = clerk.get(f"/evaluation/compare/?runs={base.pk}&runs={other.pk}")
    assert compared.status_code == 200 and b'id="comparison"' in compared.content
    # A clerk cannot launch an evaluation.
    assert clerk.post("/evaluation/", {}).status_code == 404


def test_selectors_mark_a_drop_as_a_regression(db):
    from apps.evaluation.selectors import comparison

    good = EvaluationRun(pk=1, metrics={"charges": {"accuracy": 0.5}, "term": {"mae": 10.0}})
    bad = EvaluationRun(pk=2, metrics={"charges": {"accuracy": 0.4}, "term": {"mae": 12.0}})
    rows = {r["metric"]: r["cells"][1] for r in comparison([good, bad])}
    assert rows["charges.accuracy"]["regression"] and rows["term.mae"]["regression"]
    rows = {r["metric"]: r["cells"][1] for r in comparison([bad, good])}
    assert not rows["charges.accuracy"]["regression"] and not rows["term.mae"]["regression"]


def test_an_admin_upload_is_evaluated_by_the_worker(world, personas, django_capture_on_commit_callbacks):
    """Upload through the page: the run is queued after commit and the task continues it to the end."""
    admin = personas.client(personas.admin)
    with open(world, "rb") as handle, django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = admin.post("/evaluation/", {"file": handle, "strategy": "statistical", "ablation": "full", "limit": 1})
    assert response.status_code == 302
    run = EvaluationRun.objects.get()
    assert run.total == 1 and len(callbacks) == 1
    # The worker cannot see this test's uncommitted rows, so run the task body here, as the worker would.
    from worker.tasks import training_evaluation_run

    training_evaluation_run.apply(args=[run.pk])
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.DONE and EvaluationCase.objects.filter(run=run).count() == 1


def test_a_stored_bundle_replays_unchanged_until_the_graph_changes(world, capsys):
    call_command("evaluate", "--cases", str(world), "--no-progress", "--limit", "1")
    run = EvaluationRun.objects.get()
    capsys.readouterr()
    call_command("replay_bundle", "--evaluation", str(run.pk), "--case", "t-theft")
    assert "张某: unchanged (judged)" in capsys.readouterr().out
    # Remove the theft article's checklist: the Auditor's grid changes and the diff names it.
    from apps.corpus.models import ChecklistItem
    from apps.graph.services.projection import graph_project_all

    ChecklistItem.objects.filter(article_version__article__number=264).delete()
    graph_project_all()
    call_command("replay_bundle", "--evaluation", str(run.pk), "--case", "t-theft")
    out = capsys.readouterr().out
    assert "[auditor] article 264 item" in out and "1 bundle(s), 1 changed" in out
    with pytest.raises(CommandError, match="no case 'nope'"):
        call_command("replay_bundle", "--evaluation", str(run.pk), "--case", "nope")
