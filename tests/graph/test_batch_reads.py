"""The batch reads of the hot paths (issue 20) answer exactly what the one-item reads answered:
the set-based SQL of the cases, the batched articles and texts, the numpy-parsed vectors."""

import datetime as dt

import numpy as np
import pytest

from apps.corpus.models import Article, ArticleVersion, DenseVector, Precedent
from apps.corpus.services.indexing import search_indexes_build
from apps.graph.retriever import DbRetriever, _cosines, _vectors
from apps.graph.services.building import graph_build
from apps.graph.store import AgeGraphStore
from worker.agents.stages.auditor.provisions import DEFINITION_OPENING

pytestmark = pytest.mark.django_db


@pytest.fixture
def built(demo_corpus):
    search_indexes_build()
    graph_build()


def cypher_cases(store, pks):
    """What AgeGraphStore read for the cases before issue 20: three Cypher queries over the graph."""
    charges = dict(store._q("MATCH (c:Case)-[:CONVICTED_OF]->(o:Offence) WHERE c.pk IN $pks RETURN c.pk, collect(o.name)",
                            {"pks": pks}, ("pk", "names")))
    articles = dict(store._q("MATCH (c:Case)-[:CITES]->(a:Article) WHERE c.pk IN $pks RETURN c.pk, collect(a.pk)",
                             {"pks": pks}, ("pk", "arts")))
    heads = {r[0]: r for r in store._q("MATCH (c:Case) WHERE c.pk IN $pks RETURN c.pk, c.ext_id, c.court_level",
                                       {"pks": pks}, ("pk", "ext", "court"))}
    return {pk: (heads[pk][1], tuple(sorted(charges.get(pk, []))), tuple(sorted(articles.get(pk, []))),
                 heads[pk][2] or "") for pk in heads}


def test_the_cases_read_by_sql_are_the_graphs_cases(built):
    pks = list(Precedent.objects.order_by("pk").values_list("pk", flat=True)) + [10**9]  # one that does not exist
    store = AgeGraphStore()
    nodes = store.cases(pks)
    assert len(nodes) == len(pks) - 1
    assert {c.pk: (c.ext_id, c.charges, c.article_pks, c.court_level) for c in nodes} == cypher_cases(store, pks)
    assert any(len(c.charges) > 1 for c in nodes) or any(len(c.article_pks) > 1 for c in nodes), "a real test"


def test_prefetched_articles_texts_and_citations_equal_the_one_by_one_reads(built):
    article_pks = list(Article.objects.order_by("pk").values_list("pk", flat=True)) + [10**9]
    case_pks = list(Precedent.objects.order_by("pk").values_list("pk", flat=True))
    one_by_one = AgeGraphStore()
    batched = AgeGraphStore()
    batched.prefetch_articles(article_pks)
    batched.prefetch_articles_of_cases(case_pks)
    assert [batched.article(pk) for pk in article_pks] == [one_by_one.article(pk) for pk in article_pks]
    assert [batched.article_texts(pk) for pk in article_pks] == [one_by_one.article_texts(pk) for pk in article_pks]
    assert [batched.articles_of_case(pk) for pk in case_pks] == [one_by_one.articles_of_case(pk) for pk in case_pks]
    assert any(batched.article_texts(pk) for pk in article_pks) and batched.article(10**9) is None


def test_the_vectors_and_their_cosines_equal_pgvectors_own_parse(built):
    retriever = DbRetriever()
    index, query = retriever._ontology("盗窃 入户 现金")
    rows = DenseVector.objects.filter(index=index)
    theirs = list(rows.values_list("object_id", "vector"))
    ours = _vectors(rows)
    assert [pk for pk, _ in theirs] == [pk for pk, _ in ours] and len(ours) > 10
    assert all(np.array_equal(np.asarray(a, dtype=np.float64), b) for (_, a), (_, b) in zip(theirs, ours))
    assert _cosines(ours, query) == _cosines(theirs, query)
    # The retriever's per-run cache answers a second defendant from memory, with the same scores.
    pks = [pk for pk, _ in theirs]
    first = retriever.case_scores("盗窃 入户 现金", pks[:8])
    assert retriever.case_scores("盗窃 入户 现金", pks[:8]) == first == _cosines(
        [(pk, v) for pk, v in theirs if pk in set(pks[:8])], query)


def test_prefetched_offences_equal_the_one_by_one_reads(built):
    from apps.corpus.models import Charge

    names = list(Charge.objects.order_by("name").values_list("name", flat=True)) + ["不存在的罪名"]
    one_by_one = AgeGraphStore()
    batched = AgeGraphStore()
    batched.prefetch_offences(names, with_cases=names, cases_limit=3)
    queries = []
    batched._q = lambda *a, **k: queries.append(a) or AgeGraphStore._q(batched, *a, **k)  # nothing is read again
    assert [batched.articles_defining(n) for n in names] == [one_by_one.articles_defining(n) for n in names]
    assert [batched.cases_of_offence(n, limit=3) for n in names] == [one_by_one.cases_of_offence(n, limit=3) for n in names]
    assert not queries
    assert any(len(batched.cases_of_offence(n, limit=3)) == 3 for n in names), "a real test: some charge has 3+ cases"
    assert batched.cases_of_offence("不存在的罪名", limit=3) == [] and batched.articles_defining("不存在的罪名") == []


def test_community_scores_read_the_embeddings_as_pgvector_does(built):
    from apps.graph.models import Community
    from apps.graph.retriever import _cosines as cosines

    retriever = DbRetriever()
    index, query = retriever._ontology("盗窃 入户 现金")
    rows = Community.objects.filter(embedding_model=index.model_id, embedding__isnull=False)
    theirs = [(pk, np.asarray(e, dtype=np.float32)) for pk, e in rows.values_list("pk", "embedding")]
    assert theirs, "a real test: the demo graph has communities"
    assert retriever.community_scores("盗窃 入户 现金") == cosines(theirs, query)


def test_the_definitions_are_the_current_texts_opening_with_a_defined_term(built):
    law = Article.objects.first().law
    obscene = Article.objects.create(law=law, number=367, key="367", label="第三百六十七条")
    ArticleVersion.objects.create(article=obscene, text="本法所称淫秽物品，是指诲淫性的书刊。", text_sha256="d1")
    wartime = Article.objects.create(law=law, number=451, key="451", label="第四百五十一条")
    ArticleVersion.objects.create(article=wartime, text="本章所称战时，是指国家宣布进入战争状态。", text_sha256="d2",
                                  valid_to=dt.date(2000, 1, 1))  # no longer in force: not a definition today
    graph_build()
    found = AgeGraphStore().opening_with(DEFINITION_OPENING)
    numbers = [node.number for node, _ in found]
    assert 367 in numbers and 451 not in numbers and numbers == sorted(numbers)
    assert dict((node.number, text) for node, text in found)[367] == "本法所称淫秽物品，是指诲淫性的书刊。"
    assert all(text.startswith("本法所称") and not node.charges for node, text in found), "no article of an offence"
