"""The evidence view-model of a finished run is derived once per bundle, language and corpus generation
and kept in the shared cache (apps/cases/evidence.py evidence_view): the page it renders is the page the
view-model built from the bundle renders, a changed bundle or another language is derived again, and the
cache is reached only after the team check."""

import re
from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.cases import evidence
from apps.cases.models import DefendantResult

pytestmark = pytest.mark.django_db

CSRF = re.compile(r'(value|nonce)="[^"]*"|"X-CSRFToken": "[^"]*"')


def _page(client, url, **params) -> str:
    response = client.get(url, params)
    assert response.status_code == 200, (url, params, response.status_code)
    return CSRF.sub("", response.content.decode())


@pytest.mark.parametrize("params", [{"all": "1"}, {}, {"part": "rejected"}, {"part": "graph"}, {"part": "analysis"}])
def test_the_cached_view_model_renders_the_page_the_bundle_renders(judged_run, personas, params):
    import apps.cases.views as views

    client = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="zh-hans")
    url = f"/cases/runs/{judged_run.pk}/defendants/0/"
    _page(client, url, **params)
    cached = _page(client, url, **params)
    with mock.patch.object(views, "evidence_view", evidence.evidence_context):
        built = _page(client, url, **params)
    assert cached == built


def test_a_second_view_reads_neither_the_corpus_nor_the_registry(judged_run, personas):
    client = personas.client(personas.staff_a)
    url = f"/cases/runs/{judged_run.pk}/defendants/0/"
    client.get(url)
    with mock.patch.object(evidence, "evidence_context", wraps=evidence.evidence_context) as built:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
    tables = {t for q in queries.captured_queries for t in re.findall(r'"((?:corpus|graph|registry)_\w+)"', q["sql"])}
    assert built.call_count == 0 and not tables, tables


def test_a_changed_bundle_and_another_language_are_derived_again(judged_run, personas, compiled_catalogs):
    url = f"/cases/runs/{judged_run.pk}/defendants/0/"
    english = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="en")
    chinese = personas.client(personas.staff_a, HTTP_ACCEPT_LANGUAGE="zh-hans")
    english.get(url)
    with mock.patch.object(evidence, "evidence_context", wraps=evidence.evidence_context) as built:
        assert "Verified precedents" in english.get(url).content.decode() and built.call_count == 0
        assert "Verified precedents" not in chinese.get(url).content.decode() and built.call_count == 1
        # A retention purge or any other rewrite of the stored bundle is another bundle: another view-model.
        result = judged_run.results.get(position=0)
        judgment = {**result.bundle["judgment"], "message": "示例：存储的证据包已改写"}
        DefendantResult.objects.filter(pk=result.pk).update(bundle={**result.bundle, "judgment": judgment})
        assert "示例：存储的证据包已改写" in english.get(url).content.decode() and built.call_count == 2


def test_another_team_never_reaches_a_cached_view_model(judged_run, personas):
    import apps.cases.views as views

    url = f"/cases/runs/{judged_run.pk}/defendants/0/"
    personas.client(personas.staff_a).get(url)
    with mock.patch.object(views, "evidence_view", wraps=views.evidence_view) as read:
        assert personas.client(personas.staff_b).get(url).status_code == 404
        assert personas.client(personas.staff_b).get(url, {"part": "rejected"}).status_code == 404
    assert read.call_count == 0
