"""G11 (tier C): a reindex killed halfway. The search keeps being served by the previous
indexes while the build is stuck and after it is killed; every active index is complete
(its vector count equals its document count); the next build discards what the dead one
left behind; and two builds never run at once."""

import os
import signal
import subprocess
import sys

import psycopg
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection

from apps.corpus.models import DenseVector, SearchIndex
from apps.corpus.search_service import bm25_search, dense_search
from tests.cases.conftest import ensure_judging_corpus
from tests.conftest import ROOT, wait_for

pytestmark = [pytest.mark.c, pytest.mark.slow]
QUERY = "被告人盗窃他人财物，数额较大"


def _active_dense() -> set[int]:
    return set(SearchIndex.objects.filter(active=True, method="dense", target__in=["articles", "precedents"])
               .values_list("pk", flat=True))


def _serving():
    return {t: (bm25_search(target=t, query=QUERY, k=5), dense_search(target=t, query=QUERY, k=5))
            for t in ("articles", "precedents")}


def _assert_every_active_index_is_complete():
    active = list(SearchIndex.objects.filter(active=True, target__in=["articles", "precedents"]))
    assert sorted((i.target, i.method) for i in active) == [
        ("articles", "bm25"), ("articles", "dense"), ("precedents", "bm25"), ("precedents", "dense")]
    for index in active:
        assert index.status == SearchIndex.Status.READY and index.documents > 0
        if index.method == "dense":
            assert DenseVector.objects.filter(index=index).count() == index.documents, index


def _connect():
    db = connection.settings_dict
    return psycopg.connect(host=db["HOST"], port=db["PORT"], user=db["USER"], password=db["PASSWORD"],
                           dbname=db["NAME"])


@pytest.mark.django_db(transaction=True)
def test_g11_a_reindex_killed_midway_leaves_the_previous_indexes_serving(tmp_path):
    ensure_judging_corpus()
    before = _serving()
    assert all(bm25 and dense for bm25, dense in before.values()), {t: (len(b), len(d)) for t, (b, d) in before.items()}
    dense_before = _active_dense()
    last_pk = SearchIndex.objects.order_by("-pk").values_list("pk", flat=True).first()

    blocker = _connect()
    # Lets searches read the vectors but holds the new build at its first insert of vectors.
    blocker.execute("LOCK TABLE corpus_densevector IN SHARE MODE")
    env = dict(os.environ, DB_NAME=connection.settings_dict["NAME"], DJANGO_SETTINGS_MODULE="legalsite.settings_test")
    log = open(tmp_path / "build.log", "w")  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen([sys.executable, "manage.py", "build_search_indexes"], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        stuck = wait_for(lambda: SearchIndex.objects.filter(pk__gt=last_pk, method="dense",
                                                           status=SearchIndex.Status.BUILDING).first(),
                         timeout=180, interval=0.3)
        assert stuck, (tmp_path / "build.log").read_text()
        # Midway: a new dense index exists but is not serving; search answers as before.
        assert not stuck.active and proc.poll() is None
        assert _serving() == before
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        blocker.rollback()
        blocker.close()
        log.close()

    # After the kill: the previous dense indexes still serve (BM25 ones finished before the kill may
    # have been switched in, complete); the abandoned one is left building, never active.
    assert _active_dense() == dense_before
    _assert_every_active_index_is_complete()
    assert _serving() == before
    stuck.refresh_from_db()
    assert stuck.status == SearchIndex.Status.BUILDING and not stuck.active

    # The next build discards the remains and switches complete indexes in.
    call_command("build_search_indexes", verbosity=0)
    stuck.refresh_from_db()
    assert stuck.status == SearchIndex.Status.FAILED and "abandoned" in stuck.params["failure"]
    assert not DenseVector.objects.filter(index=stuck).exists()
    _assert_every_active_index_is_complete()
    assert not _active_dense() & dense_before
    assert _serving()["articles"][0]  # still answering


@pytest.mark.django_db(transaction=True)
def test_a_second_build_while_one_runs_is_refused():
    ensure_judging_corpus()
    holder = _connect()
    holder.autocommit = True
    try:
        holder.execute("SELECT pg_advisory_lock(hashtext('lextrace:search-index-build'))")
        with pytest.raises(CommandError, match="another search index build is running"):
            call_command("build_search_indexes", verbosity=0)
    finally:
        holder.close()  # the server releases the lock with the session
    assert settings.DATABASES["default"]["NAME"]
