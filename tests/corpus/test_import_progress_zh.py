"""The stage of a running corpus import, shown in the page language on its detail page.

The import (apps/corpus/services/importing.py) reports each stage by its English name; the worker keeps
that name in the cache, where the page, `manage.py import_corpus` and the tests read it. The page
translates the name when it shows it (apps.corpus.selectors.IMPORT_STAGES); the cache is left as it is.
"""

import re
from pathlib import Path

import pytest
from django.core.cache import cache
from django.utils import translation

from apps.corpus.models import ImportBatch
from apps.corpus.selectors import IMPORT_STAGES
from apps.corpus.services import importing

CJK = re.compile(r"[\u4e00-\u9fff]")
CHINESE = {
    "reading": "读取文件",
    "checking against the corpus": "与语料库比对",
    "writing": "写入",
    "updating the graph": "更新图谱",
    "updating the search indexes": "更新搜索索引",
}


def test_every_stage_the_import_reports_has_a_chinese_name():
    source = Path(importing.__file__).read_text(encoding="utf-8")
    reported = set(re.findall(r'_stage\(progress, "([^"]+)"\)', source))
    assert reported == set(IMPORT_STAGES) == set(CHINESE)
    for stage, label in IMPORT_STAGES.items():
        with translation.override("zh-hans"):
            assert str(label) == CHINESE[stage] and CJK.search(str(label))
        with translation.override("en"):
            assert str(label) == stage


def _page(personas, batch, language, **headers):
    client = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE=language)
    return client.get(f"/corpus/imports/{batch.pk}/", **headers).content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("stage", sorted(CHINESE))
def test_the_detail_page_shows_the_stage_in_the_page_language(personas, stage):
    batch = ImportBatch.objects.create(filename="cases.jsonl", sha256="0" * 64, status="running")
    progress = {"done": 3, "total": 12, "stage": stage}
    cache.set(f"corpus-import-progress:{batch.pk}", progress)
    for headers in ({}, {"HTTP_HX_REQUEST": "true"}):  # the whole page and the polled fragment
        chinese = _page(personas, batch, "zh-hans", **headers)
        assert f"正在检查（试运行：不写入任何内容）：{CHINESE[stage]}…" in chinese
        assert f"Checking (a dry run: nothing is written): {stage}…" in _page(personas, batch, "en", **headers)
    ImportBatch.objects.filter(pk=batch.pk).update(confirmed_at="2026-01-01T00:00:00Z")
    assert f"正在发布：{CHINESE[stage]}…" in _page(personas, batch, "zh-hans")
    assert cache.get(f"corpus-import-progress:{batch.pk}") == progress, "the cache keeps the English name"


@pytest.mark.django_db
def test_a_stage_the_table_does_not_know_is_shown_as_it_is(personas):
    batch = ImportBatch.objects.create(filename="cases.jsonl", sha256="0" * 64, status="running")
    cache.set(f"corpus-import-progress:{batch.pk}", {"done": 0, "total": 0, "stage": "re-indexing"})
    assert "正在检查（试运行：不写入任何内容）：re-indexing…" in _page(personas, batch, "zh-hans")
