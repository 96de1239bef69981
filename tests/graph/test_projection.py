"""The AGE projection mirrors the relational tables, fully and incrementally."""

import pytest
from django.db import transaction

from apps.corpus.models import Article, ArticleVersion, ChecklistItem, Precedent
from apps.graph import age
from apps.graph.services.projection import expected_counts, graph_consistency, graph_project_all, graph_sync
from apps.graph.store import AgeGraphStore

pytestmark = pytest.mark.django_db


def test_a_full_projection_has_one_graph_element_per_row(demo_corpus):
    counts = graph_project_all()
    assert counts == expected_counts()
    assert graph_consistency() == {}
    assert counts["Case"] == Precedent.objects.count() and counts["ChecklistItem"] == ChecklistItem.objects.count()
    # Every article with a checklist has it in the graph.
    for article in Article.objects.filter(versions__checklist__isnull=False).distinct():
        assert AgeGraphStore().checklist(article.pk), article.label


def test_a_failure_after_the_relational_write_rolls_both_back(demo_corpus):
    graph_project_all()
    before = age.label_counts()
    case = Precedent.objects.first()
    with pytest.raises(RuntimeError), transaction.atomic():
        case.outcomes.all().delete()
        graph_sync("Case", [case.pk])
        raise RuntimeError("crash after the graph write")
    assert age.label_counts() == before
    assert graph_consistency() == {}


def test_deleting_a_precedent_updates_the_graph_without_a_rebuild(demo_corpus):
    graph_project_all()
    case = Precedent.objects.get(ext_id="demo-case-002")
    with transaction.atomic():
        pk = case.pk
        case.delete()
        graph_sync("Case", [pk])
    assert graph_consistency() == {}
    assert AgeGraphStore().case(pk) is None


def test_amending_an_article_updates_the_graph_without_a_rebuild(demo_corpus):
    import datetime as dt

    graph_project_all()
    article = Article.objects.get(number=266, sub=0)
    old = article.versions.get()
    with transaction.atomic():
        old.valid_to = dt.date(2024, 12, 31)
        old.save(update_fields=["valid_to"])
        new = ArticleVersion.objects.create(article=article, text="修订后的示例条文。", text_sha256="x",
                                            valid_from=dt.date(2025, 1, 1), supersedes=old)
        ChecklistItem.objects.create(article_version=new, order=0, question="是否虚构事实或者隐瞒真相")
        graph_sync("Article", [article.pk])
    assert graph_consistency() == {}
    store = AgeGraphStore()
    assert [e.question for e in store.checklist(article.pk)] == ["是否虚构事实或者隐瞒真相"]
    assert len(store.checklist(article.pk, old.pk)) == old.checklist.filter(variant="main").count()
    assert store.cases_of_offence("诈骗罪"), "incoming CITES edges were restored"
    assert {a.number for a in store.articles_defining("诈骗罪")} == {266}


def test_the_consistency_check_notices_drift(demo_corpus):
    graph_project_all()
    age.cypher("MATCH (c:Case) WITH c LIMIT 1 DETACH DELETE c RETURN 1", columns=["x"])
    drift = graph_consistency()
    assert "Case" in drift and drift["Case"][1] == drift["Case"][0] - 1


def test_the_store_answers_the_agents_questions(demo_corpus):
    graph_project_all()
    store = AgeGraphStore()
    theft = store.cases_of_offence("盗窃罪", limit=100)
    assert theft and all("盗窃罪" in c.charges for c in theft)
    assert [c.pk for c in theft] == sorted(c.pk for c in theft)
    showcase = next(c for c in theft if c.ext_id == "demo-case-001")
    assert {a.number for a in store.articles_of_case(showcase.pk)} == {264, 266}
    texts = store.article_texts(store.articles_defining("盗窃罪")[0].pk)
    assert len(texts) == 2 and texts[0].valid_to is not None and texts[1].valid_to is None
    drunk = store.articles_defining("危险驾驶罪")[0]
    assert (drunk.number, drunk.sub) == (133, 1)
    assert [a.number for a in store.references(drunk.pk)] == [133]
    referring = store.referring([Article.objects.get(number=133, sub=0).pk, drunk.pk])
    assert [(a.number, a.sub) for a in referring[Article.objects.get(number=133, sub=0).pk]] == [(133, 1)]
    assert drunk.pk not in referring and referring[Article.objects.get(number=133, sub=0).pk][0].charges == ("危险驾驶罪",)
    assert store.interpretations(Article.objects.get(number=264).pk)


def test_an_imported_unit_crime_provision_is_found_from_an_article_of_its_range(demo_corpus):
    """The range of a unit-crime provision becomes REFERS_TO edges on import, and the store reads them
    backwards: what the Researcher asks when the facts show a unit crime (worker/agents/stages/researcher)."""
    from apps.corpus.services.importing import corpus_import
    from tests.corpus.conftest import jsonl, statute
    from worker.agents.stages.researcher import unit_provisions

    graph_project_all()
    unit = "单位犯本节第二百六十三条至第二百六十七条规定之罪的，对单位判处罚金，并对其直接负责的主管人员依照各该条的规定处罚。"
    batch = corpus_import(data=jsonl(statute(269, text=unit)), filename="statutes.jsonl")
    assert batch.status == "published", batch.errors
    provision = Article.objects.get(number=269)
    assert {a.number for a in provision.refers_to.all()} >= {263, 264, 266, 267}
    graph_sync("Article", [provision.pk])  # what the import's follow-up does once a graph is built
    assert graph_consistency() == {}
    store = AgeGraphStore()
    theft = store.articles_defining("盗窃罪")[0]
    assert [(a.number, a.charges) for a in store.referring([theft.pk])[theft.pk]] == [(269, ())]
    murder = store.articles_defining("故意杀人罪")[0]
    assert unit_provisions([theft, murder], store) == [provision.pk]  # 232 is outside the range
