"""Search indexes: built beside the active one, switched atomically, and they find things."""

import pytest

from apps.corpus.models import ArticleVersion, Precedent, SearchIndex
from apps.corpus.search_service import bm25_search, dense_search
from apps.corpus.services import indexing

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_indexes(demo_corpus_loaded):
    return indexing.search_indexes_build()


@pytest.fixture
def demo_corpus_loaded(db):
    from django.core.management import call_command

    from tests.graph.conftest import DEMO

    call_command("import_corpus", str(DEMO), "--no-progress")


def test_bm25_and_vector_search_find_a_case_from_its_own_facts(demo_indexes):
    case = Precedent.objects.get(ext_id="demo-case-010")
    assert bm25_search(target="precedents", query=case.fact, k=3)[0][0] == case.pk
    assert dense_search(target="precedents", query=case.fact, k=3)[0][0] == case.pk
    assert dense_search(target="precedents", query=case.fact, k=3, exact=True)[0][0] == case.pk


def test_article_search_finds_the_theft_article_for_a_theft_description(demo_indexes):
    hits = bm25_search(target="articles", query="盗窃公私财物，数额较大，入户盗窃", k=3)
    labels = [ArticleVersion.objects.get(pk=pk).article.number for pk, _ in hits]
    assert 264 in labels


def test_every_index_records_its_model_and_size(demo_indexes):
    assert {(i.target, i.method) for i in SearchIndex.objects.filter(active=True)} == {
        ("articles", "bm25"), ("precedents", "bm25"), ("articles", "dense"), ("precedents", "dense")}
    for index in SearchIndex.objects.filter(active=True):
        assert index.model_id and index.documents > 0 and index.status == "ready"
        if index.method == "dense":
            assert index.vectors.count() == index.documents and index.dim


def test_a_failed_rebuild_leaves_the_previous_index_serving(demo_indexes, monkeypatch):
    before = SearchIndex.objects.get(target="precedents", method="dense", active=True)
    case = Precedent.objects.get(ext_id="demo-case-010")

    def broken(self, texts):
        raise RuntimeError("embedding server gone")

    from lexlib.search.embeddings import LSABackend

    monkeypatch.setattr(LSABackend, "embed_tokens", broken)
    with pytest.raises(RuntimeError):
        indexing.search_indexes_build()
    assert SearchIndex.objects.get(target="precedents", method="dense", active=True) == before
    assert SearchIndex.objects.filter(status="failed").exists()
    monkeypatch.undo()
    assert dense_search(target="precedents", query=case.fact, k=1)[0][0] == case.pk


def test_a_rebuild_switches_to_the_new_index(demo_indexes):
    old = set(SearchIndex.objects.filter(active=True).values_list("pk", flat=True))
    indexing.search_indexes_build()
    new = set(SearchIndex.objects.filter(active=True).values_list("pk", flat=True))
    assert len(new) == 4 and not (old & new)
