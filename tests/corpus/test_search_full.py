"""Over the full shared corpus: a known fact finds its case by BM25 and by vector search."""

import json

import pytest
from django.core.management import call_command

from apps.corpus.models import Precedent
from apps.corpus.search_service import bm25_search, dense_search
from apps.corpus.services.indexing import search_indexes_build

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def test_a_known_fact_finds_its_case_over_the_full_corpus(shared_data, tmp_path):
    for name in ("statutes.jsonl", "charge_categories.json", "cases.jsonl"):
        call_command("import_corpus", str(shared_data / name), "--no-progress")
    search_indexes_build()
    with open(shared_data / "cases.jsonl", encoding="utf-8") as fh:
        known = [json.loads(next(fh)) for _ in range(3)]
    for record in known:
        expected = Precedent.objects.get(ext_id=record["id"]).pk
        assert bm25_search(target="precedents", query=record["fact"], k=5)[0][0] == expected
        assert expected in [pk for pk, _ in dense_search(target="precedents", query=record["fact"], k=5)]
