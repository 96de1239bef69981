"""The what-if's statistical strategy is built once per web process (apps/judging/services.py
statistical_strategy_shared): one query checks what it is built from, a change builds it again, and a
what-if with the shared strategy is the what-if a freshly built one gives. A web process may build it in
the background when it starts (LEXTRACE_WHATIF_PRELOAD)."""

import importlib
import threading
from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.corpus.models import Charge, ChecklistItem, Interpretation, SearchIndex
from apps.judging import services as judging
from apps.registry.models import ModelVersion
from tests.cases.conftest import judged_run, judging_corpus  # noqa: F401 - fixtures
from worker.agents.tools.whatif import Override, readjudicate

pytestmark = pytest.mark.django_db


def test_the_stamp_reads_the_tables_the_strategy_is_built_from():
    assert judging.STAMP_TABLES == tuple(m._meta.db_table for m in (ModelVersion, ChecklistItem, Interpretation, Charge,
                                                                    SearchIndex))
    for table in judging.STAMP_TABLES:
        assert f"FROM {table}" in judging._STAMP_SQL


def test_the_shared_strategy_is_built_once_and_again_when_its_inputs_change(judging_corpus):
    first = judging.statistical_strategy_shared()
    with CaptureQueriesContext(connection) as queries:
        assert judging.statistical_strategy_shared() is first
    assert len(queries.captured_queries) == 1, "one query checks the stamp"
    charge = Charge.objects.filter(official=True).first()
    Charge.objects.filter(pk=charge.pk).update(official=False)
    rebuilt = judging.statistical_strategy_shared()
    assert rebuilt is not first and charge.name not in rebuilt.statute_charges
    # a case judged by name uses it too: the statistical strategy is built once per process, not per case
    assert judging.strategy_build("statistical") is rebuilt


def test_a_what_if_with_the_shared_strategy_is_the_what_if_of_a_fresh_one(judged_run):
    from apps.graph.store import AgeGraphStore

    for result in judged_run.results.order_by("position"):
        article = next((a for a in result.bundle["audit"]["articles"] if a["passed"] and a["items"]), None)
        if article is None:
            continue
        overrides = [Override("item", f"{article['article_pk']}:{article['items'][0]['item_pk']}", False, "not shown")]
        for _ in range(2):  # the second time from the strategy's kept view of the facts
            shared = judging.judgment_whatif(bundle=result.bundle, overrides=overrides, strategy="statistical")
            fresh = readjudicate(result.bundle, overrides, strategy=judging.statistical_strategy(),
                                 graph=AgeGraphStore())
            assert _without_times(shared.to_dict()) == _without_times(fresh.to_dict())


def _without_times(bundle: dict) -> dict:
    return {**bundle, "costs": [{**c, "seconds": 0} for c in bundle["costs"]]}


def test_a_web_process_preloads_the_strategy_in_the_background(settings):
    settings.WHATIF_PRELOAD = False  # a first import here starts no real warm-up (it would race the next test's)
    import legalsite.wsgi

    started = []
    with mock.patch.object(threading.Thread, "start", lambda thread: started.append(thread._target)):
        settings.WHATIF_PRELOAD = True
        importlib.reload(legalsite.wsgi)
        settings.WHATIF_PRELOAD = False
        importlib.reload(legalsite.wsgi)
    assert [(t.__module__, t.__name__) for t in started] == [("legalsite.wsgi", "_warm_up")]


def test_the_warm_up_builds_the_strategy_compiles_the_templates_and_then_freezes_what_the_process_holds():
    import gc
    import importlib

    from django.template import engines
    from django.test import override_settings

    with override_settings(WHATIF_PRELOAD=False):  # importing the module starts no warm-up thread beside this one's
        legalsite_wsgi = importlib.import_module("legalsite.wsgi")

    order = []
    loader = engines["django"].engine.template_loaders[0]
    loader.reset()  # the cached loader forgets what earlier tests compiled
    with mock.patch.object(judging, "whatif_preload", lambda: order.append("strategy")), \
            mock.patch.object(gc, "freeze", lambda: order.append(("freeze", len(loader.get_template_cache)))):
        legalsite_wsgi._warm_up()
    assert order[0] == "strategy" and order[1][0] == "freeze"
    assert order[1][1] >= 50, "the project's templates were compiled before the freeze"


def test_the_preload_builds_the_strategy_and_a_failure_is_only_logged(caplog):
    calls = []

    def run():
        judging.whatif_preload()
        calls.append(connection.connection is None)  # the thread's connection is closed again

    with mock.patch.object(judging, "_tokenizer"), \
            mock.patch.object(judging, "statistical_strategy_shared", side_effect=RuntimeError("no database")):
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    assert calls == [True] and "not preloaded" in caplog.text
