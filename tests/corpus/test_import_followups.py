"""After an import: the search indexes follow incrementally, and nothing is silently stale
(the freshness panel, the models' "retrain needed" state and its one button)."""

import datetime as dt

import pytest
from django.core.management import call_command
from django.utils import timezone

from apps.corpus.models import ArticleVersion, DenseVector, Precedent, SearchIndex
from apps.corpus.search_service import bm25_search
from apps.corpus.selectors import corpus_freshness
from apps.corpus.services import indexing
from apps.corpus.services.importing import ImportOptions, corpus_import
from apps.registry.models import ModelVersion, TrainingRun
from apps.registry.selectors import models_freshness
from tests.corpus.test_cail import cail, lines
from tests.graph.conftest import DEMO

pytestmark = pytest.mark.django_db

DEMO_CASES = sum(1 for line in (DEMO / "cases.jsonl").read_text(encoding="utf-8").splitlines() if line.strip())

NEW_FACTS = [
    "公诉机关指控：某日凌晨，被告人癸某潜入示范市码头仓储区，用液压钳剪断围栏，盗走紫铜电缆三百米，价值人民币一万八千元。",
    "公诉机关指控：某日下午，被告人癸某某在示范市轮渡候船厅内，趁乘客熟睡之机，扒窃其外衣口袋内现金人民币九百元。",
]


@pytest.fixture
def indexed_demo(db):
    call_command("import_corpus", str(DEMO), "--no-progress")
    indexing.search_indexes_build()


def active(target, method) -> SearchIndex:
    return SearchIndex.objects.get(target=target, method=method, active=True)


def test_an_import_brings_bm25_and_dense_indexes_up_to_date_without_a_full_rebuild(indexed_demo):
    old_bm25 = active("precedents", "bm25")
    batch = corpus_import(data=lines(*(cail(fact=f) for f in NEW_FACTS)), filename="new.json",
                          options=ImportOptions(format="cail2018"))
    assert batch.status == "published"
    follow = batch.report["follow_up"]["search"]
    assert follow["state"] == "followed" and follow["precedents"]["bm25"].startswith("2 documents added or changed")
    new_bm25 = active("precedents", "bm25")
    assert new_bm25.pk != old_bm25.pk and new_bm25.documents == Precedent.objects.count() == DEMO_CASES + 2
    target = Precedent.objects.get(fact=NEW_FACTS[0])
    assert bm25_search(target="precedents", query="码头仓储区 紫铜电缆 液压钳", k=1)[0][0] == target.pk
    dense = active("precedents", "dense")
    assert DenseVector.objects.filter(index=dense, object_id=target.pk).exists() and dense.documents == DEMO_CASES + 2
    assert all(not (r["behind"] or r["ahead"]) for r in corpus_freshness()["search"])

    # The kept tokens give exactly the scores of a full rebuild.
    incremental = bm25_search(target="precedents", query=NEW_FACTS[1], k=5)
    indexing.bm25_index_build(target="precedents")
    assert bm25_search(target="precedents", query=NEW_FACTS[1], k=5) == incremental


def test_a_statute_amendment_is_followed_in_the_article_indexes(indexed_demo):
    text = "第二百六十四条　盗窃公私财物，数额较大的，或者多次盗窃、入户盗窃、携带凶器盗窃、扒窃的，处三年以下有期徒刑（示例修订）。\n"
    batch = corpus_import(data=text.encode(), filename="刑法.txt", options=ImportOptions(
        format="statute-txt", law_title="中华人民共和国刑法", effective_date=dt.date(2030, 1, 1)))
    assert batch.status == "published" and batch.counts["amended"] == 1, batch.errors
    assert active("articles", "bm25").documents == ArticleVersion.objects.count()
    assert active("articles", "dense").documents == ArticleVersion.objects.count()
    assert batch.report["follow_up"]["search"]["articles"]["bm25"].startswith("1 documents added")


def test_a_new_charge_name_changes_the_tokenizer_and_every_document_is_tokenized_again(indexed_demo):
    batch = corpus_import(data=lines(cail(fact=NEW_FACTS[0], accusation=["示例新罪名"])), filename="n.json",
                          options=ImportOptions(format="cail2018"))
    assert batch.counts["new_charge_names"] == 1
    assert batch.report["follow_up"]["search"]["precedents"]["bm25"] == f"rebuilt over {DEMO_CASES + 1} documents"


def test_a_failed_follow_up_leaves_the_import_published_and_the_index_visibly_behind(indexed_demo, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(indexing, "bm25_index_build", broken)
    batch = corpus_import(data=lines(cail(fact=NEW_FACTS[0])), filename="n.json", options=ImportOptions(format="cail2018"))
    assert batch.status == "published" and Precedent.objects.count() == DEMO_CASES + 1
    assert batch.report["follow_up"]["search"] == {"state": "failed", "detail": "RuntimeError: disk full"}
    behind = {(r["target"], r["method"]): r["behind"] for r in corpus_freshness()["search"]}
    assert behind[("precedents", "bm25")] == 1 and corpus_freshness()["stale"]


def test_the_models_need_retraining_after_an_import_and_one_button_launches_it(personas, django_capture_on_commit_callbacks):
    version = ModelVersion.objects.create(kind="charges", model_id="charges-x", artefact_dir="/nonexistent", active=True)
    assert models_freshness()["state"] == "fresh"
    client = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="en")
    assert 'id="models-fresh"' in client.get("/models/").content.decode()

    batch = corpus_import(data=lines(cail(fact=NEW_FACTS[0])), filename="n.json", options=ImportOptions(format="cail2018"))
    state = models_freshness()
    assert state["state"] == "stale" and state["since"] == [batch] and state["precedents_added"] == 1
    page = client.get("/models/").content.decode()
    assert 'id="retrain-needed"' in page and "n.json" in page and 'id="retrain"' in page
    assert "retrain needed" in client.get("/corpus/imports/").content.decode()

    # The button is the existing retraining job: a queued run whose task is sent when the request commits.
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert client.post("/models/").status_code == 302
    assert len(callbacks) == 1 and TrainingRun.objects.get().status == TrainingRun.Status.QUEUED
    assert "Retraining is in progress" in client.get("/models/").content.decode()

    # Models trained after the import (a run that started later) are fresh again.
    run = TrainingRun.objects.get()
    run.status, run.started_at = TrainingRun.Status.PROMOTED, timezone.now()
    run.save()
    run.versions.add(version)
    assert models_freshness()["state"] == "fresh"


def test_an_import_that_changes_nothing_does_not_make_the_models_stale(personas):
    corpus_import(data=lines(cail(fact=NEW_FACTS[0])), filename="n.json", options=ImportOptions(format="cail2018"))
    ModelVersion.objects.create(kind="charges", model_id="charges-x", artefact_dir="/nonexistent", active=True)
    again = corpus_import(data=lines(cail(fact=NEW_FACTS[0] + "。")), filename="n2.json", options=ImportOptions(format="cail2018"))
    assert again.counts["merged"] == 1 and models_freshness()["state"] == "fresh"


def test_successive_follow_ups_keep_only_the_active_and_the_previous_bm25_index(indexed_demo):
    from pathlib import Path

    third = "公诉机关指控：某日中午，被告人子某在示范市农贸市场东门，趁摊主午休之机，从收银抽屉内取走现金人民币一千一百元后逃离。"
    for n, fact in enumerate(NEW_FACTS + [third]):
        corpus_import(data=lines(cail(fact=fact)), filename=f"n{n}.json", options=ImportOptions(format="cail2018"))
    kept = SearchIndex.objects.filter(target="precedents", method="bm25")
    assert kept.count() == 2 and kept.filter(active=True).count() == 1
    assert all(Path(i.artefact_dir).is_dir() for i in kept)


def test_a_dry_run_of_interpretations_reports_counts_and_writes_nothing(db):
    from apps.corpus.models import Interpretation
    from apps.corpus.services.importing import corpus_check
    from tests.corpus.conftest import jsonl, statute

    corpus_import(data=jsonl(statute(264)), filename="statutes.jsonl")
    interp = {"id": "JI-T9", "source": "示例解释", "para": "第一条", "text": "盗窃数额较大的标准示例。", "articles": [264]}
    report = corpus_check(files=[("interpretations.jsonl", jsonl(interp))], options=ImportOptions())
    assert report["counts"] == {"added": 1, "unchanged": 0, "links": 1, "refused": 0}
    assert Interpretation.objects.count() == 0


def test_the_demo_rebuilds_search_indexes_only_when_they_are_behind_the_corpus(indexed_demo, monkeypatch, capsys):
    from apps.corpus.selectors import search_indexes_current

    before = active("precedents", "bm25").pk
    call_command("build_search_indexes", "--if-outdated")
    assert "nothing to do" in capsys.readouterr().out and active("precedents", "bm25").pk == before

    def broken(**kwargs):
        raise RuntimeError("disk full")

    with monkeypatch.context() as m:  # the follow-up fails: the new precedent is in no index
        m.setattr(indexing, "bm25_index_build", broken)
        corpus_import(data=lines(cail(fact=NEW_FACTS[0])), filename="n.json", options=ImportOptions(format="cail2018"))
    assert not search_indexes_current()
    call_command("build_search_indexes", "--if-outdated")
    assert "nothing to do" not in capsys.readouterr().out
    assert search_indexes_current() and active("precedents", "bm25").documents == DEMO_CASES + 1


def test_models_are_current_only_when_every_kind_was_trained_after_the_corpus_last_changed(db):
    from apps.corpus.selectors import graph_current
    from apps.registry.selectors import models_current

    assert not graph_current()  # nothing built yet
    kinds = list(ModelVersion.Kind.values)
    for kind in kinds[:-1]:
        ModelVersion.objects.create(kind=kind, model_id=f"{kind}-x", artefact_dir="/nonexistent", active=True)
    assert not models_current()  # one kind missing
    ModelVersion.objects.create(kind=kinds[-1], model_id=f"{kinds[-1]}-x", artefact_dir="/nonexistent", active=True)
    assert models_current()
    corpus_import(data=lines(cail(fact=NEW_FACTS[0])), filename="n.json", options=ImportOptions(format="cail2018"))
    assert not models_current()  # the demo's `train_statistical --if-outdated` trains again
