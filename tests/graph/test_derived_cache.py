"""The graph pages read what they show from the shared cache (apps/core/caching.py) until the corpus or
the graph changes: the statistics' counts and the explorer's neighbours are counted once per generation,
and an import, a projection or a sync makes the next read count again."""

import re
from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.core.caching import generation
from apps.graph import age
from apps.graph.services.projection import graph_project_all, graph_sync

pytestmark = pytest.mark.django_db


def _page(client, url) -> str:
    """The page without its per-response CSRF tokens and nonces."""
    return re.sub(r'(value|nonce)="[^"]*"|"X-CSRFToken": "[^"]*"', "", client.get(url).content.decode())


def _cypher_reads(client, url) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return sum("cypher" in q["sql"] for q in queries.captured_queries)  # cypher(…), or its prepared lx_cypher_…


def test_a_corpus_import_and_a_graph_projection_advance_the_generation(demo_corpus):
    from apps.corpus.services.importing import ImportOptions, corpus_import
    from tests.corpus.test_cail import cail, lines

    before = generation()
    graph_project_all()
    projected = generation()
    assert projected != before
    batch = corpus_import(data=lines(cail(fact="公诉机关指控：被告人某甲在示范市盗窃财物，价值人民币二千元。")),
                          filename="one.json", options=ImportOptions(format="cail2018"))
    assert batch.status == "published" and generation() != projected


def test_the_statistics_are_counted_once_per_generation(personas, demo_corpus):
    graph_project_all()
    client = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="en")
    with mock.patch.object(age, "label_counts", wraps=age.label_counts) as counted:
        first = _page(client, "/graph/")
        second = _page(client, "/graph/")
        assert counted.call_count == 1 and first == second and "consistent" in first
        graph_sync("Article", [])  # nothing to sync: nothing changed, nothing counted
        client.get("/graph/")
        assert counted.call_count == 1
        from apps.corpus.models import Article

        graph_sync("Article", Article.objects.values_list("pk", flat=True)[:3])
        assert "consistent" in client.get("/graph/").content.decode()
        assert counted.call_count == 2, "a sync makes the next view count again"


def test_the_explorer_reads_a_vertex_neighbours_once_per_generation(personas, demo_corpus):
    graph_project_all()
    client = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="en")
    url = "/graph/explore/?q=264"
    assert _cypher_reads(client, url) > 0
    assert _cypher_reads(client, url) == 0, "the neighbour groups and the page come from the cache"
    page = _page(client, url)
    graph_project_all()
    assert _cypher_reads(client, url) > 0, "a new projection is read again"
    assert _page(client, url) == page
