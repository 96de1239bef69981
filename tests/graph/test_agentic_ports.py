"""The ports the agentic planner added, over the database: interpretation search (BM25 over the
paragraphs), the articles an interpretation interprets, and what the severity index needs."""

import pytest

from apps.corpus.models import Article, Interpretation, Precedent, PrecedentOutcome
from apps.corpus.services.indexing import search_indexes_build
from apps.graph.retriever import DbRetriever
from apps.graph.services.projection import graph_project_all
from apps.graph.store import AgeGraphStore

pytestmark = pytest.mark.django_db


def test_interpretations_are_searched_and_linked_to_their_articles(demo_corpus):
    graph_project_all()
    theft = Article.objects.get(number=264)
    interp = Interpretation.objects.filter(articles=theft).order_by("pk").first()
    store = AgeGraphStore()
    assert theft.pk in [a.pk for a in store.interpreted_articles(interp.pk)]
    hits = DbRetriever().interpretations_sparse(interp.text[:30], 5)
    assert hits and hits[0][0] == interp.pk and hits[0][1] > 0
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    # the in-memory index follows the table: a new paragraph is found without a restart
    new = Interpretation.objects.create(ext_id="T-NEW", source="测试解释", para="第一条", text="醉驾型危险驾驶罪的血液酒精含量标准为八十毫克",
                                        text_sha256="x" * 64)
    assert DbRetriever().interpretations_sparse("血液酒精含量标准", 3)[0][0] == new.pk


def test_a_case_node_carries_what_the_severity_index_needs(demo_corpus):
    graph_project_all()
    outcome = PrecedentOutcome.objects.filter(position=0, term_known=True).order_by("precedent_id").first()
    PrecedentOutcome.objects.filter(pk=outcome.pk).update(term_kind="拘役", suspended=True)
    Precedent.objects.filter(pk=outcome.precedent_id).update(fine=3000)
    node = AgeGraphStore().case(outcome.precedent_id)
    assert (node.term_kind, node.suspended, node.fine) == ("拘役", True, 3000)


def test_search_indexes_do_not_index_interpretations(demo_corpus):
    # the interpretation search needs no index build: it works before search_indexes_build too
    assert DbRetriever().interpretations_sparse("盗窃", 3)
    search_indexes_build()
    assert DbRetriever().interpretations_sparse("盗窃", 3)


def test_judge_in_agentic_mode_over_the_live_graph(demo_corpus, capsys):
    from django.core.management import call_command

    from apps.graph.services.building import graph_build

    search_indexes_build()
    graph_build()
    call_command("judge", "--facts", "被告人张某于2018年5月翻墙进入被害人家中，秘密窃取现金人民币五千元。", "--defendant", "张某",
                 "--date", "2018-05-01", "--mode", "agentic", "--summary")
    out = capsys.readouterr().out
    assert out.startswith("张某: judged") and "盗窃罪" in out and "planner steps)" in out
