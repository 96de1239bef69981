"""Admin pages that used to show English words to a Chinese reader.

The health page printed each component's code name and the English detail the checks write, and the
corpus pages printed the search indexes' targets and the import's follow-up outcome as they are stored.
Both are now translated when the page is rendered; /healthz and the stored import report keep English.
"""

import pytest
from django.utils import translation

from apps.core import health
from apps.corpus.models import ImportBatch
from apps.corpus.services.importing import corpus_import
from tests.cases.conftest import compiled_catalogs  # noqa: F401 - the fixture compiles locale/
from tests.corpus.conftest import jsonl, statute

pytestmark = pytest.mark.django_db

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}


def test_the_health_page_names_the_components_and_their_state_in_chinese(personas, compiled_catalogs):  # noqa: F811
    page = personas.client(personas.admin, **ZH).get("/health/").content.decode()
    for chinese in ("数据库", "数据库扩展", "消息代理", "工作进程", "大模型服务", "任务重投递", "可连接"):
        assert f"<td>{chinese}</td>" in page, chinese
    for english in ("<td>database</td>", "<td>broker</td>", "<td>redelivery</td>", "reachable", "worker(s) alive",
                    "none older than", "statistical strategy"):
        assert english not in page, english
    assert any(f">{label}</span>" in page for label in ("正常", "部分降级", "不可用"))
    assert not any(f">{status}</span>" in page for status in ("ok", "degraded", "down"))
    # English readers and machines still get the English names.
    english = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="en").get("/health/").content.decode()
    assert "<td>database</td>" in english and "<td>reachable</td>" in english
    assert personas.client(personas.admin, **ZH).get("/healthz").json()["checks"][2] == {
        "name": "broker", "ok": True, "detail": "reachable"}


@pytest.mark.parametrize("detail, chinese", [
    ("2 worker(s) alive", "2 个工作进程在线"),
    ("no heartbeat in 90 s", "90 秒内没有心跳"),
    ("3 unacknowledged beyond 3610 s (oldest 4000 s)", "3 个投递超过 3610 秒未确认（最久 4000 秒）"),
    ("none older than 3610 s", "没有超过 3610 秒未确认的投递"),
    ("missing: age, vector", "缺少：age, vector"),
    ("circuit half_open", "熔断器半开（试探调用）"),
    ("PostgreSQL 17", "PostgreSQL 17"),  # no pattern: shown as it is
    ("OperationalError", "OperationalError"),
])
def test_every_health_detail_reads_in_chinese_with_its_numbers(detail, chinese, compiled_catalogs):  # noqa: F811
    with translation.override("zh-hans"):
        assert health.detail_label(detail) == chinese
    with translation.override("en"):
        assert health.detail_label(detail) == detail


def test_every_health_detail_template_has_a_chinese_translation(compiled_catalogs):  # noqa: F811
    with translation.override("zh-hans"):
        templates = [row.template for row in health.detail_label.rows]
        missing = [text for text in templates if translation.gettext(text) == text]
    assert not missing, missing


def test_the_corpus_page_names_the_search_indexes_in_chinese(personas, compiled_catalogs):  # noqa: F811
    page = personas.client(personas.admin, **ZH).get("/corpus/imports/").content.decode()
    assert "检索索引 BM25 · 法条:" in page and "检索索引 稠密向量 · 判例:" in page
    assert "· articles:" not in page and "· precedents:" not in page and "检索索引 dense" not in page


def test_the_import_follow_up_reads_in_chinese_and_the_report_keeps_english(personas, compiled_catalogs):  # noqa: F811
    batch = corpus_import(data=jsonl(statute(264)), filename="statutes.jsonl")
    assert batch.status == ImportBatch.Status.PUBLISHED
    stored = {"state": "followed", "articles": {"bm25": "1 documents added or changed, 21 in all",
                                                "dense": "1 documents embedded, 0 removed"}}
    batch.report = {**batch.report, "follow_up": {"search": stored}}
    batch.save(update_fields=["report"])
    page = personas.client(personas.admin, **ZH).get(f"/corpus/imports/{batch.pk}/").content.decode()
    assert ("检索索引: 已更新; 法条 · BM25: 新增或修改 1 篇文档，共 21 篇; 法条 · 稠密向量: 新向量化 1 篇文档，移除 0 篇"
            in page)
    for english in ("followed", "documents added", "embedded", "articles:"):
        assert english not in page, english
    batch.report = {**batch.report, "follow_up": {"search": {
        "state": "busy", "detail": "another search index build was running; check the freshness panel"}}}
    batch.save(update_fields=["report"])
    page = personas.client(personas.admin, **ZH).get(f"/corpus/imports/{batch.pk}/").content.decode()
    assert "检索索引: 未更新 — 另一次检索索引构建正在进行" in page
    batch.refresh_from_db()
    assert batch.report["follow_up"]["search"]["state"] == "busy", "the stored report is unchanged"


def test_the_admin_index_names_the_accounts_app_in_chinese(personas, compiled_catalogs):  # noqa: F811
    page = personas.client(personas.admin, **ZH).get("/admin/").content.decode()
    assert "账户" in page and ">Accounts<" not in page
